"""Run one stream through a system and collect the injected block of every probe.

``dynmem`` at the ``pipeline`` level sends raw turns through ``observe`` + ``drain`` (the
configured extractor, the rules client by default); at the ``engine`` level each fact is
given directly with ``remember(key=, belief=)``, the FakeClock advanced before each one so
that valid times follow the stream. ``no-supersede`` is the engine level with supersession
broken from outside the engine: every statement gets a unique key and tensions are never
adjudicated, so nothing is ever superseded.

Each stream gets its own data directory and in-process Runtime (no Ray), so streams are
independent and can run in any order or in parallel.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from engine.errors import NotFound
from engine.models import TurnIn
from eval.tide.baselines import RAW_SYSTEMS, oracle_block
from eval.tide.generator import Event, Stream
from eval.tide.score import BUDGETS

SYSTEMS = ("dynmem", "no-supersede", "none", "oracle", "recency", "bm25")
STEP_MS = 10 * 60 * 1000  # ten minutes between events
SESSION_TURNS = 15  # a new session every fifteen turns of a project

Blocks = list[dict[int, str]]  # per probe (in stream order): budget -> injected block
#: Key of a probe's entry that holds, for ``dynmem`` and ``no-supersede``, the texts of every servable memory of the probe's
#: project when it was asked (one per line): where a missed gold value stands (never extracted, or
#: extracted and not injected). Not a budget; scoring reads only ``BUDGETS``.
SERVABLE = 0


def run_stream(stream: Stream, system: str, level: str, config: str | None = None,
               data_root: str | None = None) -> Blocks:
    """The injected block of each of ``stream``'s probes at each budget."""
    if system == "none":
        return [{b: "" for b in BUDGETS} for _ in stream.probes]
    if system == "oracle":
        return [{b: oracle_block(p) for b in BUDGETS} for p in stream.probes]
    if system in RAW_SYSTEMS:
        fn = RAW_SYSTEMS[system]
        return [{b: fn(stream, p, b) for b in BUDGETS} for p in stream.probes]
    if system == "no-supersede" and level != "engine":
        raise ValueError("no-supersede is defined at the engine level only (use --level engine)")
    if system not in ("dynmem", "no-supersede"):
        raise ValueError(f"unknown system {system!r}; one of {', '.join(SYSTEMS)}")
    settings = load_settings(Path(config) if config else None)
    with tempfile.TemporaryDirectory(prefix="tide-", dir=data_root) as tmp:
        clock = FakeClock()
        rt = Runtime(Path(tmp), settings, use_ray=False, clock=clock)
        try:
            pipe = Pipeline(rt)
            if level == "pipeline":
                _feed_turns(pipe, clock, stream)
            else:
                _feed_facts(pipe, clock, stream, supersede=system == "dynmem")
            out: Blocks = []
            servable: dict[str, str] = {}
            for p in stream.probes:
                if p.project not in servable:
                    try:
                        servable[p.project] = "\n".join(m.text for m in pipe.memories(p.project) if m.servable)
                    except NotFound:  # a project the stream never wrote to holds nothing
                        servable[p.project] = ""
                blocks = {b: pipe.recall(RecallRequest(project=p.project, query=p.question, budget_tokens=b,
                                                       passive=True)).context for b in BUDGETS}
                out.append({**blocks, SERVABLE: servable[p.project]})
            return out
        finally:
            rt.shutdown()


def _forget(pipe: Pipeline, project: str, match: str, purge: bool, request_id: str) -> None:
    try:
        pipe.forget(ForgetRequest(project=project, match=match, purge=purge, request_id=request_id))
    except NotFound:  # nothing servable holds it (never extracted, or already retired)
        pass


def _feed_turns(pipe: Pipeline, clock: FakeClock, stream: Stream) -> None:
    counts: dict[str, int] = {}
    for i, ev in enumerate(stream.events):
        clock.advance(STEP_MS)
        if ev.kind == "forget":
            pipe.drain(ev.project)
            _forget(pipe, ev.project, ev.match, ev.purge, f"tide-{stream.id}-{i}")
            continue
        n = counts.get(ev.project, 0)
        counts[ev.project] = n + 1
        pipe.observe([TurnIn(project=ev.project, session=f"s-{n // SESSION_TURNS + 1:02d}", user=ev.user,
                             assistant=ev.assistant, ts_ms=clock.now_ms(), request_id=f"tide-{stream.id}-{i}")])
        pipe.drain(ev.project)
    for project in stream.projects:
        pipe.drain(project)


def _feed_facts(pipe: Pipeline, clock: FakeClock, stream: Stream, *, supersede: bool) -> None:
    for i, ev in enumerate(stream.events):
        clock.advance(STEP_MS)  # EngineService.remember stamps valid_from_ms with clock.now_ms()
        rid = f"tide-{stream.id}-{i}"
        if ev.kind == "forget":
            _forget(pipe, ev.project, ev.match, ev.purge, rid)
        elif ev.fact is not None:
            _apply_fact(pipe, ev, i, rid, supersede)
    if supersede:  # adjudicate open tensions; the broken variant leaves them contested
        for project in stream.projects:
            pipe.drain(project)


def _apply_fact(pipe: Pipeline, ev: Event, i: int, rid: str, supersede: bool) -> None:
    fact = ev.fact
    assert fact is not None
    if fact.op == "retract":
        _forget(pipe, ev.project, fact.text, False, rid)
        return
    key = fact.key if supersede else f"{fact.key} #{i}"
    pipe.remember(RememberRequest(project=ev.project, text=fact.text, key=key, belief=fact.belief, request_id=rid))
