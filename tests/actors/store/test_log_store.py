"""Tests for actors.store.log_store: idempotent redacted appends, outbox, search, purge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.store.log_store import LogStore, fts_query
from engine.errors import Conflict, EmptyQuery, NotFound, StoreError
from engine.models import JobState, TurnIn

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LogStore]:
    s = LogStore(tmp_path / "log.sqlite")
    yield s
    s.close()


def turn(user: str, assistant: str = "ok", rid: str | None = None, **kw: object) -> TurnIn:
    return TurnIn(project="p1", user=user, assistant=assistant, request_id=rid, **kw)  # type: ignore[arg-type]


def _file_bytes(path: Path) -> bytes:
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_append_assigns_turns_ids_and_default_time(store: LogStore) -> None:
    out = store.append([turn("a", rid="r1"), turn("b", rid="r2", ts_ms=5)], now_ms=1000)
    units = [u for u, created in out if created]
    assert [(u.id, u.turn, u.ts_ms) for u in units] == [("u1", 1, 1000), ("u2", 2, 5)]
    assert store.unit_count() == 2 and store.last_turn() == 2
    assert store.units(["u2", "nope", "u1"]) == [units[1], units[0]]


def test_same_request_id_twice_stores_one_unit(store: LogStore) -> None:
    [(first, created)] = store.append([turn("hello", rid="r1")], now_ms=1)
    [(again, created_again)] = store.append([turn("hello", rid="r1")], now_ms=2)
    assert created and not created_again
    assert again == first
    assert store.unit_count() == 1


def test_conflicting_content_for_a_request_id_raises_and_keeps_the_first(store: LogStore) -> None:
    [(first, _)] = store.append([turn("original", rid="r1")], now_ms=1)
    with pytest.raises(Conflict, match="r1"):
        store.append([turn("new", rid="r2"), turn("different", rid="r1")], now_ms=2)
    assert store.units(["u1"]) == [first]
    assert store.unit_count() == 1  # the batch rolled back: r2 was not stored either
    assert store.job_counts() == {"extract": {"pending": 1}}


def test_missing_request_id_is_deterministic(store: LogStore) -> None:
    [(a, created_a)] = store.append([turn("same", ts_ms=7)], now_ms=1)
    [(b, created_b)] = store.append([turn("same", ts_ms=7)], now_ms=2)
    assert created_a and not created_b and a == b
    assert a.request_id.startswith("auto-")
    [(c, created_c)] = store.append([turn("same", ts_ms=8)], now_ms=3)
    assert created_c and c.id == "u2"  # positive control: another time is another turn


def test_duplicate_inside_one_batch(store: LogStore) -> None:
    out = store.append([turn("x", rid="r"), turn("x", rid="r")], now_ms=1)
    assert [c for _, c in out] == [True, False]
    assert out[0][0] == out[1][0]


def test_each_new_unit_has_exactly_one_extract_job(store: LogStore) -> None:
    store.append([turn("a", rid="r1"), turn("b", rid="r2")], now_ms=1)
    store.append([turn("a", rid="r1")], now_ms=2)  # duplicate: no job
    jobs = store.list_jobs(kind="extract")
    assert sorted(j.key for j in jobs) == ["extract:u1", "extract:u2"]
    assert {j.key: json.loads(j.payload) for j in jobs} == {
        "extract:u1": {"unit_ids": ["u1"]},
        "extract:u2": {"unit_ids": ["u2"]},
    }
    leased = store.lease_jobs(["extract"], 10, now_ms=3, lease_ms=100)
    store.complete_job(leased[0].id, now_ms=4)
    assert store.fail_job(leased[1].id, "boom", now_ms=4, max_attempts=1) is JobState.DEAD
    store.retry_job(leased[1].id, now_ms=5)
    assert store.job_counts() == {"extract": {"done": 1, "pending": 1}}
    assert store.job(leased[1].id).last_error == "boom"


def test_secrets_are_redacted_before_storage(store: LogStore, tmp_path: Path) -> None:
    [(unit, _)] = store.append([turn(f"my token is {GHP}", "use password=hunter22 there")], 1)
    assert GHP not in unit.user and "hunter22" not in unit.assistant
    assert "[REDACTED:github_token]" in unit.user
    assert "my token is" in unit.user  # the rest is kept
    assert GHP.encode() not in _file_bytes(tmp_path / "log.sqlite")
    assert b"my token is" in _file_bytes(tmp_path / "log.sqlite")  # positive control


def test_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    with LogStore(path) as s:
        before = [u for u, _ in s.append([turn("a", rid="r1"), turn("b", rid="r2")], 1)]
        jobs_before = s.list_jobs()
    with LogStore(path) as s:
        assert s.units(["u1", "u2"]) == before
        assert s.list_jobs() == jobs_before
        assert s.append([turn("c", rid="r3")], 2)[0][0].id == "u3"
        assert s.search("a")[0].unit.id == "u1"


_WRITER = """
import sys, time
from actors.store.log_store import LogStore
from engine.models import TurnIn
store = LogStore(sys.argv[1])
for i in range(20):
    store.append([TurnIn(project="p", user=f"turn {i}", request_id=f"r{i}")], now_ms=i)
    print(f"acked r{i}", flush=True)
time.sleep(60)
"""


def test_acknowledged_appends_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        acked = [proc.stdout.readline().strip() for _ in range(20)]
        assert acked[-1] == "acked r19"
        os.kill(proc.pid, signal.SIGKILL)  # no close, no checkpoint
    finally:
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with LogStore(path) as s:
        assert s.unit_count() == 20
        assert [u.request_id for u in s.timeline(limit=20)] == [f"r{i}" for i in range(20)]
        assert s.job_counts() == {"extract": {"pending": 20}}


def test_schema_migrations_are_recorded(store: LogStore) -> None:
    with store._read("schema") as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]
    assert names == ["0001_units_fts", "jobs_table", "jobs_lease_token"]


@pytest.fixture
def searchable(store: LogStore) -> LogStore:
    store.append(
        [
            turn("run pytest -x on the payments suite", "all green", rid="r1"),
            turn("the handler lives in src/payments/stripe_client.py", "noted", rid="r2"),
            turn("rename camelCaseName to snake_case_name", "done", rid="r3"),
            turn("deploy with docker compose", "deployed to staging", rid="r4"),
            turn("what port does the api use?", "the api server listens on 9090", rid="r5"),
        ],
        now_ms=1,
    )
    return store


@pytest.mark.parametrize(
    ("query", "unit_id"),
    [
        ("pytest -x", "u1"),
        ("src/payments/", "u2"),
        ("stripe_client.py", "u2"),
        ("camelCaseName", "u3"),
        ("camelcasename", "u3"),
        ("snake_case_name", "u3"),
        ("deploying", "u4"),  # porter stemming
        ("api port 9090", "u5"),
    ],
)
def test_search_finds_identifiers(searchable: LogStore, query: str, unit_id: str) -> None:
    hits = searchable.search(query)
    assert hits and hits[0].unit.id == unit_id
    assert "[" in hits[0].snippet and hits[0].score > 0


def test_search_ranks_all_words_before_any_word(searchable: LogStore) -> None:
    hits = searchable.search("payments stripe_client")
    assert hits[0].unit.id == "u2"
    assert {h.unit.id for h in hits} == {"u1", "u2"}  # u1 matches "payments" only


@pytest.mark.parametrize(
    "query",
    [
        'say "hello',
        "f(x) AND (y",
        "NEAR(a b, 3)",
        "pay*",
        "* OR",
        "NOT -x",
        "col:value ^start",
        '"""',
        "'; DROP TABLE units; --",
        "{a b} + c",
        "AND OR NOT",
        "\x00 tab\tnewline\n",
    ],
)
def test_fts_syntax_in_user_text_never_raises(searchable: LogStore, query: str) -> None:
    searchable.search(query)
    assert searchable.search("pytest")  # positive control: the index still answers


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('a "b" (c)') == '"a" AND """b""" AND "(c)"'
    assert fts_query("* ( ) ___") == ""


def test_blank_query_is_an_empty_query_error(searchable: LogStore) -> None:
    with pytest.raises(EmptyQuery):
        searchable.search("   ")


def test_search_before_turn(searchable: LogStore) -> None:
    assert [h.unit.id for h in searchable.search("payments")] != []
    assert [h.unit.id for h in searchable.search("payments", before_turn=2)] == ["u1"]
    assert searchable.search("payments", before_turn=1) == []


def test_timeline_and_window(store: LogStore) -> None:
    store.append([turn(f"t{i}", rid=f"r{i}") for i in range(1, 11)], now_ms=1)
    assert [u.turn for u in store.timeline(limit=3)] == [8, 9, 10]
    assert [u.turn for u in store.timeline(around_turn=5, limit=4)] == [3, 4, 5, 6]
    assert [u.turn for u in store.timeline(start=2, end=4)] == [2, 3, 4]
    assert [u.turn for u in store.timeline(start=9, limit=100)] == [9, 10]
    assert [u.id for u in store.window("u5", radius=1)] == ["u4", "u5", "u6"]
    assert [u.id for u in store.window("u1", radius=2)] == ["u1", "u2", "u3"]
    with pytest.raises(NotFound):
        store.window("u99")


def test_purge_leaves_no_trace_in_the_files(store: LogStore, tmp_path: Path) -> None:
    phrase = "zanzibar-migration-codeword"
    store.append([turn(f"the secret plan is {phrase}", f"ok, {phrase} noted", rid="r1")], 1)
    store.append([turn(f"filler {i}", rid=f"f{i}") for i in range(30)], 2)
    path = tmp_path / "log.sqlite"
    assert phrase.encode() in _file_bytes(path)  # positive control
    assert store.search(phrase)
    [before] = store.units(["u1"])

    assert store.purge_units(["u1"], now_ms=3) == ["u1"]

    assert phrase.encode() not in _file_bytes(path)
    assert b"zanzibar" not in _file_bytes(path)
    assert store.search(phrase) == [] and store.search("zanzibar") == []
    [after] = store.units(["u1"])
    assert after.user.startswith("[purged sha256:") and after.user == after.assistant
    assert (after.id, after.turn, after.request_id) == (before.id, before.turn, before.request_id)
    assert store.purged_ids() == ["u1"]
    assert store.search("filler")  # the rest of the index still works
    store.integrity_check()
    assert store.purge_units(["u1"], now_ms=4) == []  # idempotent


def test_resending_a_purged_turn_does_not_bring_it_back(store: LogStore) -> None:
    store.append([turn("forget me", rid="r1")], 1)
    store.purge_units(["u1"], 2)
    [(unit, created)] = store.append([turn("forget me", rid="r1")], 3)
    assert not created and unit.user.startswith("[purged")


def test_purge_unknown_unit_purges_nothing(store: LogStore) -> None:
    store.append([turn("keep", rid="r1")], 1)
    with pytest.raises(NotFound):
        store.purge_units(["u1", "u9"], 2)
    assert store.units(["u1"])[0].user == "keep"


def test_closed_store_raises_store_error(tmp_path: Path) -> None:
    s = LogStore(tmp_path / "log.sqlite")
    s.close()
    with pytest.raises(StoreError):
        s.unit_count()


_turns = st.lists(
    st.tuples(
        st.sampled_from(["r1", "r2", "r3", "r4", None]),
        st.sampled_from(["fix bug", "run pytest -x", 'quote " and (paren', "token ghp_x"]),
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(_turns, min_size=1, max_size=3))
def test_append_is_idempotent_over_random_batches(batches: list[list[tuple[str | None, str]]]) -> None:
    # content is a function of the request id, so no batch conflicts
    def make(rid: str | None, text: str) -> TurnIn:
        user = f"msg {rid}" if rid else text
        return TurnIn(project="p", user=user, request_id=rid, ts_ms=1)

    with tempfile.TemporaryDirectory() as tmp, LogStore(Path(tmp) / "log.sqlite") as s:
        for batch in batches:
            turns = [make(rid, text) for rid, text in batch]
            first = s.append(turns, now_ms=1)
            second = s.append(turns, now_ms=2)
            assert [u for u, _ in first] == [u for u, _ in second]
            assert not any(created for _, created in second)
        distinct = {(rid or f"auto:{text}") for batch in batches for rid, text in batch}
        assert s.unit_count() == len(distinct)
        assert s.last_turn() == len(distinct)
        assert sum(s.job_counts().get("extract", {}).values()) == len(distinct)
