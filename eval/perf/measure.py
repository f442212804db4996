"""Timing, percentile, process-memory and machine-fact helpers for ``dynmem bench perf``."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def summarize_ms(samples_ms: Sequence[float]) -> dict[str, float | int]:
    """n, p50, p95, p99, mean and max of latencies in milliseconds (rounded to 0.01 ms)."""
    a = np.asarray(samples_ms, dtype=np.float64)
    if a.size == 0:
        return {"n": 0, "p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "max_ms": 0.0}
    p50, p95, p99 = np.percentile(a, [50, 95, 99]).tolist()
    return {"n": int(a.size), "p50_ms": round(p50, 3), "p95_ms": round(p95, 3), "p99_ms": round(p99, 3),
            "mean_ms": round(float(a.mean()), 3), "max_ms": round(float(a.max()), 3)}


def time_each(fn: Callable[[Any], object], items: Iterable[Any], warmup: Sequence[Any] = ()) -> list[float]:
    """Call ``fn`` on each warm-up item (untimed), then on each item; the per-call wall times in ms."""
    for item in warmup:
        fn(item)
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def rss_mb(pid: int | None = None) -> float | None:
    """Resident set size of a process in MiB (None if it is gone or psutil is missing)."""
    try:
        import psutil

        return round(psutil.Process(pid or os.getpid()).memory_info().rss / 2**20, 1)
    except Exception:  # psutil missing, or the process ended
        return None


def actor_pid(handle: Any) -> int | None:
    """The pid of a Ray actor's worker process, from the GCS actor table (None when unknown)."""
    for _ in range(20):  # the GCS may learn the pid a moment after the actor answered
        try:
            from ray._private import state

            info = state.actors(actor_id=handle._actor_id.hex())
            pid = int(info.get("Pid") or 0)
        except Exception:  # a private API: degrade to "unknown" rather than fail the benchmark
            return None
        if pid:
            return pid
        time.sleep(0.1)
    return None


def descendants(pid: int) -> list[int]:
    """Pids of every live descendant of ``pid``."""
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except Exception:
        return []


def alive(pids: Iterable[int]) -> list[int]:
    """The pids that still run (zombies count as gone)."""
    import psutil

    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            continue
    return out


def wait_gone(pids: Sequence[int], timeout_s: float = 20.0) -> list[int]:
    """Wait until the processes end; the ones still alive after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    left = alive(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = alive(left)
    return left


def machine_facts() -> dict[str, Any]:
    """CPU, core count, load, memory and library versions of this run."""
    import faiss
    import numpy

    cpu = platform.processor() or ""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                if cpu and flags:
                    break
    except OSError:
        pass
    # The widest vector unit the kernels of ONNX Runtime and OpenBLAS can use: the same model name
    # ("AMD EPYC") has come with and without AVX-512 here, and the query embedding took 2.7 ms on
    # one and 6.1 ms on the other (eval/results/perf.notes.md).
    simd = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "older" if flags else "unknown"
    facts: dict[str, Any] = {
        "nproc": os.cpu_count(), "cpu": cpu, "simd": simd, "platform": platform.platform(),
        "python": platform.python_version(), "numpy": numpy.__version__, "faiss": faiss.__version__,
    }
    facts["blas_thread_env"] = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                                if k in os.environ}
    try:
        import ray

        facts["ray"] = ray.__version__
    except ImportError:
        pass
    try:
        import psutil

        facts["memory_gib"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    try:
        facts["loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return facts


def emit_report(text: str, doc: Any, out: Path | None) -> None:
    """Print a probe's markdown report and, with ``out``, write it there with its data as JSON beside it."""
    if out is not None:
        out.write_text(text, encoding="utf-8")
        out.with_suffix(".json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    print(text)
