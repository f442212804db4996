"""Tests for actors.store.memory_store: exactly-once effects, append-only audit, purge, backup."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from actors.store.memory_store import MemoryStore, Review, Step
from engine.effects import Effects, JobRequest
from engine.errors import Conflict, DataDirError, InvalidInput, NotFound, StoreError
from engine.models import AuditEvent, Memory, Origin, Pool, Tension, TrustState

SCOPE = "project:p1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    s = MemoryStore(tmp_path / "memory.sqlite")
    yield s
    s.close()


def memory(mid: str, text: str = "the api server listens on port 9090", **kw: Any) -> Memory:
    fields: dict[str, Any] = dict(
        id=mid,
        scope=SCOPE,
        text=text,
        key="api server port",
        belief="9090",
        fingerprint=f"fp-{mid}",
        value=0.5,
        source_unit_ids=("u1", "u2"),
        valid_from_ms=10,
        last_evidence_ms=10,
        recorded_at_ms=20,
    )
    fields.update(kw)
    return Memory(**fields)


def event(mid: str, action: str = "create", at_ms: int = 20, **kw: Any) -> AuditEvent:
    return AuditEvent(
        memory_id=mid, action=action, actor=Origin.EXTRACTOR, reason="extracted",
        evidence=("u1",), at_ms=at_ms, to_state="active", **kw,
    )


def tension(tid: str, a: str, b: str, **kw: Any) -> Tension:
    return Tension(id=tid, scope=SCOPE, a_id=a, b_id=b, reason="key", created_at_ms=30, **kw)


def vec(*xs: float) -> np.ndarray:
    return np.asarray(xs, dtype=np.float32)


def _file_bytes(path: Path) -> bytes:
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_memory_table_has_one_column_per_model_field(store: MemoryStore) -> None:
    with store._read("schema") as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
    assert columns == list(Memory.model_fields)


def test_apply_writes_everything_in_one_step(store: MemoryStore) -> None:
    m1, m2 = memory("m1"), memory("m2", "the api server listens on port 8080", belief="8080",
                                  negated=True, valid_to_ms=99, superseded_by="m1")
    effects = Effects(
        memories=(m1, m2),
        audit=(event("m1"), event("m2", detail="first seen")),
        tensions=(tension("t1", "m1", "m2", cosine=0.9),),
        jobs=(JobRequest(kind="adjudicate", key="adjudicate:t1", payload='{"tension":"t1"}'),),
        index_add=("m1", "m2"),
        receipt="ingest:u1",
        step=3,
    )
    assert store.apply(effects, {"m1": vec(1, 0, 0), "m2": vec(0, 1, 0)}, now_ms=40, result="ok")
    assert store.load_memories() == [m1, m2]
    assert store.memory("m2") == m2
    assert store.audit_for("m2") == [event("m2", detail="first seen")]
    assert store.load_tensions() == [tension("t1", "m1", "m2", cosine=0.9)]
    assert [j.key for j in store.list_jobs(kind="adjudicate")] == ["adjudicate:t1"]
    got = store.vectors()
    assert set(got) == {"m1", "m2"} and got["m1"].dtype == np.float32
    np.testing.assert_array_equal(got["m2"], vec(0, 1, 0))
    assert store.vectors(["m2", "nope"]).keys() == {"m2"}
    assert store.step() == 3
    assert store.has_receipt("ingest:u1") and store.receipt("ingest:u1") == "ok"
    assert store.receipt("other") is None


def test_same_receipt_twice_is_a_no_op(store: MemoryStore) -> None:
    first = Effects(memories=(memory("m1"),), audit=(event("m1"),), receipt="r1", step=1)
    assert store.apply(first, {"m1": vec(1, 0)}, now_ms=1, result="first")
    replay = Effects(
        memories=(memory("m1", value=0.9), memory("m9")),
        audit=(event("m1", "confirm"),),
        jobs=(JobRequest(kind="repair", key="repair:x", payload="{}"),),
        receipt="r1",
        step=2,
    )
    assert store.apply(replay, {"m1": vec(0, 1)}, now_ms=2) is False
    assert store.load_memories() == [memory("m1")]
    assert [e.action for e in store.audit_for("m1")] == ["create"]
    assert store.job_counts() == {} and store.step() == 1 and store.receipt("r1") == "first"
    np.testing.assert_array_equal(store.vectors()["m1"], vec(1, 0))
    # positive control: a new receipt is applied
    assert store.apply(Effects(audit=(event("m1", "confirm"),), receipt="r2"), {}, now_ms=3)
    assert [e.action for e in store.audit_for("m1")] == ["create", "confirm"]


def test_effects_without_receipt_always_apply(store: MemoryStore) -> None:
    assert store.apply(Effects(audit=(event("m1"),)), {}, 1)
    assert store.apply(Effects(audit=(event("m1"),)), {}, 2)
    assert len(store.audit_for("m1")) == 2


def test_failed_apply_writes_nothing(store: MemoryStore) -> None:
    bad = Effects(
        memories=(memory("m1"),),
        audit=(event("m1"),),
        tensions=(tension("t1", "m1", "ghost"),),  # ghost is no memory: foreign key fails
        receipt="r1",
        step=5,
    )
    with pytest.raises(StoreError):
        store.apply(bad, {"m1": vec(1.0)}, now_ms=1)
    assert store.load_memories() == [] and store.audit(10) == []
    assert not store.has_receipt("r1") and store.step() == 0 and store.vectors() == {}


def test_bad_vectors_are_invalid_input(store: MemoryStore) -> None:
    for bad in (np.zeros((2, 2), dtype=np.float32), vec(), vec(1.0, float("nan"))):
        with pytest.raises(InvalidInput):
            store.apply(Effects(memories=(memory("m1"),)), {"m1": bad}, 1)
    assert store.load_memories() == []


def test_audit_rows_are_only_appended(store: MemoryStore) -> None:
    store.apply(Effects(memories=(memory("m1"),), audit=(event("m1"),), receipt="a"), {}, 1)
    snapshot = store.audit(100)
    store.apply(
        Effects(
            memories=(memory("m1", state=TrustState.SUPERSEDED, pool=Pool.A),),
            audit=(event("m1", "supersede", at_ms=50),),
            receipt="b",
        ),
        {},
        2,
    )
    after = store.audit(100)
    assert after[: len(snapshot)] == snapshot
    assert [r.id for r in after] == sorted(r.id for r in after) and len(after) == 2
    assert store.audit(100, since_id=snapshot[-1].id) == after[1:]
    with store._read("raw") as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM audit")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE audit SET reason = 'rewritten'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE audit SET detail = 'edited'")
    assert store.audit(100) == after


def test_purged_memory_leaves_no_text_embedding_or_audit_detail(
    store: MemoryStore, tmp_path: Path
) -> None:
    phrase = "zanzibar-memory-codeword"
    path = tmp_path / "memory.sqlite"
    store.apply(
        Effects(
            memories=(memory("m1", f"deploys go through {phrase}"), memory("m2")),
            audit=(event("m1", detail=f"from text: {phrase}"), event("m2", detail="kept")),
            receipt="create",
        ),
        {"m1": vec(1, 2), "m2": vec(3, 4)},
        1,
    )
    assert phrase.encode() in _file_bytes(path)  # positive control
    purged = memory("m1", "[purged]", key="", belief="", state=TrustState.RETRACTED, purged=True)
    store.apply(
        Effects(memories=(purged,), audit=(event("m1", "purge", detail="[purged] by owner"),),
                receipt="purge"),
        {"m1": vec(9, 9)},  # a vector for a purged memory is not stored
        2,
    )
    assert phrase.encode() not in _file_bytes(path)
    assert store.vectors().keys() == {"m2"}
    assert [e.detail for e in store.audit_for("m1")] == ["[purged]", "[purged] by owner"]
    assert store.audit_for("m2")[0].detail == "kept"
    assert store.memory("m1").purged


def test_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    effects = Effects(
        memories=(memory("m1"),), audit=(event("m1"),), tensions=(tension("t1", "m1", "m1"),),
        receipt="r1", step=7,
    )
    with MemoryStore(path) as s:
        s.apply(effects, {"m1": vec(0.5, 0.25)}, 1)
        s.add_review(Review(id="rv1", tension_id="t1", scope=SCOPE, created_ms=1))
    with MemoryStore(path) as s:
        assert s.load_memories() == [memory("m1")]
        assert s.audit_for("m1") == [event("m1")]
        assert s.load_tensions(open_only=False) == [tension("t1", "m1", "m1")]
        assert s.step() == 7 and s.has_receipt("r1")
        np.testing.assert_array_equal(s.vectors()["m1"], vec(0.5, 0.25))
        assert [r.id for r in s.reviews()] == ["rv1"]
        assert s.apply(effects, {}, 2) is False


def test_load_memories_by_scope_and_tensions_by_status(store: MemoryStore) -> None:
    g = memory("g1", scope="global")
    decided = tension("t2", "m1", "g1", status="decided", why="same")
    store.apply(Effects(memories=(memory("m1"), g), tensions=(tension("t1", "m1", "g1"), decided)),
                {}, 1)
    assert store.load_memories(["global"]) == [g]
    assert [t.id for t in store.load_tensions()] == ["t1"]
    assert [t.id for t in store.load_tensions(open_only=False)] == ["t1", "t2"]
    with pytest.raises(NotFound):
        store.memory("nope")


def test_reviews_crud(store: MemoryStore) -> None:
    review = Review(id="rv1", tension_id="t1", scope=SCOPE, created_ms=5)
    store.add_review(review)
    with pytest.raises(Conflict):
        store.add_review(review)
    assert store.reviews("open") == [review] and store.reviews("decided") == []
    decided = store.decide_review("rv1", "keep a", "human", "a is newer", now_ms=9)
    assert (decided.status, decided.decision, decided.decided_by, decided.decided_ms) == (
        "decided", "keep a", "human", 9
    )
    assert store.reviews("open") == [] and store.reviews(None) == [decided]
    with pytest.raises(Conflict, match="already decided"):
        store.decide_review("rv1", "keep b", "human", "", now_ms=10)
    with pytest.raises(NotFound):
        store.decide_review("nope", "x", "human", "", now_ms=10)
    with pytest.raises(NotFound):
        store.review("nope")


def test_backup_is_a_consistent_private_snapshot(store: MemoryStore, tmp_path: Path) -> None:
    store.apply(Effects(memories=(memory("m1"),), audit=(event("m1"),), receipt="r1", step=2),
                {"m1": vec(1, 0)}, 1)
    dest = store.backup(tmp_path / "backup.sqlite")
    store.apply(Effects(memories=(memory("m2"),), receipt="r2"), {}, 2)  # after the snapshot
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".backup", "backup"))) == [
        "backup.sqlite"
    ]
    with MemoryStore(dest) as copy:
        assert copy.load_memories() == [memory("m1")]
        assert copy.step() == 2 and copy.has_receipt("r1") and not copy.has_receipt("r2")
        np.testing.assert_array_equal(copy.vectors()["m1"], vec(1, 0))


def test_backup_to_missing_directory_is_a_data_dir_error(store: MemoryStore, tmp_path: Path) -> None:
    with pytest.raises(DataDirError):
        store.backup(tmp_path / "nope" / "b.sqlite")


def test_checkpoint_empties_the_wal(store: MemoryStore, tmp_path: Path) -> None:
    store.apply(Effects(memories=tuple(memory(f"m{i}") for i in range(50))), {}, 1)
    wal = tmp_path / "memory.sqlite-wal"
    assert wal.stat().st_size > 0
    store.checkpoint()
    assert wal.stat().st_size == 0


def test_jobs_from_effects_dedup_on_key(store: MemoryStore) -> None:
    job = JobRequest(kind="adjudicate", key="adjudicate:t1", payload="{}")
    store.apply(Effects(jobs=(job,), receipt="a"), {}, 1)
    store.apply(Effects(jobs=(job,), receipt="b"), {}, 2)
    assert store.job_counts() == {"adjudicate": {"pending": 1}}
    [leased] = store.lease_jobs(["adjudicate"], 5, now_ms=3, lease_ms=10)
    store.complete_job(leased.id, now_ms=4)
    assert store.job_counts() == {"adjudicate": {"done": 1}}


def test_apply_many_writes_each_step_as_apply_would_in_one_transaction(store: MemoryStore, tmp_path: Path) -> None:
    steps = [Step(Effects(memories=(memory("m1"),), audit=(event("m1"),), receipt="r1", step=1), {"m1": vec(1, 0)}, "a"),
             Step(Effects(memories=(memory("m2"),), audit=(event("m2"),), receipt="r2", step=2), {"m2": vec(0, 1)}, "b"),
             Step(Effects(audit=(event("m1", "confirm"),), receipt="r1", step=9), {}, "again")]  # r1 twice
    assert store.apply_many(steps, now_ms=5) == [True, True, False]
    one = MemoryStore(tmp_path / "one.sqlite")
    assert [one.apply(s.effects, s.vectors, 5, s.result, s.content_changed) for s in steps] == [True, True, False]
    for s in (store, one):
        assert [m.id for m in s.load_memories()] == ["m1", "m2"] and s.step() == 2
        assert [e.action for e in s.audit_for("m1")] == ["create"] and s.receipt("r2") == "b"
    one.close()


def test_a_failed_step_of_apply_many_writes_none_of_them(store: MemoryStore) -> None:
    good = Step(Effects(memories=(memory("m1"),), audit=(event("m1"),), receipt="r1", step=1), {"m1": vec(1.0)})
    bad = Step(Effects(tensions=(tension("t1", "m1", "ghost"),), receipt="r2", step=2), {})  # foreign key fails
    with pytest.raises(StoreError):
        store.apply_many([good, bad], now_ms=1)
    assert store.load_memories() == [] and not store.has_receipt("r1") and store.step() == 0
    assert store.apply_many([good], now_ms=1) == [True]  # positive control


def test_a_write_without_fsync_is_committed_and_the_next_one_is_fsynced_again(tmp_path: Path) -> None:
    """``fsync=False`` (a live recall's shadow credit) commits with synchronous=NORMAL: another
    connection sees it at once (it is in the WAL, so it survives ``kill -9`` of this process),
    and the store goes back to synchronous=FULL for every later write; a purge is always fsynced."""
    path = tmp_path / "memory.sqlite"
    s = MemoryStore(path)
    seen: list[str] = []
    s.conn.set_trace_callback(seen.append)
    try:
        assert s.apply(Effects(memories=(memory("m1"),), receipt="credit"), {}, 1, content_changed=False, fsync=False)
        relaxed = [q for q in seen if q.startswith("PRAGMA synchronous")]
        assert relaxed == ["PRAGMA synchronous = NORMAL", "PRAGMA synchronous = FULL"]
        assert s.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again
        other = sqlite3.connect(path)  # this store is still open: nothing was closed or checkpointed
        try:
            assert other.execute("SELECT id FROM memories").fetchall() == [("m1",)]
            assert other.execute("SELECT key FROM receipts").fetchall() == [("credit",)]
        finally:
            other.close()
        seen.clear()
        s.apply(Effects(memories=(memory("m2"),), receipt="ingest"), {}, 2)  # positive control: the default
        assert not [q for q in seen if q.startswith("PRAGMA synchronous")]
        seen.clear()
        s.apply(Effects(memories=(memory("m1", purged=True, text=""),), receipt="purge"), {}, 3, fsync=False)
        assert not [q for q in seen if q.startswith("PRAGMA synchronous = NORMAL")]  # a purge is never relaxed
    finally:
        s.close()
