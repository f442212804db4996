from __future__ import annotations

from eval.all import RUNS, _parser


def test_every_run_of_bench_all_is_a_valid_benchmark_command() -> None:
    parser = _parser()
    for run in RUNS:
        args = parser.parse_args(["bench", *run])
        assert callable(args.func), run
    assert {r[0] for r in RUNS} == {"tide", "peers", "locomo", "qa", "perf"}
