"""``dynmem bench ...``: the benchmarks of eval/, each runnable serially or fanned out on Ray.

Each benchmark lives in its own package with ``run.main(args) -> int``; this module only
declares the arguments so that ``dynmem --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

#: The canonical reports (README numbers) live here; only ``--canonical`` writes them.
CANONICAL_RESULTS = Path(__file__).resolve().parent / "results"


def report_dir(args: argparse.Namespace) -> Path | None:
    """Where a benchmark writes its markdown and plot: ``--out DIR``, eval/results with ``--canonical``,
    else nowhere (the numbers are printed; a run on another file never overwrites the canonical report)."""
    if getattr(args, "out", None):
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        return out
    return CANONICAL_RESULTS if getattr(args, "canonical", False) else None


def _dispatch(module: str) -> object:
    def run(args: argparse.Namespace) -> int:
        return int(importlib.import_module(module).main(args))

    return run


def add_bench_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    bench = sub.add_parser("bench", help="run a benchmark (tide, peers, locomo, perf, all)")
    bsub = bench.add_subparsers(dest="bench", metavar="BENCHMARK")
    bsub.required = True
    par = argparse.ArgumentParser(add_help=False)
    par.add_argument("--parallel", type=int, default=1, help="fan out over N Ray workers (1: serial, no Ray)")
    par.add_argument("--out", metavar="DIR", help="write the markdown report and plot into DIR (default: none, print only)")
    par.add_argument("--canonical", action="store_true",
                     help="write the report into eval/results/ (the canonical numbers of the README)")

    s = bsub.add_parser("tide", parents=[common, par], help="revision benchmark over synthetic project histories")
    s.add_argument("--seed", type=int, default=0, help="generator seed")
    s.add_argument("--level", choices=["pipeline", "engine"], default="pipeline",
                   help="pipeline: raw turns through extraction; engine: facts given as memories")
    s.add_argument("--streams", type=int, default=12, help="number of synthetic project histories")
    s.add_argument("--system", default="dynmem",
                   help="dynmem (default), or a reference/baseline: none, oracle, recency, bm25, no-supersede")
    s.add_argument("--variant", choices=["shipped", "heldout", "dev"], default="shipped",
                   help="wordings and value pools: shipped (eval/tide/vocab.py), heldout "
                        "(eval/tide/heldout_vocab.py, a different draw per seed) or dev (eval/tide/dev_vocab.py, "
                        "development paraphrases whose failures are listed)")
    s.set_defaults(func=_dispatch("eval.tide.run"))

    s = bsub.add_parser("peers", parents=[common, par], help="the opencode-memory retrieval set, scored with its own metrics")
    s.add_argument("--file", help="scenario file (default ../shared/peers/opencode-memory/dev.json)")
    s.set_defaults(func=_dispatch("eval.peers.run"))

    s = bsub.add_parser("locomo", parents=[common, par], help="turn-level evidence retrieval on LoCoMo")
    s.add_argument("--file", help="locomo10.json (default ../shared/eval-data/locomo/locomo10.json)")
    s.add_argument("--conversations", type=int, default=10, help="how many conversations (1-10)")
    s.set_defaults(func=_dispatch("eval.locomo.run"))

    s = bsub.add_parser("chaos", parents=[common],
                        help="random actor kills during replays on Ray: lost, duplicated, dead, differing (all 0)")
    s.add_argument("--kills", type=int, default=20, help="how many actors to kill in all")
    s.add_argument("--projects", type=int, default=3, help="projects replayed at once (each a copy of the example)")
    s.add_argument("--interval", type=float, default=0.8, help="seconds between kills")
    s.add_argument("--seed", type=int, default=0, help="seed of the choice of victims")
    s.add_argument("--out", metavar="DIR", help="write the markdown report into DIR (default: none, print only)")
    s.add_argument("--canonical", action="store_true", help="write the report into eval/results/")
    s.set_defaults(func=_dispatch("eval.chaos.run"))

    s = bsub.add_parser("load", parents=[common, par],
                        help="recall and observe latency of a real sidecar under concurrent clients while extraction runs")
    s.add_argument("--clients", type=int, default=50, help="concurrent HTTP clients")
    s.add_argument("--seconds", type=float, default=60.0, help="how long the clients run")
    s.add_argument("--observe-share", type=float, default=0.5, help="share of the calls that are observes (rest: recalls)")
    s.add_argument("--seed-turns", type=int, default=178, help="turns observed before the run (extraction work)")
    s.add_argument("--seed", type=int, default=0, help="seed of the clients' choices")
    s.add_argument("--client-processes", type=int, default=5, help="processes the clients are spread over")
    s.set_defaults(func=_dispatch("eval.perf.load"))

    s = bsub.add_parser("idle", parents=[common, par],
                        help="RSS of idle projects' actors, their release after the idle timeout, and their comeback")
    s.add_argument("--projects", type=int, default=6, help="how many projects")
    s.add_argument("--idle-s", type=float, default=5.0, help="runtime.idle_release_s for the run")
    s.add_argument("--turns", type=int, default=20, help="turns of the example history per project")
    s.set_defaults(func=_dispatch("eval.perf.idle"))

    s = bsub.add_parser("independent", parents=[common, par],
                        help="replay histories written without reading the code, and probe them")
    s.add_argument("--dir", action="append", help="a data folder (history.jsonl + probes.json); repeatable "
                   "(default: every folder of eval/independent/data)")
    s.add_argument("--ray", action="store_true", help="run the pipeline on Ray (default: in one process)")
    s.set_defaults(func=_dispatch("eval.independent.run"))

    s = bsub.add_parser("qa", parents=[common, par],
                        help="recall alone: notes stored as memories, questions written without reading the code")
    s.add_argument("--parts", help="comma-separated parts of eval/qa/data (default: 1,2,3,4; 4 is held out)")
    s.set_defaults(func=_dispatch("eval.qa.run"))

    s = bsub.add_parser("all", parents=[common, par], help="regenerate every report of eval/results/ (about 15 minutes)")
    s.set_defaults(func=_dispatch("eval.all"))

    s = bsub.add_parser("perf", parents=[common, par],
                        help="recall latency by store size, observe latency, replay throughput, memory",
                        description="Recall latency by store size (in process, Ray actors, HTTP sidecar), observe "
                                    "acknowledgement latency, replay throughput and actor memory. Runs serially: "
                                    "--parallel is ignored to keep measurements clean. --data-dir is the parent of "
                                    "the temporary stores (removed at the end).")
    s.add_argument("--sizes", default="1000,10000",
                   help="store sizes for recall latency (default 1000,10000; 100000 adds about 15 min of embedding)")
    s.add_argument("--queries", type=int, default=200, help="timed recall queries per size and path (after 20 warm-up)")
    s.add_argument("--replay-turns", type=int, default=2000,
                   help="length of the repeated example history replayed on Ray (0: only the 178-turn example)")
    s.add_argument("--parts", default="inprocess,http,ray,replay",
                   help="comma-separated subset of inprocess,http,ray,replay")
    s.add_argument("--stores", help="keep the built stores in this folder and reuse them in later runs (building "
                   "100,000 memories embeds 100k sentences); a store is reused only if it was built from the same "
                   "synthetic memories by the same embedder")
    s.add_argument("--projects", type=int, default=1, metavar="N",
                   help="with N > 1, also measure one data directory holding N projects of the largest size each "
                        "(opt-in; --sizes ...,100000 --projects 10 is 1,000,000 memories): cold open of one project "
                        "and of all, recall in one project with all open (inprocess and ray parts), actor RSS, disk "
                        "per memory, each beside the single-project numbers of the same run")
    s.set_defaults(func=_dispatch("eval.perf.run"))
