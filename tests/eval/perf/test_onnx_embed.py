"""The ONNX graph file of eval/perf/onnx_embed.py gives the numpy MiniLM's vectors (the claim of embed-onnx.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

def test_the_onnx_graph_of_the_bundled_weights_gives_the_numpy_vectors(tmp_path: Path) -> None:
    from actors.embedder import MiniLMEmbedder
    from eval.perf.onnx_embed import build_graph, ort_embedder

    build_graph(tmp_path / "fp32.onnx")
    texts = ["The billing API listens on port 8080.", "how do I run the tests?",
             "parseHTTPRequest in src/api/main.py times out when Redis is slow " * 3]
    ref = MiniLMEmbedder(backend="numpy").embed(texts)
    got = ort_embedder(tmp_path / "fp32.onnx", threads=1, batch_size=16).embed(texts)
    assert got.shape == ref.shape == (3, 384)
    assert float(np.abs(got - ref).max()) < 1e-5
    assert float((got[0] * got[1]).sum()) < 0.99  # positive control: different texts, different vectors
