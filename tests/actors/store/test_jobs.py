"""Tests for actors.store.jobs: dedup, leases, expiry, backoff, dead and retry."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.store import jobs
from actors.store.jobs import JOBS_MIGRATION, LEASE_TOKEN_MIGRATION
from actors.store.migrations import connect, migrate
from engine.errors import Conflict, InvalidInput, NotFound
from engine.models import JobState


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = connect(tmp_path / "jobs.sqlite")
    migrate(c, [JOBS_MIGRATION, LEASE_TOKEN_MIGRATION])
    yield c
    c.close()


def test_enqueue_dedups_on_live_key(conn: sqlite3.Connection) -> None:
    first = jobs.enqueue(conn, "extract", "extract:u1", {"unit_ids": ["u1"]}, now_ms=10)
    assert first is not None
    assert jobs.enqueue(conn, "extract", "extract:u1", {"unit_ids": ["u1"]}, now_ms=11) is None
    assert jobs.enqueue(conn, "extract", "extract:u2", "{}", now_ms=11) is not None  # control
    job = jobs.get(conn, first)
    assert job.state is JobState.PENDING and json.loads(job.payload) == {"unit_ids": ["u1"]}
    assert job.created_ms == job.updated_ms == job.not_before_ms == 10


def test_key_can_be_reused_once_the_job_is_done(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "repair", "repair:x", {}, 0)
    assert job_id is not None
    leased = jobs.lease(conn, ["repair"], 1, now_ms=1, lease_ms=100)
    assert jobs.enqueue(conn, "repair", "repair:x", {}, 2) is None  # running is live
    jobs.complete(conn, leased[0].id, now_ms=3)
    assert jobs.enqueue(conn, "repair", "repair:x", {}, 4) is not None


def test_payload_must_be_json(conn: sqlite3.Connection) -> None:
    with pytest.raises(InvalidInput):
        jobs.enqueue(conn, "extract", "k", "not json", 0)


def test_lease_takes_ready_jobs_of_the_asked_kinds_oldest_first(conn: sqlite3.Connection) -> None:
    a = jobs.enqueue(conn, "extract", "a", {}, 1)
    b = jobs.enqueue(conn, "extract", "b", {}, 2)
    jobs.enqueue(conn, "repair", "c", {}, 0)
    jobs.enqueue(conn, "extract", "d", {}, 3)
    leased = jobs.lease(conn, ["extract"], 2, now_ms=10, lease_ms=1000)
    assert [j.id for j in leased] == [a, b]
    assert all(j.state is JobState.RUNNING and j.attempts == 1 for j in leased)
    assert all(j.lease_until_ms == 1010 for j in leased)
    assert jobs.lease(conn, ["extract"], 5, now_ms=11, lease_ms=1000)[0].key == "d"
    assert jobs.lease(conn, ["extract"], 5, now_ms=12, lease_ms=1000) == []
    assert jobs.lease(conn, [], 5, now_ms=12, lease_ms=1000) == []


def test_expired_lease_is_leased_again(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=100)
    assert jobs.lease(conn, ["extract"], 1, now_ms=100, lease_ms=100) == []  # still held
    again = jobs.lease(conn, ["extract"], 1, now_ms=101, lease_ms=100)
    assert [j.id for j in again] == [job_id]
    assert again[0].attempts == 2


def test_expired_job_that_used_all_attempts_goes_dead(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "poison", {}, 0)
    assert job_id is not None
    for t in range(3):
        assert jobs.lease(conn, ["extract"], 1, now_ms=t * 200, lease_ms=100, max_attempts=3)
    assert jobs.lease(conn, ["extract"], 1, now_ms=1000, lease_ms=100, max_attempts=3) == []
    dead = jobs.get(conn, job_id)
    assert dead.state is JobState.DEAD and "lease expired" in dead.last_error


def test_fail_backs_off_exponentially_then_goes_dead(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    assert job_id is not None
    now = 0
    delays = []
    for attempt in range(1, 5):
        [job] = jobs.lease(conn, ["extract"], 1, now_ms=now, lease_ms=10_000)
        assert job.attempts == attempt
        state = jobs.fail(conn, job_id, f"boom {attempt}", now, max_attempts=5, base_backoff_ms=500)
        assert state is JobState.PENDING
        job = jobs.get(conn, job_id)
        delays.append(job.not_before_ms - now)
        assert jobs.lease(conn, ["extract"], 1, now_ms=job.not_before_ms - 1, lease_ms=1) == []
        now = job.not_before_ms
    assert delays == [500, 1000, 2000, 4000]
    jobs.lease(conn, ["extract"], 1, now_ms=now, lease_ms=10_000)
    assert jobs.fail(conn, job_id, "final boom", now, max_attempts=5) is JobState.DEAD
    dead = jobs.get(conn, job_id)
    assert dead.state is JobState.DEAD and dead.last_error == "final boom" and dead.attempts == 5
    assert jobs.lease(conn, ["extract"], 1, now_ms=10**12, lease_ms=1) == []


def test_retry_sends_dead_job_back_to_pending(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    assert job_id is not None
    with pytest.raises(Conflict, match="only dead"):
        jobs.retry(conn, job_id, 1)
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=10)
    jobs.fail(conn, job_id, "boom", 1, max_attempts=1)
    jobs.retry(conn, job_id, now_ms=50)
    job = jobs.get(conn, job_id)
    assert (job.state, job.attempts, job.not_before_ms, job.last_error) == (
        JobState.PENDING, 0, 50, "boom"
    )
    assert [j.id for j in jobs.lease(conn, ["extract"], 1, now_ms=50, lease_ms=10)] == [job_id]


def test_retry_conflicts_with_a_newer_live_job_for_the_key(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    assert job_id is not None
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=10)
    jobs.fail(conn, job_id, "boom", 1, max_attempts=1)
    assert jobs.enqueue(conn, "extract", "a", {}, 2) is not None
    with pytest.raises(Conflict, match="another live job"):
        jobs.retry(conn, job_id, 3)


def test_complete_is_idempotent_and_stale_fail_is_ignored(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    assert job_id is not None
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=10)
    jobs.complete(conn, job_id, 5)
    jobs.complete(conn, job_id, 6)
    assert jobs.fail(conn, job_id, "late", 7) is JobState.DONE
    job = jobs.get(conn, job_id)
    assert job.state is JobState.DONE and job.updated_ms == 5 and job.last_error == ""


def test_unknown_job_is_not_found(conn: sqlite3.Connection) -> None:
    for call in (
        lambda: jobs.complete(conn, 99, 0),
        lambda: jobs.fail(conn, 99, "x", 0),
        lambda: jobs.retry(conn, 99, 0),
    ):
        with pytest.raises(NotFound):
            call()


def test_counts_and_listing(conn: sqlite3.Connection) -> None:
    for key in "abc":
        jobs.enqueue(conn, "extract", key, {}, 0)
    jobs.enqueue(conn, "repair", "r", {}, 0)
    [job] = jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=10)
    jobs.fail(conn, job.id, "boom", 1, max_attempts=1)
    assert jobs.counts(conn) == {"extract": {"dead": 1, "pending": 2}, "repair": {"pending": 1}}
    dead = jobs.list_jobs(conn, state="dead")
    assert [j.key for j in dead] == ["a"] and dead[0].last_error == "boom"
    assert [j.key for j in jobs.list_jobs(conn, kind="extract")] == ["c", "b", "a"]
    assert len(jobs.list_jobs(conn, limit=2)) == 2


def test_long_errors_are_cut(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "a", {}, 0)
    assert job_id is not None
    jobs.lease(conn, ["extract"], 1, now_ms=0, lease_ms=10)
    jobs.fail(conn, job_id, "x" * 100_000, 1)
    assert len(jobs.get(conn, job_id).last_error) == jobs.MAX_ERROR_CHARS
