"""Query and bulk embedding with ONNX Runtime on the bundled MiniLM weights, against the numpy pass.

Run from the repository root (needs ``pip install 'onnx>=1.16,<2' 'onnxruntime>=1.20,<2'``)::

    flock /tmp/bench.lock nice -n 5 .venv/bin/python -m eval.perf.onnx_embed --texts 1000 --queries 200 \
        --out eval/results/embed-onnx.md

The ONNX graph is written here, op by op, from the same ``model.safetensors`` that
``actors.embedder.MiniLMEmbedder`` reads (no torch, no export, no hub): the BERT encoder
of all-MiniLM-L6-v2 up to the last hidden state; mean pooling and L2 normalisation stay in
numpy, as in the numpy pass. Variants:

- ``numpy fp32 before``: the padded pass that ``MiniLMEmbedder`` replaced
  (``eval.perf.minilm_reference``), the baseline;
- ``numpy fp32``: ``MiniLMEmbedder`` as shipped (packed tokens, in-place kernels);
- ``onnxruntime fp32``: the same weights in ONNX Runtime (graph optimisations on);
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
    """Write the MiniLM encoder (input_ids, attention_mask -> last hidden state) as an ONNX model."""
    import json

    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    from actors.embedder import bundled_model_dir

    root = bundled_model_dir()
    config = json.loads((root / "config.json").read_text(encoding="utf-8"))
    t = {k: np.asarray(v, dtype=np.float32) for k, v in load_file(str(root / "model.safetensors")).items()}
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    eps = float(config["layer_norm_eps"])
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: Sequence[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        w = const(prefix + ".wT", t[prefix + ".weight"].T.copy())
        b = const(prefix + ".b", t[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, w], out + "_mm"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(prefix + ".g", t[prefix + ".weight"]),
                                           const(prefix + ".beta", t[prefix + ".bias"])], out, axis=-1, epsilon=eps)

    head_dim = hidden // heads
    emb = "embeddings."
    word = node("Gather", [const("word", t[emb + "word_embeddings.weight"]), "input_ids"], "word_x")
    seq = node("Shape", ["input_ids"], "ids_shape")
    seq_len = node("Slice", [seq, const("one_i", np.array([1], np.int64)), const("two_i", np.array([2], np.int64))],
                   "seq_len")
    pos = node("Slice", [const("position", t[emb + "position_embeddings.weight"]), const("zero_i", np.array([0], np.int64)),
                         seq_len], "pos_x")
    x = node("Add", [node("Add", [word, pos], "wp"), const("tok_type", t[emb + "token_type_embeddings.weight"][0])], "emb_sum")
    x = layer_norm(x, emb + "LayerNorm", "x0")
    # additive mask: 0 for tokens, the most negative float32 for padding; (b, 1, 1, s)
    inv = node("Sub", [const("one_f", np.array(1.0, np.float32)), "attention_mask"], "inv_mask")
    bias = node("Mul", [inv, const("neg", np.array(np.finfo(np.float32).min, np.float32))], "mask_bias_2d")
    bias = node("Unsqueeze", [bias, const("axes_12", np.array([1, 2], np.int64))], "mask_bias")
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        qkv_w = np.concatenate([t[a + "query.weight"], t[a + "key.weight"], t[a + "value.weight"]]).T.copy()
        qkv_b = np.concatenate([t[a + "query.bias"], t[a + "key.bias"], t[a + "value.bias"]])
        qkv = node("Add", [node("MatMul", [x, const(f"l{i}.qkv_w", qkv_w)], f"l{i}.qkv_mm"), const(f"l{i}.qkv_b", qkv_b)],
                   f"l{i}.qkv")
        qkv = node("Reshape", [qkv, const(f"l{i}.shape5", np.array([0, 0, 3, heads, head_dim], np.int64))], f"l{i}.qkv5")
        qkv = node("Transpose", [qkv], f"l{i}.qkvT", perm=[2, 0, 3, 1, 4])
        q, k, v = (node("Gather", [qkv, const(f"l{i}.idx{j}", np.array(j, np.int64))], f"l{i}.{n}", axis=0)
                   for j, n in enumerate("qkv"))
        kt = node("Transpose", [k], f"l{i}.kT", perm=[0, 1, 3, 2])
        scores = node("Add", [node("Mul", [node("MatMul", [q, kt], f"l{i}.qk"), scale], f"l{i}.qk_s"), bias], f"l{i}.scores")
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}.ctx4")], f"l{i}.ctxT", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, const(f"l{i}.shape3", np.array([0, 0, hidden], np.int64))], f"l{i}.ctx")
        att = linear(ctx, p + "attention.output.dense", f"l{i}.att")
        x = layer_norm(node("Add", [att, x], f"l{i}.res1"), p + "attention.output.LayerNorm", f"l{i}.x1")
        up = linear(x, p + "intermediate.dense", f"l{i}.up")
        gelu = node("Mul", [node("Mul", [up, const(f"l{i}.half", np.array(0.5, np.float32))], f"l{i}.halfx"),
                            node("Add", [const(f"l{i}.one", np.array(1.0, np.float32)),
                                         node("Erf", [node("Mul", [up, const(f"l{i}.rsqrt2", np.array(1 / np.sqrt(2), np.float32))],
                                                           f"l{i}.scaled")], f"l{i}.erf")], f"l{i}.erf1")], f"l{i}.gelu")
        down = linear(gelu, p + "output.dense", f"l{i}.down")
        x = layer_norm(node("Add", [down, x], f"l{i}.res2"), p + "output.LayerNorm", f"l{i}.x2")
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="out"))
    graph = helper.make_graph(
        nodes, "minilm",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["b", "s"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["b", "s", hidden])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


class OrtEmbedder:
    """MiniLMEmbedder's tokenisation, batching and pooling around an ONNX Runtime session."""

    def __init__(self, model: Path, threads: int, batch_size: int = 16) -> None:
        import onnxruntime as ort

        from actors.embedder import MiniLMEmbedder

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.base = MiniLMEmbedder(batch_size=batch_size)
        self.base.load()
        self.base._forward = self._forward  # type: ignore[method-assign]

    def _forward(self, ids: Sequence[np.ndarray]) -> np.ndarray:
        from actors.embedder import _l2_normalise

        width = max(len(a) for a in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for row, a in enumerate(ids):
            input_ids[row, : len(a)] = a
            mask[row, : len(a)] = 1.0
        (x,) = self.session.run(["hidden"], {"input_ids": input_ids, "attention_mask": mask})
        summed = np.einsum("bsh,bs->bh", x, mask)
        return _l2_normalise(summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9)))

    @property
    def batch_size(self) -> int:
        return self.base.batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self.base.batch_size = value

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.base.embed(texts)


VARIANTS = ("numpy fp32 before", "numpy fp32", "onnxruntime fp32", "onnxruntime int8")
PINNED = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "minilm_pinned.npz"


def make_variant(variant: str, model_dir: Path, threads: int, batch_size: int) -> Any:
    """The embedder of a variant name (see :data:`VARIANTS`)."""
    from actors.embedder import MiniLMEmbedder
    from eval.perf.minilm_reference import PaddedMiniLM

    if variant == "numpy fp32":
        return MiniLMEmbedder(batch_size=batch_size)
    if variant == "numpy fp32 before":
        return PaddedMiniLM(batch_size=batch_size)
    return OrtEmbedder(model_dir / ("int8.onnx" if variant.endswith("int8") else "fp32.onnx"), threads, batch_size)


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
