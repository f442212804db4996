"""A durable job queue in a ``jobs`` table: lease, complete, fail with backoff, dead, retry.

Jobs move ``pending -> running (lease) -> done``. A failed attempt goes back to
``pending`` with exponential backoff and, after ``max_attempts``, to ``dead`` with its
last error kept, visible and retryable by hand. A job that could not run because a
dependency is down is *deferred*: back to ``pending`` until a given time, the attempt
not counted, so an outage never kills work. A worker that dies while holding a lease
does not lose the job: once ``lease_until_ms`` has passed, :func:`lease` hands it out again.

Each lease may carry a *lease token* chosen by its holder. Leasing again with the same token
returns the jobs that token already holds (a lease whose reply was lost when the store's
actor died is not taken twice, and its jobs do not wait for the lease to run out), and an
ack (complete, fail, defer) that names a token the job no longer holds is a late ack of a
stale holder: it changes nothing. :func:`release_foreign` gives back, attempt not counted,
the jobs leased by an earlier run whose process is gone.
At most one live (pending or running) job exists per ``key`` (a partial unique index), so
enqueueing the same work twice is a no-op.

The functions take a connection and run inside the caller's transaction (the outbox
pattern: a store enqueues in the same transaction as the write that caused the job).
They never read the clock: ``now_ms`` is passed in. :class:`JobsFile` binds them to a
store file, each call in its own transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from actors.store.migrations import Migration, SqliteFile
from engine.errors import Conflict, InvalidInput, NotFound
from engine.models import Job, JobState

JOBS_MIGRATION = Migration.sql(
    "jobs_table",
    """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        payload TEXT NOT NULL DEFAULT '{}',
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'running', 'done', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before_ms INTEGER NOT NULL DEFAULT 0,
        lease_until_ms INTEGER NOT NULL DEFAULT 0,
        last_error TEXT NOT NULL DEFAULT '',
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX jobs_one_live_per_key ON jobs (key)
        WHERE state IN ('pending', 'running');
    CREATE INDEX jobs_by_state ON jobs (state, kind, not_before_ms);
    """,
)

#: Each lease records its holder's token (see the module docstring).
LEASE_TOKEN_MIGRATION = Migration.sql(
    "jobs_lease_token",
    "ALTER TABLE jobs ADD COLUMN lease_token TEXT NOT NULL DEFAULT ''",
)

_COLUMNS = (
    "id, kind, key, payload, state, attempts, not_before_ms, lease_until_ms, "
    "last_error, created_ms, updated_ms"
)
#: Longest error text kept on a job; tracebacks beyond this are cut.
MAX_ERROR_CHARS = 4_000
#: Backoff never grows past this (one hour), however many attempts are allowed.
MAX_BACKOFF_MS = 3_600_000


def _job(row: Sequence[Any]) -> Job:
    keys = [c.strip() for c in _COLUMNS.split(",")]
    return Job(**dict(zip(keys, row, strict=True)))


def _payload_text(payload: str | Mapping[str, Any]) -> str:
    if isinstance(payload, str):
        try:
            json.loads(payload)
        except ValueError as exc:
            raise InvalidInput(f"job payload is not JSON: {exc}") from exc
        return payload
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


def enqueue(
    conn: sqlite3.Connection, kind: str, key: str, payload: str | Mapping[str, Any], now_ms: int
) -> int | None:
    """Add a pending job unless one is already live for ``key``.

    Returns:
        The new job id, or ``None`` when a pending or running job holds the key.
    """
    if not kind or not key:
        raise InvalidInput("a job needs a kind and a key")
    cur = conn.execute(
        "INSERT INTO jobs (kind, key, payload, state, not_before_ms, created_ms, updated_ms) "
        "VALUES (?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT DO NOTHING",
        (kind, key, _payload_text(payload), now_ms, now_ms, now_ms),
    )
    return cur.lastrowid if cur.rowcount == 1 else None


def lease(
    conn: sqlite3.Connection,
    kinds: Sequence[str],
    n: int,
    now_ms: int,
    lease_ms: int,
    max_attempts: int | None = None,
    token: str = "",
    min_ready: int = 0,
) -> list[Job]:
    """Take up to ``n`` ready jobs of the given kinds, oldest first, for ``lease_ms``.

    Ready means pending with ``not_before_ms <= now_ms``, or running with an expired
    lease (its worker died). Each lease counts as an attempt. With ``max_attempts``, an
    expired job that already used them all goes to ``dead`` instead of running again,
    so a job that kills its worker cannot loop forever.

    With a ``token`` that still holds running jobs of these kinds, the call is a retry of
    that lease: the same jobs come back (lease renewed, no attempt counted) and no new
    job is taken.

    With ``min_ready``, nothing is taken unless at least that many jobs are ready (a caller
    that wants full batches only while the work is still being enqueued).
    """
    if n <= 0 or not kinds:
        return []
    marks = ",".join("?" * len(kinds))
    if token:
        held = conn.execute(
            f"UPDATE jobs SET lease_until_ms = ?, updated_ms = ? "
            f"WHERE state = 'running' AND lease_token = ? AND kind IN ({marks}) "
            f"RETURNING {_COLUMNS}",
            (now_ms + lease_ms, now_ms, token, *kinds),
        ).fetchall()
        if held:
            return sorted((_job(r) for r in held), key=lambda j: (j.not_before_ms, j.id))
    if min_ready > 0:
        ready = conn.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM jobs WHERE kind IN ({marks}) AND ("
            f"  (state = 'pending' AND not_before_ms <= ?) OR (state = 'running' AND lease_until_ms < ?)) "
            f"LIMIT ?)",
            (*kinds, now_ms, now_ms, min_ready),
        ).fetchone()[0]
        if ready < min_ready:
            return []
    if max_attempts is not None:
        conn.execute(
            f"UPDATE jobs SET state = 'dead', updated_ms = ?, "
            f"last_error = 'lease expired after ' || attempts || ' attempts; ' || last_error "
            f"WHERE state = 'running' AND lease_until_ms < ? AND attempts >= ? "
            f"AND kind IN ({marks})",
            (now_ms, now_ms, max_attempts, *kinds),
        )
    rows = conn.execute(
        f"UPDATE jobs SET state = 'running', attempts = attempts + 1, "
        f"lease_until_ms = ?, updated_ms = ?, lease_token = ? "
        f"WHERE id IN (SELECT id FROM jobs WHERE kind IN ({marks}) AND ("
        f"  (state = 'pending' AND not_before_ms <= ?) "
        f"  OR (state = 'running' AND lease_until_ms < ?)) "
        f"ORDER BY not_before_ms, id LIMIT ?) "
        f"RETURNING {_COLUMNS}",
        (now_ms + lease_ms, now_ms, token, *kinds, now_ms, now_ms, n),
    ).fetchall()
    return sorted((_job(r) for r in rows), key=lambda j: (j.not_before_ms, j.id))


def renew(conn: sqlite3.Connection, tokens: Sequence[str], now_ms: int, lease_ms: int) -> int:
    """Extend to ``now_ms + lease_ms`` the lease of every job still running under one of ``tokens``.

    A holder whose jobs wait in a queue (a batch leased ahead while earlier ones are extracted)
    renews them while it waits, so that they are not taken again as if their worker had died:
    ``lease_s`` bounds how long a *dead* holder keeps a job, not how long a live one may queue
    it. A job another holder took meanwhile, or one already finished, is left alone (its token
    changed). Returns how many leases were extended.
    """
    wanted = [t for t in dict.fromkeys(tokens) if t]
    if not wanted:
        return 0
    marks = ",".join("?" * len(wanted))
    cur = conn.execute(
        f"UPDATE jobs SET lease_until_ms = MAX(lease_until_ms, ?), updated_ms = ? "
        f"WHERE state = 'running' AND lease_token IN ({marks})",
        (now_ms + lease_ms, now_ms, *wanted),
    )
    return int(cur.rowcount)


def get(conn: sqlite3.Connection, job_id: int) -> Job:
    """One job by id; raises :class:`NotFound` when there is none."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job with id {job_id}")
    return _job(row)


def _stale(conn: sqlite3.Connection, job_id: int, token: str) -> bool:
    """Whether an ack naming ``token`` comes from a holder that no longer holds the job's lease."""
    if not token:
        return False  # an ack without a token (a caller that does not use them) is trusted
    row = conn.execute("SELECT lease_token FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return row is None or row[0] != token


def complete(conn: sqlite3.Connection, job_id: int, now_ms: int, token: str = "") -> bool:
    """Mark a job done. Completing a done job again is a no-op (at-least-once workers).

    Returns:
        False when the ack is stale (``token`` no longer holds the lease): nothing changes,
        the job's current holder finishes it.
    """
    job = get(conn, job_id)
    if job.state is JobState.DONE:
        return True
    if _stale(conn, job_id, token):
        return False
    conn.execute(
        "UPDATE jobs SET state = 'done', lease_until_ms = 0, lease_token = '', updated_ms = ? WHERE id = ?",
        (now_ms, job_id),
    )
    return True


def fail(
    conn: sqlite3.Connection,
    job_id: int,
    error: str,
    now_ms: int,
    max_attempts: int = 5,
    base_backoff_ms: int = 500,
    token: str = "",
) -> JobState:
    """Record a failed attempt: back off exponentially, or go ``dead`` after ``max_attempts``.

    The n-th failed attempt waits ``base_backoff_ms * 2**(n-1)`` (capped at one hour).
    A failure reported for a job that is no longer running (its lease expired and it was
    re-leased, or it finished) or by a stale holder (``token``) changes nothing.

    Returns:
        The job's state after the call.
    """
    job = get(conn, job_id)
    if job.state is not JobState.RUNNING or _stale(conn, job_id, token):
        return job.state
    error = error[:MAX_ERROR_CHARS]
    if job.attempts >= max_attempts:
        conn.execute(
            "UPDATE jobs SET state = 'dead', last_error = ?, lease_until_ms = 0, lease_token = '', "
            "updated_ms = ? WHERE id = ?",
            (error, now_ms, job_id),
        )
        return JobState.DEAD
    delay = min(base_backoff_ms * 2 ** max(job.attempts - 1, 0), MAX_BACKOFF_MS)
    conn.execute(
        "UPDATE jobs SET state = 'pending', last_error = ?, not_before_ms = ?, "
        "lease_until_ms = 0, lease_token = '', updated_ms = ? WHERE id = ?",
        (error, now_ms + delay, now_ms, job_id),
    )
    return JobState.PENDING


def defer(
    conn: sqlite3.Connection, job_id: int, until_ms: int, error: str, now_ms: int, token: str = ""
) -> JobState:
    """Release a running job until ``until_ms`` without counting the attempt.

    For work that could not start because a dependency is down (the model endpoint's
    circuit is open): the job waits, however long the outage, and never goes ``dead``
    for it. The lease's attempt is given back and the reason kept in ``last_error``.
    A job that is no longer running (done), or no longer held by ``token`` (re-leased after
    expiry), is left alone.

    Returns:
        The job's state after the call.
    """
    job = get(conn, job_id)
    if job.state is not JobState.RUNNING or _stale(conn, job_id, token):
        return job.state
    conn.execute(
        "UPDATE jobs SET state = 'pending', attempts = MAX(attempts - 1, 0), last_error = ?, "
        "not_before_ms = ?, lease_until_ms = 0, lease_token = '', updated_ms = ? WHERE id = ?",
        (error[:MAX_ERROR_CHARS], max(until_ms, now_ms), now_ms, job_id),
    )
    return JobState.PENDING


def release_foreign(conn: sqlite3.Connection, run: str, now_ms: int) -> int:
    """Give back every running job whose lease was not taken by run ``run``, attempt not counted.

    Lease tokens start with ``<run>:``. At most one run writes a store at a time (the writer
    lock), so a job still running under another run's token was leased by a process that is
    gone (a sidecar killed with ``kill -9``): it is ready again at once, instead of waiting
    for its lease to run out and spending an attempt. Returns how many jobs were given back.
    """
    if not run:
        return 0
    prefix = run + ":"
    cur = conn.execute(
        "UPDATE jobs SET state = 'pending', attempts = MAX(attempts - 1, 0), not_before_ms = ?, "
        "lease_until_ms = 0, lease_token = '', updated_ms = ?, "
        "last_error = 'lease given back: the run that held it stopped; ' || last_error "
        "WHERE state = 'running' AND substr(lease_token, 1, ?) != ?",
        (now_ms, now_ms, len(prefix), prefix),
    )
    return int(cur.rowcount)


def retry(conn: sqlite3.Connection, job_id: int, now_ms: int) -> None:
    """Send a dead job back to ``pending`` with fresh attempts (its last error is kept).

    Raises:
        NotFound: no such job.
        Conflict: the job is not dead, or another live job already holds its key.
    """
    job = get(conn, job_id)
    if job.state is not JobState.DEAD:
        raise Conflict(f"job {job_id} is {job.state.value}, only dead jobs can be retried")
    try:
        conn.execute(
            "UPDATE jobs SET state = 'pending', attempts = 0, not_before_ms = ?, "
            "lease_until_ms = 0, updated_ms = ? WHERE id = ?",
            (now_ms, now_ms, job_id),
        )
    except sqlite3.IntegrityError as exc:
        raise Conflict(f"job {job_id}: another live job holds key {job.key!r}") from exc


def counts(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """Number of jobs per kind and state, e.g. ``{"extract": {"pending": 3, "dead": 1}}``."""
    out: dict[str, dict[str, int]] = {}
    for kind, state, count in conn.execute(
        "SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state ORDER BY kind, state"
    ):
        out.setdefault(kind, {})[state] = count
    return out


def list_jobs(
    conn: sqlite3.Connection,
    state: JobState | str | None = None,
    kind: str | None = None,
    limit: int = 100,
) -> list[Job]:
    """Jobs filtered by state and kind, newest first."""
    where, args = [], []
    if state is not None:
        where.append("state = ?")
        args.append(JobState(state).value)
    if kind is not None:
        where.append("kind = ?")
        args.append(kind)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM jobs {clause} ORDER BY id DESC LIMIT ?", (*args, limit)
    ).fetchall()
    return [_job(r) for r in rows]


class JobsFile(SqliteFile):
    """A store file that carries a ``jobs`` table; each method is one transaction."""

    def enqueue_job(
        self, kind: str, key: str, payload: str | Mapping[str, Any], now_ms: int
    ) -> int | None:
        """Enqueue a job on its own (see :func:`enqueue`)."""
        with self._write("enqueue job") as conn:
            return enqueue(conn, kind, key, payload, now_ms)

    def lease_jobs(
        self,
        kinds: Sequence[str],
        n: int,
        now_ms: int,
        lease_ms: int,
        max_attempts: int | None = None,
        token: str = "",
        renew_tokens: Sequence[str] = (),
        min_ready: int = 0,
    ) -> list[Job]:
        """Lease ready jobs (see :func:`lease`), after renewing the leases of ``renew_tokens``
        (see :func:`renew`) in the same transaction: a job held by a live holder is never
        among those taken."""
        with self._write("lease jobs") as conn:
            if renew_tokens:
                renew(conn, renew_tokens, now_ms, lease_ms)
            return lease(conn, kinds, n, now_ms, lease_ms, max_attempts, token, min_ready)

    def renew_leases(self, tokens: Sequence[str], now_ms: int, lease_ms: int) -> int:
        """Extend the leases held by ``tokens`` (see :func:`renew`)."""
        with self._write("renew leases") as conn:
            return renew(conn, tokens, now_ms, lease_ms)

    def complete_job(self, job_id: int, now_ms: int, token: str = "") -> bool:
        """Mark a job done (see :func:`complete`); False for a stale holder's ack."""
        with self._write("complete job") as conn:
            return complete(conn, job_id, now_ms, token)

    def complete_jobs(self, job_ids: Sequence[int], now_ms: int, token: str = "") -> list[bool]:
        """:meth:`complete_job` for each of ``job_ids``, in ONE transaction (one fsync for a
        batch of acks rather than one each: the commit was most of an ack's time)."""
        with self._write("complete jobs") as conn:
            return [complete(conn, job_id, now_ms, token) for job_id in job_ids]

    def fail_job(
        self,
        job_id: int,
        error: str,
        now_ms: int,
        max_attempts: int = 5,
        base_backoff_ms: int = 500,
        token: str = "",
    ) -> JobState:
        """Record a failed attempt (see :func:`fail`)."""
        with self._write("fail job") as conn:
            return fail(conn, job_id, error, now_ms, max_attempts, base_backoff_ms, token)

    def defer_job(self, job_id: int, until_ms: int, error: str, now_ms: int, token: str = "") -> JobState:
        """Release a running job until ``until_ms``, attempt not counted (see :func:`defer`)."""
        with self._write("defer job") as conn:
            return defer(conn, job_id, until_ms, error, now_ms, token)

    def release_foreign_leases(self, run: str, now_ms: int) -> int:
        """Give back the jobs leased by an earlier run (see :func:`release_foreign`)."""
        with self._write("release leases") as conn:
            return release_foreign(conn, run, now_ms)

    def retry_job(self, job_id: int, now_ms: int) -> None:
        """Send a dead job back to pending (see :func:`retry`)."""
        with self._write("retry job") as conn:
            retry(conn, job_id, now_ms)

    def job(self, job_id: int) -> Job:
        """One job by id."""
        with self._read("read job") as conn:
            return get(conn, job_id)

    def job_counts(self) -> dict[str, dict[str, int]]:
        """Jobs per kind and state (see :func:`counts`)."""
        with self._read("count jobs") as conn:
            return counts(conn)

    def pending_count(self, kinds: Sequence[str]) -> int:
        """Pending jobs of these kinds (read through the state index, not a scan of every job)."""
        if not kinds:
            return 0
        marks = ",".join("?" * len(kinds))
        with self._read("count pending jobs") as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM jobs WHERE state = 'pending' AND kind IN ({marks})",
                                    tuple(kinds)).fetchone()[0])

    def list_jobs(
        self, state: JobState | str | None = None, kind: str | None = None, limit: int = 100
    ) -> list[Job]:
        """Jobs filtered by state and kind, newest first."""
        with self._read("list jobs") as conn:
            return list_jobs(conn, state, kind, limit)
