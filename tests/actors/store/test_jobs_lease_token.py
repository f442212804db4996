"""Lease tokens (issue 17, failure 1): a lease retried after its store's actor died returns the
same jobs, a stale holder's late ack changes nothing, and the leases of a run that is gone are
given back at once without spending an attempt."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.log_actor import LogService
from actors.store import jobs
from actors.store.jobs import JOBS_MIGRATION, LEASE_TOKEN_MIGRATION
from actors.store.migrations import connect, migrate
from engine.models import JobState, TurnIn


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = connect(tmp_path / "jobs.sqlite")
    migrate(c, [JOBS_MIGRATION, LEASE_TOKEN_MIGRATION])
    yield c
    c.close()


def _enqueue(conn: sqlite3.Connection, *keys: str) -> list[int]:
    ids = [jobs.enqueue(conn, "extract", k, {}, 0) for k in keys]
    assert all(i is not None for i in ids)
    return [i for i in ids if i is not None]


def test_a_retried_lease_returns_the_same_jobs_and_spends_no_attempt(conn: sqlite3.Connection) -> None:
    a, b, c = _enqueue(conn, "a", "b", "c")
    first = jobs.lease(conn, ["extract"], 2, now_ms=10, lease_ms=1000, token="run1:x")
    # the reply was lost (the actor died after its commit): the caller retries the same call
    again = jobs.lease(conn, ["extract"], 2, now_ms=20, lease_ms=1000, token="run1:x")
    assert [j.id for j in first] == [j.id for j in again] == [a, b]
    assert [j.attempts for j in again] == [1, 1]
    assert again[0].lease_until_ms == 1020  # renewed
    # another token takes the next job, not the held ones
    assert [j.id for j in jobs.lease(conn, ["extract"], 2, now_ms=30, lease_ms=1000, token="run1:y")] == [c]
    # once the first holder finished its batch, its token holds nothing and leases anew
    for j in first:
        assert jobs.complete(conn, j.id, 40, token="run1:x")
    assert jobs.lease(conn, ["extract"], 2, now_ms=50, lease_ms=1000, token="run1:x") == []


def test_a_stale_holders_late_ack_changes_nothing(conn: sqlite3.Connection) -> None:
    (job_id,) = _enqueue(conn, "a")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=100, token="run1:old")
    (again,) = jobs.lease(conn, ["extract"], 1, now_ms=200, lease_ms=1000, token="run1:new")  # lease ran out
    assert again.id == job_id and again.attempts == 2
    # the old holder wakes up: its fail, defer and complete are ignored
    assert jobs.fail(conn, job_id, "late failure", 210, token="run1:old") is JobState.RUNNING
    assert jobs.defer(conn, job_id, 0, "late defer", 211, token="run1:old") is JobState.RUNNING
    assert jobs.complete(conn, job_id, 212, token="run1:old") is False
    job = jobs.get(conn, job_id)
    assert (job.state, job.attempts, job.last_error, job.lease_until_ms) == (JobState.RUNNING, 2, "", 1200)
    # the current holder's ack is taken; a repeat of it (a retried call) is a no-op
    assert jobs.complete(conn, job_id, 300, token="run1:new") is True
    assert jobs.complete(conn, job_id, 301, token="run1:new") is True
    assert jobs.get(conn, job_id).state is JobState.DONE
    assert jobs.get(conn, job_id).updated_ms == 300


def test_a_failed_job_is_not_failed_twice_by_a_retried_call(conn: sqlite3.Connection) -> None:
    (job_id,) = _enqueue(conn, "a")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=100, token="r:t")
    assert jobs.fail(conn, job_id, "boom", 1, token="r:t") is JobState.PENDING
    before = jobs.get(conn, job_id)
    assert jobs.fail(conn, job_id, "boom", 2, token="r:t") is JobState.PENDING  # the retry of the same call
    assert jobs.get(conn, job_id) == before


def test_leases_of_another_run_are_given_back_without_an_attempt(conn: sqlite3.Connection) -> None:
    old, mine, legacy, waiting = _enqueue(conn, "old", "mine", "legacy", "waiting")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=60_000, token="dead-run:1")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=60_000, token="live-run:1")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=60_000)  # a lease without a token (older code)
    assert jobs.release_foreign(conn, "live-run", now_ms=5) == 2
    states = {i: jobs.get(conn, i) for i in (old, mine, legacy, waiting)}
    assert states[mine].state is JobState.RUNNING and states[mine].attempts == 1
    for i in (old, legacy):
        assert (states[i].state, states[i].attempts, states[i].not_before_ms) == (JobState.PENDING, 0, 5)
        assert "run that held it stopped" in states[i].last_error
    assert states[waiting].state is JobState.PENDING and states[waiting].attempts == 0
    # ready at once, long before the dead run's lease would have run out
    assert sorted(j.id for j in jobs.lease(conn, ["extract"], 5, now_ms=6, lease_ms=1000, token="live-run:2")) \
        == sorted([old, legacy, waiting])
    # the dead run's late ack is stale
    assert jobs.complete(conn, old, 7, token="dead-run:1") is False
    assert jobs.release_foreign(conn, "", now_ms=8) == 0  # no run named: nothing is touched


def test_a_log_service_of_a_new_run_frees_the_leases_of_the_old_one(tmp_path: Path) -> None:
    clock = FakeClock()
    first = LogService(tmp_path / "p", clock, "p", run="run-a")
    first.append([TurnIn(project="p", user=f"the API listens on port {8080 + i}", request_id=f"r{i}") for i in range(3)])
    held = first.lease(["extract"], 2, token="run-a:1")
    assert len(held) == 2
    first.close()  # run-a is killed with its leases held
    # Ray restarts the actor of the same run: its leases stay with the live pipeline
    same = LogService(tmp_path / "p", clock, "p", run="run-a")
    assert same.released == 0 and same.job_counts()["extract"] == {"pending": 1, "running": 2}
    same.close()
    # the next run (a new sidecar) gets them back at once, attempts not spent
    second = LogService(tmp_path / "p", clock, "p", run="run-b")
    assert second.released == 2
    again = second.lease(["extract"], 5, token="run-b:1")
    assert len(again) == 3 and all(j.attempts == 1 for j in again)
    assert second.complete(held[0].id, token="run-a:1") is False  # the old run's ack is stale
    assert all(second.complete(j.id, token="run-b:1") for j in again)
    assert second.job_counts()["extract"] == {"done": 3}
    second.close()


def test_a_batch_of_acks_takes_the_holders_and_ignores_a_stale_one(tmp_path: Path) -> None:
    log = LogService(tmp_path / "p", FakeClock(), "p", run="run-a")
    log.append([TurnIn(project="p", user=f"the API listens on port {8080 + i}", request_id=f"r{i}") for i in range(4)])
    mine = log.lease(["extract"], 3, token="run-a:1")
    (other,) = log.lease(["extract"], 1, token="run-a:2")
    ids = [j.id for j in mine]
    # one call, one transaction: the holder's three acks are taken, another holder's job is not
    assert log.complete_many([*ids, other.id], token="run-a:1") == [True, True, True, False]
    assert log.job_counts()["extract"] == {"done": 3, "running": 1}
    assert log.complete_many([other.id], token="run-a:2") == [True]  # positive control: its holder's ack
    assert log.complete_many(ids, token="run-a:1") == [True, True, True]  # a retried call is a no-op
    assert log.job_counts()["extract"] == {"done": 4}
    log.close()


@pytest.mark.parametrize("kinds", [["extract"], ["extract", "repair"]])
def test_a_held_token_returns_only_jobs_of_the_asked_kinds(conn: sqlite3.Connection, kinds: list[str]) -> None:
    (a,) = _enqueue(conn, "a")
    r = jobs.enqueue(conn, "repair", "r", {}, 0)
    jobs.lease(conn, kinds, 5, now_ms=0, lease_ms=100, token="x:1")
    assert {j.id for j in jobs.lease(conn, ["extract"], 5, now_ms=1, lease_ms=100, token="x:1")} == {a}
    held_repair = jobs.lease(conn, ["repair"], 5, now_ms=2, lease_ms=100, token="x:1")
    assert [j.id for j in held_repair] == [r]


def test_a_renewed_lease_is_not_taken_again_once_its_first_term_has_passed(conn: sqlite3.Connection) -> None:
    """A holder still waiting on its jobs (a deep extraction queue) renews them: past the lease's
    first term they are not handed out as if their worker had died."""
    a, b = _enqueue(conn, "a", "b")
    held = jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=1000, token="run1:x")
    assert [j.id for j in held] == [a]
    assert jobs.renew(conn, ["run1:x"], now_ms=900, lease_ms=1000) == 1
    later = jobs.lease(conn, ["extract"], 2, now_ms=1500, lease_ms=1000, token="run1:y")
    assert [j.id for j in later] == [b]  # a is still held (until 1900)
    # positive control: once the renewed term has passed too, a is taken again (its holder is gone)
    again = jobs.lease(conn, ["extract"], 2, now_ms=2000, lease_ms=1000, token="run1:z")
    assert [j.id for j in again] == [a]
    assert jobs.get(conn, a).attempts == 2


def test_renew_leaves_finished_jobs_and_other_holders_alone(conn: sqlite3.Connection) -> None:
    a, b = _enqueue(conn, "a", "b")
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=1000, token="run1:x")
    jobs.complete(conn, a, now_ms=10, token="run1:x")
    jobs.lease(conn, ["extract"], 1, now_ms=20, lease_ms=1000, token="run1:y")
    assert jobs.renew(conn, ["run1:x", ""], now_ms=30, lease_ms=5000) == 0  # a is done; b is y's
    assert jobs.get(conn, a).state is JobState.DONE
    assert jobs.get(conn, b).lease_until_ms == 1020
    assert jobs.renew(conn, ["run1:y"], now_ms=30, lease_ms=5000) == 1
    assert jobs.get(conn, b).lease_until_ms == 5030
    # a renewal never shortens a lease
    assert jobs.renew(conn, ["run1:y"], now_ms=40, lease_ms=10) == 1
    assert jobs.get(conn, b).lease_until_ms == 5030


def test_min_ready_takes_nothing_until_a_full_batch_is_ready(conn: sqlite3.Connection) -> None:
    _enqueue(conn, "a", "b")
    assert jobs.lease(conn, ["extract"], 3, now_ms=0, lease_ms=1000, token="t1", min_ready=3) == []
    assert all(j.state is JobState.PENDING for j in jobs.list_jobs(conn))  # nothing was taken
    _enqueue(conn, "c", "d")
    got = jobs.lease(conn, ["extract"], 3, now_ms=0, lease_ms=1000, token="t1", min_ready=3)
    assert len(got) == 3


def test_lease_batch_renews_the_callers_batches_before_it_takes_jobs(tmp_path: Path) -> None:
    """The drain's lease call carries the tokens of the batches it still has in extraction: one
    whose term has passed meanwhile is renewed, not leased to the new batch."""
    clock = FakeClock(1_000_000)
    log = LogService(tmp_path / "p", clock, "p", run="run-a")
    log.append([TurnIn(project="p", user=f"turn {i}", assistant="ok", ts_ms=clock.now_ms() - 1000 + i,
                       request_id=f"r{i}") for i in range(4)])
    first = log.lease_batch(["extract"], 2, 1000, "run-a:1")
    assert [len(u) for u in first.units] == [1, 1] and first.pending == 2
    assert [u[0].id for u in first.units] == [json.loads(j.payload)["unit_ids"][0] for j in first.jobs]
    clock.advance(5000)  # the first batch's term is over: it is still waiting in the pool
    second = log.lease_batch(["extract"], 2, 1000, "run-a:2", renew=["run-a:1"])
    assert {j.id for j in second.jobs}.isdisjoint(j.id for j in first.jobs)
    assert second.pending == 0
    # positive control: without the renewal, the first batch's jobs are the ones taken
    clock.advance(5000)
    third = log.lease_batch(["extract"], 2, 1000, "run-a:3")
    assert {j.id for j in third.jobs} == {j.id for j in first.jobs}
