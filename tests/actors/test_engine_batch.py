"""Batch ingest (issue 12): ``EngineService.ingest_many`` leaves exactly what one ``ingest`` per
job leaves, in one store transaction; a job that fails alone leaves nothing; the index call that
carries a batch's changes and the next job's shortlists is the calls it replaces."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.engine_actor import EngineService
from actors.index_actor import IndexChange, IndexService
from actors.llm.rules import RulesClient
from actors.replay import DEMO_HISTORY, read_lines
from actors.wire import IngestJob
from engine.errors import IndexError_
from engine.history import parse_history
from engine.models import Unit
from engine.settings import EmbedderSettings

PROJECT = "shop-api"
NOW_MS = 1_796_000_000_000


def _settings() -> Any:
    base = load_settings()
    return base.model_copy(update={"embedder": base.embedder.model_copy(update={"name": "hash"})})


def _jobs() -> list[IngestJob]:
    """One job per turn of the bundled history, with the rules extractor's candidates."""
    turns, _ = parse_history(read_lines(Path(str(DEMO_HISTORY))), now_ms=NOW_MS)
    rules = RulesClient()
    out = []
    for i, t in enumerate(turns, start=1):
        unit = Unit(id=f"u{i}", project=PROJECT, session=t.session, turn=i, ts_ms=t.ts_ms or NOW_MS - 1000 + i,
                    user=t.user, assistant=t.assistant, request_id=f"r{i}")
        out.append(IngestJob(receipt=f"extract:u{i}", candidates=tuple(rules.extract([unit], f"project:{PROJECT}"))))
    return out


class FailingIndex:
    """The real index service, except that embedding a text with ``marker`` fails (an index outage
    met by one job of a batch)."""

    def __init__(self, inner: IndexService, marker: str) -> None:
        self.inner = inner
        self.marker = marker

    def embed(self, texts: Sequence[str], local_only: Sequence[bool] | None = None) -> np.ndarray:
        if any(self.marker in t for t in texts):
            raise IndexError_("the embedder is down")
        return self.inner.embed(texts, local_only)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _engine(folder: Path, index: Any = None) -> EngineService:
    settings = _settings()
    return EngineService(PROJECT, folder, settings, index or IndexService(settings.embedder), FakeClock(NOW_MS))


def _state(engine: EngineService) -> tuple[Any, ...]:
    audit = [(r.event.memory_id, r.event.action, r.event.to_state, r.event.reason) for r in engine.audit(100_000)]
    ids = [m.id for m in engine.export() if m.servable]
    hits = engine.index.search(engine.index.embed(["which port does the api listen on"])[0], [engine.scope], 10)
    return [m.model_dump() for m in engine.export()], audit, engine.store.step(), ids, hits


def _vectors(index: IndexService, jobs: Sequence[IngestJob]) -> np.ndarray:
    return index.embed([c.text for j in jobs for c in j.candidates])


def test_a_batch_ingest_leaves_what_one_ingest_per_job_leaves(tmp_path: Path) -> None:
    jobs = _jobs()
    assert sum(len(j.candidates) for j in jobs) > 40
    one, many = _engine(tmp_path / "one"), _engine(tmp_path / "many")
    for job in jobs:
        vecs = _vectors(one.index, [job]) if job.candidates else None
        one.ingest(job.receipt, list(job.candidates), vecs, job.units)
    for start in range(0, len(jobs), 16):
        chunk = jobs[start:start + 16]
        outcomes = many.ingest_many(chunk, _vectors(many.index, chunk))
        assert all(o.report is not None and o.report.applied for o in outcomes)
    assert _state(many) == _state(one)
    assert len(_state(one)[0]) > 20
    # exactly once: the same batch again is all duplicates and changes nothing
    before = _state(many)
    again = many.ingest_many(jobs[:16], _vectors(many.index, jobs[:16]))
    assert all(o.report is not None and o.report.outcomes == {"duplicate_job": 1} for o in again)
    assert _state(many) == before
    # and a reopened engine reads back what the batches wrote
    many.close()
    assert _state(_engine(tmp_path / "many"))[:3] == before[:3]


def test_a_batch_in_time_slices_leaves_what_one_call_leaves(tmp_path: Path) -> None:
    jobs = _jobs()[:40]
    whole, sliced = _engine(tmp_path / "whole"), _engine(tmp_path / "sliced")
    assert all(o.report is not None for o in whole.ingest_many(jobs, _vectors(whole.index, jobs)))
    vectors = _vectors(sliced.index, jobs)
    done: list[Any] = []
    calls = 0
    while len(done) < len(jobs):
        offset = sum(len(j.candidates) for j in jobs[:len(done)])
        part = sliced.ingest_many(jobs[len(done):], vectors[offset:], budget_s=0.0)  # one job per call
        assert len(part) == 1
        done.extend(part)
        calls += 1
    assert calls == len(jobs) and _state(sliced) == _state(whole)


def test_a_job_that_fails_in_a_batch_leaves_nothing_and_the_others_go_on(tmp_path: Path) -> None:
    jobs = [j for j in _jobs() if j.candidates][:6]
    marker = "zz-embedder-outage"
    bad = jobs[2].model_copy(update={"candidates": tuple(
        c.model_copy(update={"text": f"{c.text} {marker}"}) for c in jobs[2].candidates)})
    settings = _settings()
    failing = _engine(tmp_path / "failing", FailingIndex(IndexService(settings.embedder), marker))
    outcomes = failing.ingest_many([*jobs[:2], bad, *jobs[3:]])  # vectors None: each job is embedded here
    assert [o.report is None for o in outcomes] == [False, False, True, False, False, False]
    assert outcomes[2].code == IndexError_.code and "down" in outcomes[2].error
    assert not failing.store.has_receipt(bad.receipt)
    assert all(failing.store.has_receipt(j.receipt) for j in [*jobs[:2], *jobs[3:]])
    # positive control: the same as ingesting the five good jobs alone, the failed one never seen
    alone = _engine(tmp_path / "alone")
    assert all(o.report is not None for o in alone.ingest_many([*jobs[:2], *jobs[3:]]))
    assert _state(failing) == _state(alone)


def test_an_update_search_is_the_removes_upserts_and_searches_it_replaces() -> None:
    one, many = IndexService(EmbedderSettings(name="hash")), IndexService(EmbedderSettings(name="hash"))
    texts = ["port 8080", "port 9090", "use pnpm", "make test", "port 7070 now"]
    vecs = one.embed(texts)
    ids = [f"m{i}" for i in range(len(texts))]
    for index in (one, many):
        index.upsert("project:p", ids[:3], vecs[:3])
    changes = [IndexChange(remove=("m0",), ids=("m3",), vectors=vecs[3:4]),
               IndexChange(remove=("m3",), ids=("m4", "m1"), vectors=vecs[[4, 1]])]
    queries = one.embed(["which port", "package manager"])
    for ch in changes:
        one.remove(list(ch.remove))
        assert ch.vectors is not None
        one.upsert("project:p", list(ch.ids), ch.vectors)
    expected = [one.search(q, ["project:p"], 3) for q in queries]
    got = many.update_search("project:p", changes, queries, [["project:p"], ["project:p"]], 3)
    assert got == expected and {h[0] for h in got[0]} == {"m1", "m2", "m4"}
    with pytest.raises(Exception, match="scope lists"):
        many.update_search("project:p", [], queries, [["project:p"]], 3)

