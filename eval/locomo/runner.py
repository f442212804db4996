"""Replay one LoCoMo conversation through the pipeline and rank evidence turns per question.

For each conversation: a fresh data directory, an in-process ``Runtime`` (``FakeClock`` set
one day after the last session), every dialogue turn observed as one unit
(``user`` = "<speaker>: <text>", ``assistant`` = "", ``request_id`` = dia_id, ``ts`` = the
session's date plus one second per turn), then ``drain``. Each question is recalled
passively (k 50, budget 8192 tokens: as deep as the API goes) and every recalled memory is
mapped to the dialogue ids of its source units (``ObserveAck.unit_id`` -> dia_id), in rank
order, duplicates dropped: that list is the system's evidence ranking.

Two rankings are recorded besides:
- ``dynmem_nogate``: the same store, relevance gate and suppression off (diagnostic: what
  the extracted memories could give if the gate let everything through);
- ``bm25``: Okapi BM25 (``engine.lexical.BM25Index``) straight over the raw turns.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from actors.clock import FakeClock
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.lexical import BM25Index
from engine.models import TurnIn
from engine.retrieval import Recalled
from engine.settings import Settings
from eval.locomo.data import Conversation
from eval.peers.runner import ranking_settings

DAY_MS = 86_400_000
DEPTH = 50  # dialogue ids kept per ranking (Recall@25 needs 25)
SYSTEMS = ("dynmem", "dynmem_nogate", "bm25")


class QuestionResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    question: str
    category: int
    evidence: tuple[str, ...]
    rankings: dict[str, tuple[str, ...]]


class ConversationResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    sample_id: str
    turns: int
    memories: int
    servable_memories: int
    cited_turns: int
    cited: tuple[str, ...] = ()  # dialogue ids cited by any memory (any state): the ceiling of recall
    questions: tuple[QuestionResult, ...]
    seconds: dict[str, float]


def _dia_ranking(recalled: Sequence[Recalled], sources: dict[str, tuple[str, ...]],
                 unit_to_dia: dict[str, str]) -> tuple[str, ...]:
    """Dialogue ids cited by the recalled memories, in rank order, without duplicates."""
    out: dict[str, None] = {}
    for m in recalled:
        for uid in sources.get(m.id, ()):
            dia = unit_to_dia.get(uid)
            if dia is not None:
                out.setdefault(dia, None)
    return tuple(out)[:DEPTH]


def run_conversation(conv: Conversation, settings: Settings) -> ConversationResult:
    """Replay, drain and query one conversation; returns rankings and timings."""
    project = f"locomo-{conv.sample_id}"
    now = max(t.ts_ms for t in conv.turns) + DAY_MS
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="dynmem-locomo-") as tmp:
        data_dir = Path(tmp)
        rt = Runtime(data_dir, settings, use_ray=False, clock=FakeClock(now))
        try:
            pipe = Pipeline(rt)
            t0 = time.perf_counter()
            acks = pipe.observe([TurnIn(project=project, session=f"session_{t.session}", user=t.content, assistant="",
                                        ts_ms=t.ts_ms, request_id=t.dia_id) for t in conv.turns])
            seconds["observe"] = time.perf_counter() - t0
            unit_to_dia = {a.unit_id: t.dia_id for a, t in zip(acks, conv.turns, strict=True)}
            t0 = time.perf_counter()
            pipe.drain(project)
            seconds["drain"] = time.perf_counter() - t0
            # Every memory, all states: the project's and any the extractor put in the global scope.
            all_mems = [*pipe.export(project), *rt.global_engine.export()]
            sources = {m.id: m.source_unit_ids for m in all_mems}
            cited = {unit_to_dia[u] for m in all_mems for u in m.source_unit_ids if u in unit_to_dia}
            t0 = time.perf_counter()
            gated = [_dia_ranking(pipe.recall(RecallRequest(project=project, query=q.question, k=DEPTH,
                                                            budget_tokens=8192, passive=True)).memories, sources, unit_to_dia)
                     for q in conv.questions]
            seconds["recall"] = time.perf_counter() - t0
        finally:
            rt.shutdown()
        rt = Runtime(data_dir, ranking_settings(settings), use_ray=False, clock=FakeClock(now))
        try:
            pipe = Pipeline(rt)
            nogate = [_dia_ranking(pipe.recall(RecallRequest(project=project, query=q.question, k=DEPTH,
                                                             budget_tokens=8192, passive=True)).memories, sources, unit_to_dia)
                      for q in conv.questions]
        finally:
            rt.shutdown()
    t0 = time.perf_counter()
    bm25 = BM25Index()
    for t in conv.turns:
        bm25.add(t.dia_id, t.content)
    lexical = [tuple(bm25.search(q.question, limit=DEPTH)) for q in conv.questions]
    seconds["bm25"] = time.perf_counter() - t0
    questions = tuple(QuestionResult(question=q.question, category=q.category, evidence=q.evidence,
                                     rankings={"dynmem": g, "dynmem_nogate": n, "bm25": b})
                      for q, g, n, b in zip(conv.questions, gated, nogate, lexical, strict=True))
    return ConversationResult(sample_id=conv.sample_id, turns=len(conv.turns), memories=len(all_mems),
                              servable_memories=sum(1 for m in all_mems if m.servable), cited_turns=len(cited),
                              cited=tuple(sorted(cited)),
                              questions=questions, seconds={k: round(v, 3) for k, v in seconds.items()})


def run_conversations(convs: list[Conversation], settings: Settings, parallel: int = 1,
                      progress: bool = False) -> list[ConversationResult]:
    from eval.fanout import fan_out, ray_for

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(convs), desc="locomo", unit="conversation", leave=False)
    try:
        with ray_for(parallel):
            return fan_out(run_conversation, convs, settings, parallel=parallel,
                           progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
