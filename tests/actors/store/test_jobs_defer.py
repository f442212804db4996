"""Tests for jobs.defer: an outage makes a job wait without spending its attempts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.log_actor import LogService
from actors.clock import FakeClock
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


def test_deferred_job_waits_until_the_time_and_keeps_its_attempts(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "extract:u1", {"unit_ids": ["u1"]}, 0)
    assert job_id is not None
    (leased,) = jobs.lease(conn, ["extract"], 1, now_ms=10, lease_ms=1000)
    assert leased.attempts == 1
    assert jobs.defer(conn, job_id, until_ms=500, error="model endpoint down", now_ms=20) is JobState.PENDING
    job = jobs.get(conn, job_id)
    assert (job.state, job.attempts, job.not_before_ms, job.lease_until_ms) == (JobState.PENDING, 0, 500, 0)
    assert job.last_error == "model endpoint down"
    assert jobs.lease(conn, ["extract"], 1, now_ms=499, lease_ms=1000) == []  # still waiting
    (again,) = jobs.lease(conn, ["extract"], 1, now_ms=500, lease_ms=1000)
    assert again.id == job_id and again.attempts == 1


def test_an_outage_of_any_length_never_kills_a_job(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "k", {}, 0)
    assert job_id is not None
    now = 0
    for _ in range(50):  # far more than max_attempts
        now += 1000
        (j,) = jobs.lease(conn, ["extract"], 1, now_ms=now, lease_ms=100, max_attempts=5)
        jobs.defer(conn, j.id, now + 10, "down", now)
    assert jobs.get(conn, job_id).state is JobState.PENDING
    # control: failing (not deferring) the same job kills it after max_attempts
    for _ in range(5):
        now += 10_000_000
        (j,) = jobs.lease(conn, ["extract"], 1, now_ms=now, lease_ms=100)
        state = jobs.fail(conn, j.id, "bad reply", now, max_attempts=5)
    assert state is JobState.DEAD


def test_deferring_a_job_that_is_not_running_changes_nothing(conn: sqlite3.Connection) -> None:
    job_id = jobs.enqueue(conn, "extract", "k", {}, 0)
    assert job_id is not None
    assert jobs.defer(conn, job_id, 100, "x", 1) is JobState.PENDING
    assert jobs.get(conn, job_id).not_before_ms == 0  # untouched (it was never leased)
    (j,) = jobs.lease(conn, ["extract"], 1, now_ms=5, lease_ms=10)
    jobs.complete(conn, j.id, 6)
    assert jobs.defer(conn, j.id, 100, "late", 7) is JobState.DONE
    assert jobs.get(conn, j.id).last_error == ""


def test_log_service_defer_uses_its_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    log = LogService(tmp_path / "p", clock)
    log.append([TurnIn(project="p", user="the API listens on port 8080", request_id="r1")])
    (job,) = log.lease(["extract"], 1)
    log.defer(job.id, clock.now_ms() + 5_000, "extract: model endpoint unavailable")
    assert log.lease(["extract"], 1) == []
    clock.advance(5_000)
    (again,) = log.lease(["extract"], 1)
    assert again.id == job.id and again.attempts == 1
    assert log.job_counts() == {"extract": {"running": 1}}
    log.close()
