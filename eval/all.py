"""``dynmem bench all``: regenerate every report of eval/results/ with one command.

Runs, in order: TIDE (pipeline and engine level, the references and baselines, seed 0),
the opencode-memory dev set (default gate and the stricter theta 0.42), LoCoMo (developer and
conversation extraction profiles) and the performance benchmark. Each benchmark writes its
own markdown report and plot; this prints one line per run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time

RUNS: tuple[tuple[str, ...], ...] = (
    ("tide", "--seed", "0"),
    ("tide", "--seed", "0", "--level", "engine"),
    ("tide", "--seed", "0", "--level", "engine", "--system", "no-supersede"),
    ("tide", "--seed", "0", "--system", "bm25"),
    ("tide", "--seed", "0", "--system", "recency"),
    ("tide", "--seed", "0", "--system", "none"),
    ("tide", "--seed", "0", "--system", "oracle"),
    ("peers",),
    ("peers", "--config", "eval/peers/configs/theta-0.42.toml", "--out", "eval/results/peers-theta-0.42"),
    ("locomo",),
    ("locomo", "--config", "eval/locomo/configs/conversation.toml", "--out", "eval/results/locomo-conversation"),
    ("qa",),
    ("perf",),
)


def _parser() -> argparse.ArgumentParser:
    from eval.cli import add_bench_parser

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir")
    common.add_argument("--config")
    common.add_argument("--json", action="store_true")
    p = argparse.ArgumentParser(prog="dynmem")
    add_bench_parser(p.add_subparsers(dest="command"), common)
    return p


def main(args: argparse.Namespace) -> int:
    parser = _parser()
    failed = 0
    for run in RUNS:
        argv = ["bench", *run, "--parallel", str(max(1, args.parallel))] if run[0] != "perf" else ["bench", *run]
        if "--out" not in run:
            argv.append("--canonical")  # `bench all` is the one that regenerates the canonical reports
        sub = parser.parse_args(argv)
        t0 = time.perf_counter()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = int(sub.func(sub))
        failed += code != 0
        print(f"{'ok  ' if code == 0 else 'FAIL'} dynmem {' '.join(argv)}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return 1 if failed else 0
