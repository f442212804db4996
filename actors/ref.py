"""Ref: calls a service's method on a plain object or on a Ray actor handle, typed.

A call names the method by reference, not by string: ``ref.call(LogService.append, turns)``.
mypy checks the arguments against the method's signature and gives the call its return
type, so a renamed method or a changed argument fails type checking rather than on Ray.
The typed clients of ``actors/clients.py`` are the only callers outside tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Concatenate, Generic, NoReturn, ParamSpec, TypeVar, cast

from engine.errors import ActorDied, DynmemError, ServiceUnavailable

S = TypeVar("S")  # the service class a Ref calls
P = ParamSpec("P")
R = TypeVar("R")


class Pending(Generic[R]):
    """A call in flight: a Ray ``ObjectRef``, or the settled outcome of an in-process call."""

    def __init__(self, object_ref: Any = None, *, value: Any = None, error: BaseException | None = None,
                 local: bool = False) -> None:
        # Any: Ray's ObjectRef, or the value of a call whose type R the caller's signature fixed
        self.object_ref = object_ref
        self.value = value
        self.error = error
        self.local = local


class Ref(Generic[S]):
    """Calls a plain object or a Ray actor handle the same way, unwrapping Ray's errors."""

    def __init__(self, target: Any, remote: bool) -> None:
        # Any: a service instance, or a Ray ActorHandle (whose typing cannot follow the class)
        self.target = target
        self.remote = remote
        # A local target serves one call at a time, like an actor (remote refs are pickled: no lock).
        self._lock = threading.RLock() if not remote else None

    # How long a call waits for a dead actor to be restarted by Ray (an actor takes 0.4-0.6 s
    # to start, FACTS.md; a project's engine also reloads its memories and re-indexes them).
    RESTART_WAIT_S = 30.0

    def call(self, method: Callable[Concatenate[S, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Call ``method`` and wait for its result; if the actor died, call again once Ray has
        restarted it. Safe because every state-changing method is idempotent on its keys
        (request ids, unit hashes, job ids and receipts) or checks the job's state first."""
        return self.call_in(None, method, *args, **kwargs)

    def call_in(self, group: str | None, method: Callable[Concatenate[S, P], R], *args: P.args,
                **kwargs: P.kwargs) -> R:
        """:meth:`call` in one of the actor's concurrency groups (its own thread and queue on Ray;
        in process, where one lock serves every call, the group changes nothing)."""
        deadline = time.monotonic() + self.RESTART_WAIT_S
        pause = 0.05
        while True:
            try:
                return self.result(self.submit_in(group, method, *args, **kwargs))
            except ActorDied:
                if not self.remote or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def submit(self, method: Callable[Concatenate[S, P], R], *args: P.args, **kwargs: P.kwargs) -> Pending[R]:
        """Start a call of ``method``; :meth:`result` waits for it."""
        return self.submit_in(None, method, *args, **kwargs)

    def submit_in(self, group: str | None, method: Callable[Concatenate[S, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> Pending[R]:
        """:meth:`submit` in a concurrency group of the actor (``None``: its default group)."""
        name = method.__name__
        if not self.remote:
            try:
                assert self._lock is not None
                with self._lock:
                    return Pending(value=getattr(self.target, name)(*args, **kwargs), local=True)
            except Exception as exc:  # delivered by result(), like a Ray future
                return Pending(error=exc, local=True)
        bound = getattr(self.target, name)
        if group is not None:
            bound = bound.options(concurrency_group=group)
        return Pending(bound.remote(*args, **kwargs))

    @staticmethod
    def ready(pending: Pending[Any], timeout_s: float) -> bool:
        """Whether a call's outcome (value or error) is there, waiting at most ``timeout_s`` for it;
        an in-process call is always settled."""
        if pending.local:
            return True
        import ray

        done, _ = ray.wait([pending.object_ref], num_returns=1, timeout=max(0.0, timeout_s))
        return bool(done)

    @staticmethod
    def result(pending: Pending[R], timeout_s: float | None = None) -> R:
        """The value of a call started by :meth:`submit`; Ray's errors become the tree of ``engine/errors.py``."""
        if pending.local:
            if pending.error is not None:
                raise pending.error
            return cast(R, pending.value)
        import ray

        try:
            return cast(R, ray.get(pending.object_ref, timeout=timeout_s))
        except Exception as exc:
            _reraise(exc)

    @staticmethod
    async def result_async(pending: Pending[R]) -> R:
        """:meth:`result` awaited on an event loop: no thread blocks on the reply (the sidecar's
        recall route awaits the engine's answer on its loop, one thread hop less each way)."""
        if pending.local:
            return Ref.result(pending)
        import asyncio

        try:
            return cast(R, await asyncio.wrap_future(pending.object_ref.future()))
        except Exception as exc:
            _reraise(exc)


def _reraise(exc: Exception) -> NoReturn:
    """Raise Ray's error ``exc`` as the tree of ``engine/errors.py`` (an actor's own error as it was raised)."""
    from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

    if isinstance(exc, RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, DynmemError):
            raise cause from None
        raise exc
    if isinstance(exc, RayActorError):
        # One line, no Ray internals (actor id, pid, address): the actor restarts on its own.
        raise ActorDied("a worker of the memory pipeline stopped and is being restarted; try again") from exc
    if isinstance(exc, GetTimeoutError):
        raise ServiceUnavailable("an actor did not answer in time") from exc
    raise exc
