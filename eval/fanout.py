"""Run independent benchmark items serially or as Ray tasks, with the same results either way.

Each item is handled by a plain function that builds its own in-process ``Runtime``
(``use_ray=False``): a Ray task is then just a process that runs that function, so the
serial and the parallel paths execute the same code and their results can be compared
item for item. Results come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def ray_for(parallel: int, address: str | None = None) -> Iterator[bool]:
    """Start (and afterwards stop) a local Ray when ``parallel > 1`` and none is running.

    Yields whether Ray is in use. A Ray that was already initialised (a test session, a
    cluster the caller joined) is left running: it belongs to its owner.
    """
    if parallel <= 1:
        yield False
        return
    import ray

    from actors.launch import init_ray

    started = not ray.is_initialized()
    if started:
        init_ray(address)
    try:
        yield True
    finally:
        if started:
            ray.shutdown()


def fan_out(fn: Callable[..., R], items: Sequence[T], *args: Any, parallel: int = 1,
            progress: Callable[[int], None] | None = None) -> list[R]:
    """``[fn(item, *args) for item in items]``, on at most ``parallel`` Ray tasks at a time.

    Args:
        fn: a module-level function (Ray pickles it by reference).
        parallel: 1 runs in this process; N > 1 needs an initialised Ray (see ``ray_for``).
        progress: called with 1 after each finished item.
    """
    if parallel <= 1:
        out = []
        for item in items:
            out.append(fn(item, *args))
            if progress:
                progress(1)
        return out
    import ray

    # num_cpus=0: each task is mostly numpy in one thread; the cap on in-flight tasks is
    # what bounds the load (the same convention as the I/O actors in actors/launch.py).
    remote = ray.remote(num_cpus=0)(fn)
    shared = [ray.put(a) for a in args]
    results: dict[int, R] = {}
    pending: dict[Any, int] = {}
    queue = list(enumerate(items))
    while queue or pending:
        while queue and len(pending) < parallel:
            i, item = queue.pop(0)
            pending[remote.remote(item, *shared)] = i
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            results[pending.pop(ref)] = ray.get(ref)
            if progress:
                progress(1)
    return [results[i] for i in range(len(items))]
