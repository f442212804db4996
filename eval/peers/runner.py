"""Score one scenario through the public pipeline API: a fresh store, two recalls.

1. A fresh data directory and an in-process ``Runtime`` with a ``FakeClock``; the
   scenario's memories are restored with ``import_memories`` (see ``scenarios.py``).
2. Surface: one passive recall at the configured k and token budget, exactly what the
   plugin would inject. Its non-always-on memories are the relevance tier; always-on
   core/pinned memories are the core slot (never scored, as upstream).
3. Ranking: the same store reopened with the relevance gate and the near-duplicate
   suppression switched off (theta -inf, tau_sim above any cosine, no core slots), recall
   k=50 with a budget of 8192 tokens: the full ranking of every eligible memory, which is
   what upstream's Recall@K and MRR are defined on ("before any keyword gating"). The
   filters (scope, trust state, TTL) still apply: they are not a ranking choice.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from actors.clock import FakeClock
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.retrieval import estimate_tokens
from engine.settings import Settings
from eval.peers.metrics import ScenarioResult
from eval.peers.scenarios import Scenario, memories_by_project

NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z, the FakeClock's "now" for every scenario
RANK_K = 50
RANK_BUDGET_TOKENS = 8192


def ranking_settings(settings: Settings) -> Settings:
    """The settings with the gate, the suppression and the core slots off (full ranking)."""
    r = settings.retrieval.model_copy(update={"theta": -1e9, "tau_sim": 2.0, "core_slots": 0})
    return settings.model_copy(update={"retrieval": r})


def _runtime(data_dir: Path, settings: Settings) -> Runtime:
    return Runtime(data_dir, settings, use_ray=False, clock=FakeClock(NOW_MS))


def run_scenario(scenario: Scenario, settings: Settings) -> ScenarioResult:
    """Build the scenario's store, recall, and report the ranking and the injected block."""
    with tempfile.TemporaryDirectory(prefix="dynmem-peers-") as tmp:
        data_dir = Path(tmp)
        project = scenario.project
        rt = _runtime(data_dir, settings)
        try:
            pipe = Pipeline(rt)
            for owner, mems in memories_by_project(scenario, now_ms=NOW_MS, settings=settings).items():
                pipe.import_memories(owner, mems, request_id=f"peers:{scenario.id}:{owner}")
            shown = pipe.recall(RecallRequest(project=project, query=scenario.query, passive=True, for_model=True))
        finally:
            rt.shutdown()
        # The store is reopened read-only in effect (passive recall writes nothing).
        rt = _runtime(data_dir, ranking_settings(settings))
        try:
            ranked = Pipeline(rt).recall(RecallRequest(project=project, query=scenario.query, k=RANK_K,
                                                       budget_tokens=RANK_BUDGET_TOKENS, passive=True, for_model=True))
        finally:
            rt.shutdown()
    relevance = () if shown.abstained else tuple(m.id for m in shown.memories if not m.always_on)
    core = tuple(m.id for m in shown.memories if m.always_on)
    marked = tuple(m.id for m in shown.memories if m.state == "contested" and "[contested" in shown.context)
    texts = {m.id: m.text for m in scenario.memories}
    return ScenarioResult(
        id=scenario.id, category=scenario.category, section=scenario.section, tags=scenario.tags,
        negative=scenario.negative, expected=scenario.expected, ranking=tuple(m.id for m in ranked.memories),
        surfaced=relevance, core=core, contested_marked=marked,
        overhead_tokens=float(estimate_tokens(shown.context)) if shown.context else 0.0,
        memory_chars=sum(len(m.text) for m in shown.memories), query=scenario.query, texts=texts,
        terms={m.id: {"cos": m.why.cos, "lex": m.why.lex, "gate": m.why.gate, "score": m.why.score}
               for m in ranked.memories},
    )


def run_scenarios(scenarios: list[Scenario], settings: Settings, parallel: int = 1,
                  address: str | None = None, progress: bool = False) -> list[ScenarioResult]:
    """Every scenario, serially or as Ray tasks (same results, in input order)."""
    from eval.fanout import fan_out, ray_for

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(scenarios), desc="peers", unit="scenario", leave=False)
    try:
        with ray_for(parallel, address):
            return fan_out(run_scenario, scenarios, settings, parallel=parallel,
                           progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
