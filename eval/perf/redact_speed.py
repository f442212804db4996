"""Secret redaction cost per observed turn: ``engine.redact`` against the reference it replaced.

Run from the repository root::

    .venv/bin/python -m eval.perf.redact_speed --out eval/results/redact-speed.md

An observe redacts the user and the assistant text of a turn before it is stored
(``actors/store/log_store.py``), so one sample is ``redact(user)`` + ``redact(assistant)``
of one turn of the example history (``examples/shop-api-history.jsonl``). A second set
times a few long assistant texts: the longest replies of the history, and runs of
consecutive replies joined as one long answer. Reference (``eval.perf.redact_reference``)
and new are interleaved in one run, alternating which goes first, ``--rounds`` times;
a turn's time is its median over the rounds (wall clock, and process CPU time, which moves
less with the load of a shared machine), then p50/p95 are taken over the turns. Before
timing, every text's ``find_secrets`` and ``redact`` are checked to be identical in both
(an ``AssertionError`` otherwise).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engine import redact as new
from eval.perf import redact_reference as ref

ROOT = Path(__file__).resolve().parents[2]
HISTORY = ROOT / "examples" / "shop-api-history.jsonl"

Sample = tuple[str, ...]  # the texts one observe redacts


def turn_samples(path: Path = HISTORY) -> list[Sample]:
    """(user, assistant) of every turn of the history."""
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(str(t.get("user") or ""), str(t.get("assistant") or "")) for t in turns]


def long_samples(turns: Sequence[Sample], longest: int = 4, runs: int = 4, run_len: int = 8) -> list[Sample]:
    """The ``longest`` assistant replies, and ``runs`` runs of ``run_len`` consecutive replies joined."""
    replies = [a for _, a in turns if a]
    out: list[Sample] = [(a,) for a in sorted(replies, key=len, reverse=True)[:longest]]
    step = max(1, (len(replies) - run_len) // max(1, runs))
    for i in range(runs):
        chunk = replies[i * step:i * step + run_len]
        if chunk:
            out.append(("\n\n".join(chunk),))
    return out


def check_identical(samples: Sequence[Sample]) -> int:
    """Assert both implementations agree on every text; returns how many texts had a secret."""
    with_secret = 0
    for sample in samples:
        for text in sample:
            hits = [tuple(h) for h in new.find_secrets(text)]
            assert hits == [tuple(h) for h in ref.find_secrets(text)], text
            assert new.redact(text) == ref.redact(text), text
            with_secret += bool(hits)
    return with_secret


def _time(fn: Callable[[str], str], sample: Sample) -> tuple[float, float]:
    """Wall and CPU milliseconds of redacting every text of ``sample``."""
    c0, w0 = time.process_time(), time.perf_counter()
    for text in sample:
        fn(text)
    return (time.perf_counter() - w0) * 1000.0, (time.process_time() - c0) * 1000.0


def measure(samples: Sequence[Sample], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Per sample, the median over ``rounds`` of the wall and CPU ms, for "reference" and "new"."""
    impls = {"reference": ref.redact, "new": new.redact}
    for sample in samples[:20]:  # warm-up: regex caches, allocator
        for fn in impls.values():
            _time(fn, sample)
    wall: dict[str, list[list[float]]] = {k: [[] for _ in samples] for k in impls}
    cpu: dict[str, list[list[float]]] = {k: [[] for _ in samples] for k in impls}
    for r in range(rounds):
        order = list(impls) if r % 2 == 0 else list(reversed(impls))
        for i, sample in enumerate(samples):
            for name in order:
                w, c = _time(impls[name], sample)
                wall[name][i].append(w)
                cpu[name][i].append(c)
    return {name: {"wall": [statistics.median(x) for x in wall[name]],
                   "cpu": [statistics.median(x) for x in cpu[name]]} for name in impls}


def summarize_ms(samples_ms: Sequence[float]) -> dict[str, float]:
    """n, p50 and p95 (linear interpolation, as numpy.percentile and eval.perf.measure)."""
    q = statistics.quantiles(samples_ms, n=100, method="inclusive")
    return {"n": len(samples_ms), "p50_ms": q[49], "p95_ms": q[94]}


def _rows(label: str, times: dict[str, dict[str, list[float]]]) -> list[str]:
    ref_wall, new_wall = summarize_ms(times["reference"]["wall"]), summarize_ms(times["new"]["wall"])
    ref_cpu, new_cpu = summarize_ms(times["reference"]["cpu"]), summarize_ms(times["new"]["cpu"])
    total_ratio = sum(times["reference"]["wall"]) / max(1e-9, sum(times["new"]["wall"]))
    out = []
    for name, wall, cpu in (("reference (before)", ref_wall, ref_cpu), ("engine.redact (after)", new_wall, new_cpu)):
        out.append(f"| {label} | {name} | {wall['n']:.0f} | {wall['p50_ms']:.3f} | {wall['p95_ms']:.3f} | "
                   f"{cpu['p50_ms']:.3f} |")
    out.append(f"| {label} | **ratio before/after** | | **{ref_wall['p50_ms'] / max(1e-9, new_wall['p50_ms']):.1f}x** | "
               f"{ref_wall['p95_ms'] / max(1e-9, new_wall['p95_ms']):.1f}x | "
               f"{ref_cpu['p50_ms'] / max(1e-9, new_cpu['p50_ms']):.1f}x (sum of all: {total_ratio:.1f}x) |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", type=Path, default=None, help="write the markdown report here")
    args = ap.parse_args(argv)
    turns = turn_samples()
    longs = long_samples(turns)
    secrets = check_identical(turns + longs)
    turn_times = measure(turns, args.rounds)
    long_times = measure(longs, args.rounds)
    chars = [sum(map(len, s)) for s in turns]
    long_chars = [len(s[0]) for s in longs]
    lines = [
        "# Secret redaction per observed turn: before and after the prechecks",
        "",
        "`.venv/bin/python -m eval.perf.redact_speed --out eval/results/redact-speed.md` "
        f"({args.rounds} interleaved rounds; Python {platform.python_version()}, {platform.machine()}).",
        "",
        f"- turns: the {len(turns)} turns of `examples/shop-api-history.jsonl`, one sample = `redact(user)` + "
        f"`redact(assistant)` (median {statistics.median(chars):.0f} characters, max {max(chars)}).",
        f"- long replies: {len(longs)} long assistant texts (the longest replies, and runs of 8 consecutive replies "
        f"joined; {min(long_chars)} to {max(long_chars)} characters), one sample = one `redact`.",
        f"- outputs: `find_secrets` and `redact` identical for every text ({secrets} of them have a secret).",
        "- a sample's time is its median over the rounds; p50/p95 are over the samples. CPU is process time.",
        "",
        "| texts | implementation | samples | p50 (ms) | p95 (ms) | CPU p50 (ms) |",
        "| --- | --- | --- | --- | --- | --- |",
        *_rows("turns", turn_times),
        *_rows("long replies", long_times),
        "",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
