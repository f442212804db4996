"""The bundled MiniLM encoder as an ONNX graph, run by ONNX Runtime: the fast path of ``MiniLMEmbedder``.

The graph is written op by op with the ``onnx`` package from the same ``model.safetensors``
that the numpy pass reads (no torch, no export step, no hub, nothing cached on disk): the BERT
encoder of all-MiniLM-L6-v2 from token ids and an attention mask to the last hidden state.
Mean pooling and L2 normalisation stay in ``actors/embedder.py``, shared with the numpy pass,
so both backends give the same vectors (``tests/actors/test_embedder.py`` pins them on each).

Measured (eval/results/embed-onnx.md, 2 cores): one query 4.5 ms in ONNX Runtime against 6-7 ms
for the numpy pass on one thread, and about twice the texts per second in batches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.errors import IndexError_

__all__ = ["available", "build_model", "Session"]


def available() -> bool:
    """Whether ``onnx`` and ``onnxruntime`` can be imported (``[embedder] backend = "auto"`` asks this)."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def build_model(tensors: Mapping[str, np.ndarray], config: Mapping[str, Any]) -> bytes:
    """The serialised ONNX model of the encoder: ``input_ids`` (int64, b x s) and ``attention_mask``
    (float32, b x s, 1 for a token and 0 for padding) to ``hidden`` (float32, b x s x hidden).

    Raises:
        KeyError: a weight the config implies is missing.
    """
    from onnx import TensorProto, helper, numpy_helper

    def f32(key: str) -> np.ndarray:
        return np.asarray(tensors[key], dtype=np.float32)

    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    eps = float(config["layer_norm_eps"])
    head_dim = hidden // heads
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: Sequence[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        # torch Linear stores (out, in); the graph multiplies x @ w, so transpose once here.
        w = const(prefix + ".wT", f32(prefix + ".weight").T.copy())
        return node("Add", [node("MatMul", [x, w], out + ".mm"), const(prefix + ".b", f32(prefix + ".bias"))], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(prefix + ".g", f32(prefix + ".weight")),
                                           const(prefix + ".beta", f32(prefix + ".bias"))], out, axis=-1, epsilon=eps)

    emb = "embeddings."
    word = node("Gather", [const("word", f32(emb + "word_embeddings.weight")), "input_ids"], "word_x")
    seq_len = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), const("one_i", np.array([1], np.int64)),
                             const("two_i", np.array([2], np.int64))], "seq_len")
    # Right padding: position i of every row is token i, so the first s rows of the table serve all rows.
    pos = node("Slice", [const("position", f32(emb + "position_embeddings.weight")),
                         const("zero_i", np.array([0], np.int64)), seq_len], "pos_x")
    # token_type_ids are all 0 for single sentences
    x = node("Add", [node("Add", [word, pos], "word_pos"), const("token_type", f32(emb + "token_type_embeddings.weight")[0])],
             "embedded")
    x = layer_norm(x, emb + "LayerNorm", "x0")
    # Additive mask (b, 1, 1, s): 0 for a token, the most negative float32 for padding, so that
    # exp() gives exactly 0 and a pad cannot change a text's result (as in transformers).
    inverted = node("Sub", [const("one_f", np.array(1.0, np.float32)), "attention_mask"], "mask_inverted")
    bias = node("Mul", [inverted, const("most_negative", np.array(np.finfo(np.float32).min, np.float32))], "mask_2d")
    bias = node("Unsqueeze", [bias, const("axes_12", np.array([1, 2], np.int64))], "mask_bias")
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    half = const("half", np.array(0.5, np.float32))
    one = const("one", np.array(1.0, np.float32))
    rsqrt2 = const("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    for i in range(int(config["num_hidden_layers"])):
        p, a, n = f"encoder.layer.{i}.", f"encoder.layer.{i}.attention.self.", f"l{i}."
        # query|key|value fused into one matrix product, as in the numpy pass
        qkv_w = np.concatenate([f32(a + "query.weight"), f32(a + "key.weight"), f32(a + "value.weight")]).T.copy()
        qkv_b = np.concatenate([f32(a + "query.bias"), f32(a + "key.bias"), f32(a + "value.bias")])
        qkv = node("Add", [node("MatMul", [x, const(n + "qkv_w", qkv_w)], n + "qkv_mm"), const(n + "qkv_b", qkv_b)],
                   n + "qkv")
        qkv = node("Reshape", [qkv, const(n + "shape5", np.array([0, 0, 3, heads, head_dim], np.int64))], n + "qkv5")
        qkv = node("Transpose", [qkv], n + "qkv_t", perm=[2, 0, 3, 1, 4])  # (3, b, heads, s, d)
        q, k, v = (node("Gather", [qkv, const(n + f"pick{j}", np.array(j, np.int64))], n + name, axis=0)
                   for j, name in enumerate("qkv"))
        scores = node("MatMul", [q, node("Transpose", [k], n + "k_t", perm=[0, 1, 3, 2])], n + "qk")
        scores = node("Add", [node("Mul", [scores, scale], n + "qk_scaled"), bias], n + "scores")
        context = node("MatMul", [node("Softmax", [scores], n + "probs", axis=-1), v], n + "context4")
        context = node("Transpose", [context], n + "context_t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, const(n + "shape3", np.array([0, 0, hidden], np.int64))], n + "context")
        attended = linear(context, p + "attention.output.dense", n + "attended")
        x = layer_norm(node("Add", [attended, x], n + "residual1"), p + "attention.output.LayerNorm", n + "x1")
        up = linear(x, p + "intermediate.dense", n + "up")
        # the exact (erf) GELU: x/2 * (1 + erf(x / sqrt 2)); ONNX Runtime fuses it into one kernel
        erf = node("Erf", [node("Mul", [up, rsqrt2], n + "up_scaled")], n + "erf")
        gelu = node("Mul", [node("Mul", [up, half], n + "up_half"), node("Add", [one, erf], n + "erf_plus1")], n + "gelu")
        down = linear(gelu, p + "output.dense", n + "down")
        x = layer_norm(node("Add", [down, x], n + "residual2"), p + "output.LayerNorm", n + "x2")
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2 encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "tokens"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # the oldest IR that opset 17 needs; any onnxruntime >= 1.20 reads it
    data: bytes = model.SerializeToString()
    return data


class Session:
    """An ONNX Runtime session over the encoder: padded id rows in, unit sentence vectors out.

    Args:
        model: the bytes of :func:`build_model`.
        threads: ONNX Runtime's intra-op threads. Its threads do not spin while idle, because on a
            2-core machine a spinning pool takes the core that the actors' other work needs.

    Raises:
        IndexError_: ONNX Runtime cannot load the model.
    """

    def __init__(self, model: bytes, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: its warnings are about nodes it keeps on the CPU
        try:
            self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types, not one base
            raise IndexError_(f"ONNX Runtime cannot load the MiniLM graph: {exc}") from exc

    def hidden(self, ids: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The last hidden state of texts (token-id arrays) padded to the longest: ``(b, s, h)`` and the mask ``(b, s)``."""
        width = max(len(a) for a in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for row, a in enumerate(ids):
            input_ids[row, : len(a)] = a
            mask[row, : len(a)] = 1.0
        (x,) = self._session.run(["hidden"], {"input_ids": input_ids, "attention_mask": mask})
        return np.asarray(x, dtype=np.float32), mask
