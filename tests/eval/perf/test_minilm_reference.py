from __future__ import annotations

from pathlib import Path

import numpy as np

from actors.embedder import MiniLMEmbedder
from eval.perf.minilm_reference import PaddedMiniLM

PINNED = Path(__file__).resolve().parents[2] / "fixtures" / "minilm_pinned.npz"


def test_the_baseline_pass_still_gives_the_pinned_vectors_and_the_shipped_pass_agrees() -> None:
    data = np.load(PINNED, allow_pickle=False)
    texts, want = [str(t) for t in data["texts"]], data["vectors"]
    before = PaddedMiniLM(batch_size=8).embed(texts)
    assert float(np.abs(before - want).max()) <= 1e-5  # the baseline timed is the pass that wrote the pin
    now = MiniLMEmbedder(batch_size=8).embed(texts)
    assert float(np.abs(now - before).max()) <= 1e-5
    # control: the comparison sees a wrong row (two texts swapped)
    assert float(np.abs(now[[1, 0, *range(2, len(texts))]] - before).max()) > 1e-2
