"""The small learned models of the rules client: logistic regression over hashed features.

``durable`` (is a clause worth remembering?) and ``removal`` (does a message say a named thing
is gone?) share this: features are strings hashed into ``DIM`` buckets, training is full-batch
gradient descent with fixed order and fixed steps (no randomness, so a rerun gives the same
weights bit for bit), and the shipped form is the non-zero weights with a decision threshold.
Pure: no I/O besides reading shipped weights once, no clock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from importlib import resources

import numpy as np

__all__ = ["DIM", "fit", "hashed", "load", "logit", "pick_threshold", "precision_recall", "probability", "to_json"]

DIM = 1 << 14  # hashed feature space


def _hash(feature: str) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=4).digest(), "little") % DIM


def hashed(feats: Iterable[str]) -> list[int]:
    """The sorted, distinct bucket indices of feature strings."""
    return sorted({_hash(f) for f in feats})


def fit(rows: Sequence[Sequence[int]], labels: Sequence[int], *, l2: float = 1e-4, epochs: int = 3000,
        lr: float = 8.0) -> np.ndarray:
    """Weights of a logistic regression over hashed rows (full-batch gradient descent, deterministic).

    Classes are weighted to equal total weight, so a corpus with more of one label does not
    shift the decision line. Each row is scaled by 1/sqrt(its length).
    """
    if not rows:
        raise ValueError("training needs at least one example")
    y = np.array([float(v) for v in labels])
    pos = max(1.0, float(y.sum()))
    neg = max(1.0, float(len(y) - y.sum()))
    cw = np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg))
    # A sparse design matrix as (row, column, value) triples: bincount is an exact, ordered sum.
    r_idx = np.concatenate([np.full(len(idx), i) for i, idx in enumerate(rows)])
    c_idx = np.concatenate([np.asarray(idx, dtype=np.int64) for idx in rows])
    val = np.concatenate([np.full(len(idx), 1.0 / math.sqrt(len(idx))) for idx in rows])
    w = np.zeros(DIM)
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-np.bincount(r_idx, weights=w[c_idx] * val, minlength=len(rows))))
        g = (p - y) * cw / len(y)
        w -= lr * (np.bincount(c_idx, weights=g[r_idx] * val, minlength=DIM) + l2 * w)
    return w


def logit(w: np.ndarray | dict[int, float], idx: Iterable[int]) -> float:
    idx = list(idx)
    if not idx:
        return 0.0
    if isinstance(w, dict):
        total = sum(w.get(i, 0.0) for i in idx)
    else:
        total = float(w[idx].sum())
    return total / math.sqrt(len(idx))


def probability(w: np.ndarray | dict[int, float], idx: Iterable[int]) -> float:
    return 1.0 / (1.0 + math.exp(-logit(w, idx)))


def to_json(w: np.ndarray, threshold: float, meta: dict[str, object]) -> str:
    """The shipped form: the non-zero weights, rounded, with the decision threshold and provenance."""
    nz = {str(i): round(float(v), 5) for i, v in enumerate(w) if abs(v) >= 1e-5}
    return json.dumps({"dim": DIM, "threshold": threshold, "meta": meta, "weights": nz}, sort_keys=True, indent=0) + "\n"


@functools.lru_cache(maxsize=4)
def load(filename: str, trainer: str) -> tuple[dict[int, float], float]:
    """Shipped weights and threshold from ``actors.llm.data`` (read once)."""
    raw = json.loads(resources.files("actors.llm.data").joinpath(filename).read_text(encoding="utf-8"))
    if raw.get("dim") != DIM:
        raise ValueError(f"{filename}: feature dimension {raw.get('dim')} != {DIM}; retrain with {trainer}")
    return {int(k): float(v) for k, v in raw["weights"].items()}, float(raw["threshold"])


def precision_recall(scored: Iterable[tuple[float, int]], threshold: float) -> tuple[float, float, int, int]:
    """Precision, recall, true and false positives of ``(probability, label)`` pairs at ``threshold``."""
    pairs = list(scored)
    tp = sum(1 for p, y in pairs if p >= threshold and y)
    fp = sum(1 for p, y in pairs if p >= threshold and not y)
    return tp / max(1, tp + fp), tp / max(1, sum(y for _, y in pairs)), tp, fp


def pick_threshold(scored: Iterable[tuple[float, int]], min_precision: float) -> float:
    """The lowest threshold in 0.30..0.95 (most recall) whose precision is at least ``min_precision``."""
    pairs = list(scored)
    for t in [x / 100 for x in range(30, 96)]:
        kept = [y for p, y in pairs if p >= t]
        if kept and sum(kept) / len(kept) >= min_precision:
            return t
    return 0.95
