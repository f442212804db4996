"""LogActor: one per project, the single writer of that project's ``log.sqlite``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from actors.clock import Clock
from actors.store.log_store import LogHit, LogStore
from actors.wire import LeasedBatch
from engine.errors import Conflict
from engine.models import Job, TurnIn, Unit


class LogService:
    """Appends redacted units with their extract jobs (outbox) and serves read-only log views."""

    def __init__(self, folder: Path, clock: Clock | None = None, project: str | None = None, run: str = "") -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.store = LogStore(Path(folder) / "log.sqlite")
        self.clock = clock or Clock()
        # ``run`` names the Runtime that owns the store now (lease tokens start with it). Jobs
        # leased by an earlier run were held by a process that is gone: they are ready again at
        # once, attempt not counted. A restart of this actor by Ray keeps ``run``, so the leases
        # of the live pipeline stay with it.
        self.released = self.store.release_foreign_leases(run, self.clock.now_ms()) if run else 0
        if project is not None:  # lets a restarted sidecar find its projects by name
            marker = Path(folder) / "project.json"
            if not marker.exists():
                marker.write_text(json.dumps({"project": project}), encoding="utf-8")

    def ping(self) -> int:
        return self.store.unit_count()

    def append(self, turns: Sequence[TurnIn]) -> list[tuple[Unit, bool]]:
        return self.store.append(list(turns), self.clock.now_ms())

    def units(self, ids: Sequence[str]) -> list[Unit]:
        return self.store.units(list(ids))

    def lease(self, kinds: Sequence[str], n: int, lease_ms: int = 60_000, token: str = "") -> list[Job]:
        """Lease ready jobs; the same ``token`` again returns the jobs it holds (a retried call)."""
        return self.store.lease_jobs(list(kinds), n, self.clock.now_ms(), lease_ms, token=token)

    def lease_batch(self, kinds: Sequence[str], n: int, lease_ms: int = 60_000, token: str = "",
                    renew: Sequence[str] = (), min_ready: int = 0) -> LeasedBatch:
        """:meth:`lease` of extract jobs with their units and the backlog, in one actor call (one
        round trip per batch instead of four: the drain's leases wait behind the appends of a
        replay that is still logging, issue 12).

        ``renew``: lease tokens of batches the caller still holds (waiting in the extraction
        pool); their leases are extended in the same transaction, before any job is taken, so
        that a job waiting in a deep queue is never leased again as if its holder had died.
        ``min_ready``: take nothing unless that many jobs are ready (full batches only)."""
        now = self.clock.now_ms()
        jobs = self.store.lease_jobs(list(kinds), n, now, lease_ms, token=token, renew_tokens=list(renew),
                                     min_ready=min_ready)
        wanted = [list(json.loads(job.payload).get("unit_ids", [])) for job in jobs]
        by_id = {u.id: u for u in self.store.units([i for ids in wanted for i in ids])}
        return LeasedBatch(jobs=tuple(jobs), units=tuple(tuple(by_id[i] for i in ids if i in by_id) for ids in wanted),
                           pending=self.store.pending_count(list(kinds)))

    def renew(self, tokens: Sequence[str], lease_ms: int = 60_000) -> int:
        """Extend the leases still held by ``tokens`` (a holder waiting on a long queue); returns how many."""
        return self.store.renew_leases(list(tokens), self.clock.now_ms(), lease_ms)

    def complete(self, job_id: int, token: str = "") -> bool:
        """Mark a job done; False (nothing changed) when ``token`` no longer holds its lease."""
        return self.store.complete_job(job_id, self.clock.now_ms(), token)

    def complete_many(self, job_ids: Sequence[int], token: str = "") -> list[bool]:
        """:meth:`complete` for a batch of jobs in one transaction, in order."""
        return self.store.complete_jobs(list(job_ids), self.clock.now_ms(), token)

    def fail(self, job_id: int, error: str, token: str = "") -> str:
        """Record a failed attempt; returns the job's new state (``dead`` after the last try)."""
        return str(self.store.fail_job(job_id, error, self.clock.now_ms(), token=token).value)

    def last_turn(self) -> int:
        return self.store.last_turn()

    def enqueue_repair(self, key: str, payload: str, daily_cap: int) -> int | None:
        """Enqueue a repair job unless ``daily_cap`` repair jobs were created in the last 24 hours."""
        now = self.clock.now_ms()
        recent = [j for j in self.store.list_jobs(kind="repair", limit=daily_cap + 1) if j.created_ms > now - 86_400_000]
        if len(recent) >= daily_cap:
            return None
        return self.store.enqueue_job("repair", key, payload, now)

    def defer(self, job_id: int, until_ms: int, error: str, token: str = "") -> None:
        """Give a leased job back until ``until_ms`` without counting the attempt (endpoint down)."""
        self.store.defer_job(job_id, until_ms, error, self.clock.now_ms(), token)

    def job_counts(self) -> dict[str, dict[str, int]]:
        return self.store.job_counts()

    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]:
        return list(self.store.search(query, limit=limit, before_turn=before_turn))

    def timeline(self, around_turn: int | None = None, limit: int = 20) -> list[Unit]:
        return self.store.timeline(around_turn=around_turn, limit=limit)

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]:
        return self.store.window(unit_id, radius)

    def enqueue(self, kind: str, key: str, payload: str) -> int | None:
        return self.store.enqueue_job(kind, key, payload, self.clock.now_ms())

    def jobs(self, state: str | None = None, kind: str | None = None, limit: int = 100) -> list[Job]:
        return self.store.list_jobs(state=state, kind=kind, limit=limit)

    def retry_job(self, job_id: int) -> None:
        self.store.retry_job(job_id, self.clock.now_ms())

    def retry_dead(self, kind: str) -> int:
        """Send every dead job of ``kind`` back to pending with fresh attempts (a new replay
        retries what the last one left dead); returns how many."""
        now = self.clock.now_ms()
        n = 0
        for job in self.store.list_jobs(state="dead", kind=kind, limit=1_000_000):
            try:
                self.store.retry_job(job.id, now)
                n += 1
            except Conflict:  # another live job holds its key: that one does the work
                continue
        return n

    def purge_units(self, ids: Sequence[str]) -> list[str]:
        return self.store.purge_units(list(ids), self.clock.now_ms())

    def close(self) -> None:
        self.store.close()
