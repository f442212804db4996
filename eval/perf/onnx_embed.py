"""Query and bulk embedding with ONNX Runtime on the bundled MiniLM weights, against the numpy pass.

Run from the repository root::

    flock /tmp/bench.lock nice -n 5 .venv/bin/python -m eval.perf.onnx_embed --texts 1000 --queries 200 \
        --out eval/results/embed-onnx.md

The ONNX graph is the one ``actors.minilm_onnx`` writes op by op from the bundled
``model.safetensors`` (the BERT encoder up to the last hidden state; pooling and L2
normalisation stay in numpy, shared with the numpy pass). Variants:

- ``numpy fp32 before``: the padded pass that ``MiniLMEmbedder`` replaced
  (``eval.perf.minilm_reference``), the baseline;
- ``numpy fp32``: ``MiniLMEmbedder`` as shipped (packed tokens, in-place kernels);
- ``onnxruntime fp32``: the same weights in ONNX Runtime (graph optimisations on), as shipped;
- ``onnxruntime int8``: the fp32 graph after ``quantize_dynamic`` (int8 weights, dynamic
  int8 activations for the matrix products).

For each, one thread and two (and for the numpy ones, ``OPENBLAS_CORETYPE`` as the environment
sets it and unset, i.e. OpenBLAS's own kernel choice; the column names the kernels used): the p50/p95 wall time and median CPU
time of one query at a time (the recall path), and texts/s on synthetic memories in batches
of ``--batch-size`` (the import path). Quality is checked against the pinned vectors of
``tests/fixtures/minilm_pinned.npz`` (max |diff| and lowest cosine), and whether each of the
twelve questions of ``eval.perf.embedders`` still finds its fact first. Prints a table and,
with ``--out FILE``, writes it as markdown.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def build_graph(path: Path) -> None:
    """Write the MiniLM encoder graph that ``actors.minilm_onnx`` runs (input_ids, attention_mask -> hidden)."""
    import json

    from safetensors.numpy import load_file

    from actors.embedder import bundled_model_dir
    from actors.minilm_onnx import build_model

    root = bundled_model_dir()
    config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    path.write_bytes(build_model(load_file(str(root / "model.safetensors")), config))


def ort_embedder(model: Path, threads: int, batch_size: int) -> Any:
    """``MiniLMEmbedder`` on ONNX Runtime with the session of the model file given (the int8 graph)."""
    from actors import minilm_onnx
    from actors.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=batch_size, backend="onnx", threads=threads)
    embedder.load()
    embedder._session = minilm_onnx.Session(model.read_bytes(), threads)
    return embedder


VARIANTS = ("numpy fp32 before", "numpy fp32", "onnxruntime fp32", "onnxruntime int8")
PINNED = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "minilm_pinned.npz"


def make_variant(variant: str, model_dir: Path, threads: int, batch_size: int) -> Any:
    """The embedder of a variant name (see :data:`VARIANTS`)."""
    from actors.embedder import MiniLMEmbedder
    from eval.perf.minilm_reference import PaddedMiniLM

    if variant == "numpy fp32":
        return MiniLMEmbedder(batch_size=batch_size, backend="numpy")
    if variant == "numpy fp32 before":
        return PaddedMiniLM(batch_size=batch_size)
    return ort_embedder(model_dir / ("int8.onnx" if variant.endswith("int8") else "fp32.onnx"), threads, batch_size)


def _child(variant: str, model_dir: Path, n_texts: int, n_queries: int, batch_size: int) -> dict[str, Any]:
    import threadpoolctl

    from eval.perf.embedders import FACTS, QUESTIONS
    from eval.perf.synth import memory_texts, queries

    texts = [t for t, _ in memory_texts(n_texts, seed=3)]
    qs = queries(n_queries, seed=4)
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    model = make_variant(variant, model_dir, threads, batch_size)
    model.embed(texts[:64])
    for q in qs[:20]:
        model.embed([q])
    lat, cpu = [], []
    for q in qs:
        c0, t0 = time.process_time(), time.perf_counter()
        model.embed([q])
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    c0, t0 = time.process_time(), time.perf_counter()
    model.embed(texts)
    dt, dcpu = time.perf_counter() - t0, time.process_time() - c0
    pinned = np.load(PINNED, allow_pickle=False)
    got = model.embed([str(t) for t in pinned["texts"]])
    f, q = model.embed(FACTS), model.embed(QUESTIONS)
    top1 = int(np.sum(np.argmax(q @ f.T, axis=1) == np.arange(len(QUESTIONS))))
    info = threadpoolctl.threadpool_info()
    return {"variant": variant, "threads": threads, "blas_core": next((i.get("architecture", "") for i in info
                                                                       if i.get("internal_api") == "openblas"), ""),
            "query_p50_ms": round(float(np.percentile(lat, 50)), 2),
            "query_p95_ms": round(float(np.percentile(lat, 95)), 2),
            "query_cpu_ms": round(float(np.median(cpu)), 2), "batch_size": batch_size,
            "texts_per_s": round(len(texts) / dt, 1), "texts_per_cpu_s": round(len(texts) / max(dcpu, 1e-9), 1),
            "max_diff_vs_pinned": float(f"{np.abs(got - pinned['vectors']).max():.2e}"),
            "min_cosine_vs_pinned": round(float(np.sum(got * pinned["vectors"], axis=1).min()), 6),
            "top1": f"{top1}/{len(QUESTIONS)}", "loadavg": round(os.getloadavg()[0], 2)}


def main(argv: Sequence[str] | None = None) -> int:
    import json
    import subprocess
    import sys

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--blas-cores", default="env,unset",
                    help="OPENBLAS_CORETYPE per run of the numpy variants: 'env' as the environment has it, "
                         "'unset' for OpenBLAS's own pick, or a core name (Haswell, SkylakeX...)")
    ap.add_argument("--out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model-dir", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, Path(args.model_dir), args.texts, args.queries, args.batch_size)))
        return 0
    variants = args.variants.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dynmem-onnx-") as tmp:
        folder = Path(tmp)
        if any(v.startswith("onnxruntime") for v in variants):
            from onnxruntime.quantization import QuantType, quantize_dynamic

            build_graph(folder / "fp32.onnx")
            quantize_dynamic(str(folder / "fp32.onnx"), str(folder / "int8.onnx"), weight_type=QuantType.QInt8)
        for threads in [int(x) for x in args.threads.split(",")]:
            for variant in variants:
                cores = args.blas_cores.split(",") if variant.startswith("numpy") else ["env"]
                for core in cores:
                    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
                    if core == "unset":
                        env.pop("OPENBLAS_CORETYPE", None)
                    elif core != "env":
                        env["OPENBLAS_CORETYPE"] = core
                    out = subprocess.run([sys.executable, "-m", "eval.perf.onnx_embed", "--child", variant,
                                          "--model-dir", str(folder), "--texts", str(args.texts), "--queries",
                                          str(args.queries), "--batch-size", str(args.batch_size)],
                                         env=env, check=True, capture_output=True, text=True)
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                    row["blas_core"] = row["blas_core"] if variant.startswith("numpy") else "-"
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    lines = ["| embedder | threads | OpenBLAS core | one query p50 (ms) | p95 (ms) | query CPU (ms) "
             f"| texts/s (batches of {args.batch_size}) | texts per CPU-second | max diff to pinned "
             "| lowest cosine to pinned | 12-question top-1 | load average |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['variant']} | {r['threads']} | {r['blas_core']} | {r['query_p50_ms']} | {r['query_p95_ms']} | "
              f"{r['query_cpu_ms']} | {r['texts_per_s']} | {r['texts_per_cpu_s']} | {r['max_diff_vs_pinned']} | "
              f"{r['min_cosine_vs_pinned']} | {r['top1']} | {r['loadavg']} |" for r in rows]
    print("\n".join(lines))
    if args.out:
        command = (f"flock /tmp/bench.lock nice -n 5 .venv/bin/python -m eval.perf.onnx_embed --texts {args.texts} "
                   f"--queries {args.queries} --threads {args.threads} --batch-size {args.batch_size} "
                   f"--variants '{args.variants}' --blas-cores {args.blas_cores} --out {args.out}")
        Path(args.out).write_text("# MiniLM embedding: numpy passes against ONNX Runtime (fp32, int8)\n\n"
                                  f"Command: `{command}`\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
