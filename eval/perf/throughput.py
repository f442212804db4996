"""Bulk embedding throughput of the bundled MiniLM: backend x batch size x threads, per-batch cost.

Run from the repository root (each setting in its own subprocess, since OpenBLAS reads
``OPENBLAS_NUM_THREADS`` once at import)::

    flock /tmp/bench.lock nice -n 5 .venv/bin/python -m eval.perf.throughput --texts 2000 \
        --batch-sizes 8,16,32,64,128 --threads 1,2 --backends onnx,numpy --blas-cores env

Prints one row per setting and writes ``eval/results/embed-throughput.md``. Texts are the
synthetic memories of ``eval.perf.synth`` (the ones ``dynmem bench perf`` imports).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "embed-throughput.md"


def _measure(n_texts: int, batch_sizes: Sequence[int], backend: str, threads: int) -> list[dict[str, Any]]:
    import threadpoolctl

    from actors.embedder import MiniLMEmbedder
    from eval.perf.synth import memory_texts

    texts = [t for t, _ in memory_texts(n_texts, seed=3)]
    model = MiniLMEmbedder(batch_size=batch_sizes[0], backend=backend, threads=threads)
    model.load()
    model.embed(texts[:64])  # warm-up
    core = next((i.get("architecture", "") for i in threadpoolctl.threadpool_info()
                 if i.get("internal_api") == "openblas"), "")
    rows = []
    for bs in batch_sizes:
        model.batch_size = bs
        c0, t0 = time.process_time(), time.perf_counter()
        model.embed(texts)
        dt, dcpu = time.perf_counter() - t0, time.process_time() - c0
        batches = -(-len(texts) // bs)
        rows.append({"backend": backend, "batch_size": bs, "blas_core": core if backend == "numpy" else "-", "texts_per_s": round(len(texts) / dt, 1),
                     "texts_per_cpu_s": round(len(texts) / max(dcpu, 1e-9), 1),
                     "ms_per_batch": round(1000 * dt / batches, 2), "seconds": round(dt, 2),
                     "loadavg": round(os.getloadavg()[0], 2)})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--batch-sizes", default="8,16,32,64,128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--backends", default="onnx,numpy", help="forward passes of MiniLMEmbedder to measure")
    ap.add_argument("--blas-cores", default="env,unset",
                    help="OPENBLAS_CORETYPE per run: 'env' as the environment has it, 'unset' for OpenBLAS's own "
                         "pick, or a core name (Haswell, SkylakeX...)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    if args.child:
        threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
        print(json.dumps(_measure(args.texts, sizes, args.backends, threads)))
        return 0
    table = []
    settings = [(b, t, c) for b in args.backends.split(",") for t in [int(x) for x in args.threads.split(",")]
                for c in (args.blas_cores.split(",") if b == "numpy" else ["env"])]
    for backend, threads, core in settings:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
        if core == "unset":
            env.pop("OPENBLAS_CORETYPE", None)
        elif core != "env":
            env["OPENBLAS_CORETYPE"] = core
        out = subprocess.run([sys.executable, "-m", "eval.perf.throughput", "--child", "--texts", str(args.texts),
                              "--batch-sizes", args.batch_sizes, "--backends", backend], env=env, check=True,
                             capture_output=True, text=True)
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            table.append({"threads": threads, **row})
            print(f"{backend} threads {threads} core {row['blas_core']} batch {row['batch_size']:>4}: "
                  f"{row['texts_per_s']:>7.1f} texts/s, {row['ms_per_batch']:.1f} ms/batch", flush=True)
    command = (f"flock /tmp/bench.lock nice -n 5 .venv/bin/python -m eval.perf.throughput --texts {args.texts} "
               f"--batch-sizes {args.batch_sizes} --threads {args.threads} --backends {args.backends} "
               f"--blas-cores {args.blas_cores}")
    lines = ["# Bulk embedding throughput (bundled MiniLM: ONNX Runtime and numpy forward passes)", "",
             f"Command: `{command}`; one run on a shared 2-core machine (read the ratios). Texts: synthetic "
             "memories of `eval.perf.synth`; the load average is read as each setting finishes.", "",
             "| backend | threads | OpenBLAS core | batch size | texts/s | texts per CPU-second | ms per batch "
             "| load average |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['backend']} | {r['threads']} | {r['blas_core']} | {r['batch_size']} | {r['texts_per_s']} | {r['texts_per_cpu_s']} | "
              f"{r['ms_per_batch']} | {r['loadavg']} |" for r in table]
    Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
