"""Bulk embedding throughput of the bundled MiniLM: batch size x BLAS threads, per-batch cost.

Run from the repository root (each thread count in its own subprocess, since OpenBLAS reads
``OPENBLAS_NUM_THREADS`` once at import)::

    .venv/bin/python -m eval.perf.throughput --texts 2000 --batch-sizes 8,16,32,64,128 --threads 1,2

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
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results" / "embed-throughput.md"


def _measure(n_texts: int, batch_sizes: Sequence[int]) -> list[dict[str, float]]:
    from actors.embedder import MiniLMEmbedder
    from eval.perf.synth import memory_texts

    texts = [t for t, _ in memory_texts(n_texts, seed=3)]
    model = MiniLMEmbedder(batch_size=batch_sizes[0])
    model.load()
    model.embed(texts[:64])  # warm-up
    rows = []
    for bs in batch_sizes:
        model.batch_size = bs
        t0 = time.perf_counter()
        model.embed(texts)
        dt = time.perf_counter() - t0
        batches = -(-len(texts) // bs)
        rows.append({"batch_size": bs, "texts_per_s": round(len(texts) / dt, 1),
                     "ms_per_batch": round(1000 * dt / batches, 2), "seconds": round(dt, 2)})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--batch-sizes", default="8,16,32,64,128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    if args.child:
        print(json.dumps(_measure(args.texts, sizes)))
        return 0
    table = []
    for threads in [int(x) for x in args.threads.split(",")]:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
        out = subprocess.run([sys.executable, "-m", "eval.perf.throughput", "--child", "--texts", str(args.texts),
                              "--batch-sizes", args.batch_sizes], env=env, check=True, capture_output=True, text=True)
        for row in json.loads(out.stdout.strip().splitlines()[-1]):
            table.append({"threads": threads, **row})
            print(f"threads {threads} batch {row['batch_size']:>4}: {row['texts_per_s']:>7.1f} texts/s, "
                  f"{row['ms_per_batch']:.1f} ms/batch", flush=True)
    lines = ["# Bulk embedding throughput (bundled MiniLM, numpy forward pass)", "",
             f"Command: `.venv/bin/python -m eval.perf.throughput --texts {args.texts} --batch-sizes {args.batch_sizes} "
             f"--threads {args.threads}`; one run on a shared 2-core machine (read the ratios).", "",
             "| BLAS threads | batch size | texts/s | ms per batch |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['threads']} | {r['batch_size']} | {r['texts_per_s']} | {r['ms_per_batch']} |" for r in table]
    Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
