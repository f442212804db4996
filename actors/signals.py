"""Repair signals of abstained recalls, run off the recall path (issue 15: a recall of a project whose
log actor is not open waited for it to open before it answered)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

_log = logging.getLogger("actors.pipeline")


class RepairSignals:
    """Repair signals run off the recall path: one thread, in the order they were queued.

    An abstained recall answers at once; its signal (a log search, and a repair job when the log
    can answer) follows on this thread. One queue per runtime (``Runtime.signals``), shared by every
    pipeline over it. Whatever reads or writes the project's log next (an observe, a drain, a purge,
    a miss, the job counts) first waits for the project's queued signals, so a signal still sees the
    log as the recall did and its job is counted as before. A signal that fails is logged and
    counted, never raised into a later, unrelated call; past ``limit`` queued signals a new one is
    dropped (and counted): a flood of abstaining recalls must not grow without bound.
    """

    def __init__(self, limit: int = 256, closed: Callable[[], bool] = lambda: False) -> None:
        self.limit = limit
        self.closed = closed  # the runtime was shut down: a signal that fails then is dropped quietly
        self._lost: dict[str, dict[str, int]] = {}  # project -> {"failed": n, "dropped": n}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._queued: dict[str, list[Future[None]]] = {}

    def submit(self, project: str, fn: Callable[[], None]) -> None:
        with self._lock:
            live = {p: [f for f in fs if not f.done()] for p, fs in self._queued.items()}
            self._queued = {p: fs for p, fs in live.items() if fs}
            if sum(len(fs) for fs in self._queued.values()) >= self.limit:
                self._count(project, "dropped")
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dynmem-repair-signal")
            self._queued.setdefault(project, []).append(self._pool.submit(self._guarded, project, fn))

    def _guarded(self, project: str, fn: Callable[[], None]) -> None:
        if self.closed():
            return
        try:
            fn()
        except Exception:  # noqa: BLE001 - a lost signal costs one repair, never the caller's next call
            if self.closed():
                return  # shut down while it ran: its actors are gone, and so is the repair it asked for
            with self._lock:
                self._count(project, "failed")
            _log.warning("repair signal of project %r failed", project, exc_info=True)

    def _count(self, project: str, what: str) -> None:
        lost = self._lost.setdefault(project, {"failed": 0, "dropped": 0})
        lost[what] += 1

    def lost(self, project: str) -> dict[str, int]:
        """The project's signals that failed or were dropped since the runtime started ({} when none was):
        shown with its job counts (``dynmem jobs``), as a dead job is."""
        with self._lock:
            return {k: n for k, n in self._lost.get(project, {}).items() if n}

    @property
    def failed(self) -> int:
        with self._lock:
            return sum(c["failed"] for c in self._lost.values())

    @property
    def dropped(self) -> int:
        with self._lock:
            return sum(c["dropped"] for c in self._lost.values())

    def queued(self, project: str) -> list[Future[None]]:
        with self._lock:
            return [f for f in self._queued.get(project, ()) if not f.done()]

    def settle(self, project: str) -> None:
        """Wait for the project's queued signals."""
        for f in self.queued(project):
            f.result()

    async def settle_async(self, project: str) -> None:
        for f in self.queued(project):
            await asyncio.wrap_future(f)

    def close(self) -> None:
        """Drop the signals not started yet (their runtime is shut down) and let the thread end."""
        with self._lock:
            pool, self._pool, self._queued = self._pool, None, {}
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
