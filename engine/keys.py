"""Belief keys, values and fingerprints.

A *key* says what a memory is about (``api server port``); a *belief* is the value it
asserts (``9090``). Both are normalised here, in one place, so that the extractor, the
engine and the benchmarks agree on when two sentences talk about the same thing.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\"'`.,;:!?()\[\]{}]+|[\s\"'`.,;:!?()\[\]{}]+$")
_ARTICLES = re.compile(r"\b(the|a|an|our|my|this|that)\b\s*", re.IGNORECASE)
# Words of time that say when, not what: "payments module now owner" is "payments module owner".
_WHEN_WORDS = re.compile(r"\b(now|currently|still|anymore|again|today|nowadays)\b\s*", re.IGNORECASE)


def normalize_text(text: str) -> str:
    """Case-fold, NFKC-normalise and collapse whitespace."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=1 << 16)  # pure; opening a store normalises every memory's key, and keys recur
def normalize_key(key: str) -> str:
    """Normalise a belief key: lower case, no articles, single spaces, no edge punctuation."""
    key = normalize_text(key).replace("_", " ").replace("-", " ")
    key = _WHEN_WORDS.sub("", _ARTICLES.sub("", key))
    return _EDGE_PUNCT.sub("", _SPACE.sub(" ", key)).strip()


@lru_cache(maxsize=1 << 16)
def normalize_belief(belief: str) -> str:
    """Normalise a belief value, keeping identifiers (paths, versions, flags) intact."""
    belief = normalize_text(belief)
    return _EDGE_PUNCT.sub("", belief).strip()


def fingerprint(scope: str, key: str, belief: str, text: str, negated: bool = False) -> str:
    """Hash of the normalised value within a scope, for exact dedup and tombstones.

    With a key, two paraphrases asserting the same value for it share a fingerprint;
    without one, the normalised text is the value.
    """
    if key and belief:
        body = f"k:{normalize_key(key)}\x1f{normalize_belief(belief)}\x1f{int(negated)}"
    elif belief and negated:
        body = f"n:{normalize_belief(belief)}"
    else:
        body = "t:" + re.sub(r"[^\w./:-]+", " ", normalize_text(text)).strip()
    return hashlib.sha256(f"{scope}\x1e{body}".encode()).hexdigest()[:32]


def key_kind(key: str) -> str:
    """The kind of thing a key names: its last word (``api server port`` -> ``port``)."""
    words = normalize_key(key).split()
    return words[-1] if words else ""


def resolve_key(key: str, vector: np.ndarray, known: Mapping[str, np.ndarray], min_cos: float) -> str:
    """The known key that means what ``key`` means, else ``key`` itself.

    Keys are decided by meaning: a new key is read as a known one when both name the same
    kind of thing (same last word) and their embeddings are at least ``min_cos`` apart in
    cosine; the closest such key wins (ties by name). Vectors are unit length.

    Args:
        key: the normalised key of a new candidate.
        vector: the embedding of ``key``.
        known: normalised keys already in use in the scope, with their embeddings.
        min_cos: the threshold (``ingest.tau_key``).
    """
    if not key or key in known:
        return key
    kind = key_kind(key)
    best, best_cos = key, min_cos
    for other in sorted(known):
        if key_kind(other) != kind:
            continue
        cos = float(np.dot(vector, known[other]))
        if cos >= best_cos and (best == key or cos > best_cos):
            best, best_cos = other, cos
    return best

