"""Admission control of the sidecar (issue 17, failure 8): bounded work, a clear refusal, and
group commit of observes.

* :class:`Gate` bounds the calls of one route in flight and the callers waiting for a slot. A
  caller that finds the queue full, or waits longer than ``max_wait_s``, is refused with
  :class:`~engine.errors.Overloaded` (HTTP 503, code ``overloaded``, ``Retry-After``) before
  anything is done, so a refused request never changed anything and may simply be sent again.
  Accepted calls therefore wait at most ``max_wait_s`` for their turn, however many clients
  there are (a closed loop of N clients otherwise waits N / throughput, Little's law).
* :class:`GroupCommit` gives concurrent observes one ``append`` (one SQLite transaction, one
  fsync) instead of one each: the turns that arrive while a batch is being written form the
  next batch, on the event loop. Each caller still gets its own acknowledgement, only after its turn is durable,
  and its own error.
* :attr:`Gate.busy` tells the background worker that a foreground call is in flight, so that
  extraction yields to recalls and observes (bridge/server.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

from engine.errors import DynmemError, Overloaded, ServiceUnavailable

T = TypeVar("T")
R = TypeVar("R")


class Gate:
    """At most ``limit`` calls in flight and ``queue`` callers waiting, each at most ``max_wait_s``.

    Used by the HTTP middleware on the event loop, before a request takes a thread or is parsed:
    waiting costs a coroutine, and a refusal costs almost nothing.
    """

    def __init__(self, name: str, limit: int, queue: int, max_wait_s: float) -> None:
        if limit < 1 or queue < 0 or max_wait_s < 0:
            raise ValueError("a gate needs limit >= 1, queue >= 0 and max_wait_s >= 0")
        self.name = name
        self.limit, self.queue, self.max_wait_s = limit, queue, max_wait_s
        self._slots: asyncio.Semaphore | None = None  # made on the serving loop at first use
        self.waiting = 0
        self.inflight = 0
        self.admitted = 0
        self.refused = 0
        self.last_done = float("-inf")  # time.monotonic() when the last admitted call ended

    @property
    def busy(self) -> bool:
        """Whether a call is in flight or waiting (read from other threads: a snapshot)."""
        return self.inflight + self.waiting > 0

    def quiet_for(self) -> float:
        """Seconds since the last call ended (0 while one is in flight or waiting)."""
        return 0.0 if self.busy else max(0.0, time.monotonic() - self.last_done)

    def _overloaded(self, why: str) -> Overloaded:
        self.refused += 1
        return Overloaded(f"the memory sidecar is busy ({self.name}: {why}); retry in {Overloaded.retry_after_s} s")

    @asynccontextmanager
    async def admit(self) -> AsyncIterator[None]:
        """Hold a slot for the block, or raise :class:`Overloaded` before the block runs."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        if self.inflight >= self.limit and self.waiting >= self.queue:
            raise self._overloaded(f"{self.inflight} calls in flight and {self.waiting} waiting")
        if self._slots.locked():  # no free slot: wait for one, at most max_wait_s
            self.waiting += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), timeout=self.max_wait_s)
            except TimeoutError:
                raise self._overloaded(f"no slot within {self.max_wait_s:g} s") from None
            finally:
                self.waiting -= 1
        else:
            await self._slots.acquire()  # free: taken at once (no await point before it is ours)
        self.inflight += 1
        self.admitted += 1
        try:
            yield
        finally:
            self.inflight -= 1
            self.last_done = time.monotonic()
            self._slots.release()


class GroupCommit(Generic[T, R]):
    """Group commit on the event loop: the items submitted while a batch is written go together in
    the next one (one ``append``, one SQLite transaction, one fsync for all of them).

    ``write`` takes a list of items and returns (awaitably) one result per item, in order. It runs
    on the loop, so that a caller's item goes to the log actor and its acknowledgement comes back
    with no thread in between (issue 15). If a batch fails with an error of the project (a request
    id reused with other content, say), its items are written one by one, so that each caller gets
    its own result or error. At most ``max_pending`` items wait; beyond that :meth:`submit` refuses
    with :class:`Overloaded`. A caller that gives up (``timeout_s``, or its request cancelled) while
    its item still waits is left out of the next batch: never written, never acknowledged.
    """

    def __init__(self, write: Callable[[list[T]], Awaitable[Sequence[R]]], max_batch: int = 256,
                 max_pending: int = 2048, timeout_s: float = 120.0) -> None:
        self._write = write
        self.max_batch, self.max_pending, self.timeout_s = max_batch, max_pending, timeout_s
        self._queue: list[tuple[T, asyncio.Future[R]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self.batches = 0

    @property
    def busy(self) -> bool:
        """Whether items wait or a batch is being written (read by the background worker's thread)."""
        return bool(self._queue) or self._writer is not None

    async def submit(self, item: T) -> R:
        """Write ``item`` (with whatever else is waiting) and return its result once durable."""
        if self._stopping:
            raise ServiceUnavailable("the memory sidecar is stopping")
        if len(self._queue) >= self.max_pending:
            raise Overloaded(f"the memory sidecar is busy ({len(self._queue)} observes waiting to be written); "
                             f"retry in {Overloaded.retry_after_s} s")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[R] = loop.create_future()
        self._queue.append((item, fut))
        if self._writer is None:
            self._loop = loop
            self._writer = loop.create_task(self._drain())
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout=self.timeout_s)
        except TimeoutError as exc:  # not acknowledged: the client sends it again (idempotent)
            fut.cancel()  # left out if still waiting; a batch already being written is written all the same
            raise ServiceUnavailable(f"the turn was not written within {self.timeout_s:g} s; send it again") from exc
        except asyncio.CancelledError:
            fut.cancel()
            raise

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
                batch = [(item, fut) for item, fut in batch if not fut.done()]  # done here: its caller gave up
                if batch:
                    await self._flush(batch)
        finally:  # no await between the last look at the queue and this: a new item starts a new writer
            self._writer = None

    async def _flush(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        self.batches += 1
        try:
            results = await self._write([item for item, _ in batch])
        except DynmemError as exc:
            if len(batch) == 1:
                _settle(batch[0][1], error=exc)
                return
            for item, fut in batch:  # one item's error must not become everyone's
                try:
                    _settle(fut, (await self._write([item]))[0])
                except Exception as one:  # delivered to that caller
                    _settle(fut, error=one)
            return
        except Exception as exc:  # an unexpected failure: every caller hears of it, none is acknowledged
            for _, fut in batch:
                _settle(fut, error=exc)
            return
        for (_, fut), res in zip(batch, results, strict=True):
            _settle(fut, res)

    async def aclose(self, timeout_s: float = 10.0) -> None:
        """Refuse new items and wait (at most ``timeout_s``) for the ones already taken."""
        self._stopping = True
        if self._writer is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._writer), timeout=timeout_s)
            except TimeoutError:
                pass

    def stop(self, timeout_s: float = 10.0) -> None:
        """:meth:`aclose` from a thread other than the loop's (the sidecar's stop, tests). A loop
        that has ended has no item left: its requests were answered before it stopped."""
        self._stopping = True
        loop = self._loop
        if loop is None or self._writer is None or loop.is_closed() or not loop.is_running():
            return
        try:
            asyncio.run_coroutine_threadsafe(self.aclose(timeout_s), loop).result(timeout_s + 1.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass


def _settle(fut: asyncio.Future[R], value: R | None = None, error: BaseException | None = None) -> None:
    """Give a caller its result or error, unless it gave up waiting."""
    if fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(value)  # type: ignore[arg-type]


def wait_while(busy: Callable[[], bool], max_s: float, step_s: float = 0.01) -> float:
    """Sleep while ``busy()`` is true, at most ``max_s``; returns the seconds waited."""
    t0 = time.monotonic()
    while busy() and time.monotonic() - t0 < max_s:
        time.sleep(step_s)
    return time.monotonic() - t0
