"""Observe acknowledgement through the Ray actors, by the pause between observes.

Run from the repository root::

    .venv/bin/python -m eval.perf.observe_gap --out eval/results/observe-gap.md

``dynmem bench perf`` times observes back to back. A developer's turns come seconds apart,
and on a shared virtual machine a process that slept is slower to wake: every hop of an
observe (driver -> log actor -> driver) pays it. This probe times, in one run and one local
Ray, the same observe through the actor graph (``Pipeline.observe``, the path of the sidecar
minus HTTP) and a trivial actor round trip, each back to back and with pauses between calls,
so that the part of an acknowledgement that is the machine waking up can be told apart from
the part that is ours (redaction, the log's fsynced transaction).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eval.perf.measure import emit_report, machine_facts, summarize_ms

GAPS_S = (0.0, 0.05, 0.3, 1.0)


def _timed(call: Callable[[int], object], n: int, gap_s: float, start: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        call(start + i)
        out.append((time.perf_counter() - t) * 1000.0)
        if gap_s:
            time.sleep(gap_s)
    return out


def run(n: int, gaps: Sequence[float]) -> dict[str, Any]:
    import ray

    from actors.config import load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from eval.perf.run import _observe_turns

    @ray.remote
    class Echo:
        def ping(self, i: int) -> int:
            return i

    root = Path(tempfile.mkdtemp(prefix="dynmem-observe-gap-"))
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    rows: list[dict[str, Any]] = []
    try:
        rt = Runtime(root / "data", load_settings(None), use_ray=True)
        try:
            pipe = Pipeline(rt)
            turns = _observe_turns(n * len(gaps) * 2 + 20, "gap")
            pipe.observe(turns[:20])  # opens the project's log actor
            echo = Echo.remote()
            ray.get(echo.ping.remote(0))
            at = 20
            for gap in gaps:
                lat_obs = _timed(lambda i: pipe.observe([turns[i]]), n, gap, at)
                at += n
                lat_rt = _timed(lambda i: ray.get(echo.ping.remote(i)), n, gap, 0)
                rows.append({"gap_s": gap, "observe": summarize_ms(lat_obs), "round_trip": summarize_ms(lat_rt)})
        finally:
            rt.shutdown()
    finally:
        if started:
            ray.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    return {"machine": machine_facts(), "n": n, "rows": rows, "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def render(doc: dict[str, Any], command: str) -> str:
    m = doc["machine"]
    lines = [
        "# Observe acknowledgement through Ray, by the pause between calls",
        "",
        f"Reproduce: `{command}`",
        "",
        f"Machine: {m.get('nproc')} cores, {m.get('cpu')} ({m.get('simd')} vector unit); load average "
        f"{m.get('loadavg_start')} at the start, {doc.get('loadavg_end')} at the end (shared: compare rows of one run).",
        f"{doc['n']} calls per row, one local Ray. `observe` is `Pipeline.observe` of one turn through the log actor "
        "(redaction, one fsynced transaction, its extract job queued); `round trip` is a call to a trivial actor "
        "that returns its argument. Same run, same processes: compare the rows.",
        "",
        "| pause between calls (s) | observe p50 | observe p95 | round trip p50 | round trip p95 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in doc["rows"]:
        o, t = r["observe"], r["round_trip"]
        lines.append(f"| {r['gap_s']:g} | {o['p50_ms']:.2f} | {o['p95_ms']:.2f} | {t['p50_ms']:.2f} | {t['p95_ms']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=60, help="calls per row")
    p.add_argument("--gaps", default=",".join(str(g) for g in GAPS_S), help="pauses in seconds, comma-separated")
    p.add_argument("--out", type=Path, default=None, help="write the markdown report (and a .json beside it)")
    args = p.parse_args(argv)
    gaps = [float(x) for x in args.gaps.split(",") if x.strip()]
    doc = run(args.n, gaps)
    command = "python -m eval.perf.observe_gap" + (f" --out {args.out}" if args.out else "")
    text = render(doc, command)
    emit_report(text, doc, args.out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
