"""Belief keys, values and fingerprints.

A *key* says what a memory is about (``api server port``); a *belief* is the value it
asserts (``9090``). Both are normalised here, in one place, so that the extractor, the
engine and the benchmarks agree on when two sentences talk about the same thing.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\"'`.,;:!?()\[\]{}]+|[\s\"'`.,;:!?()\[\]{}]+$")
_ARTICLES = re.compile(r"\b(the|a|an|our|my|this|that)\b\s*", re.IGNORECASE)


def normalize_text(text: str) -> str:
    """Case-fold, NFKC-normalise and collapse whitespace."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip()


def normalize_key(key: str) -> str:
    """Normalise a belief key: lower case, no articles, single spaces, no edge punctuation."""
    key = normalize_text(key).replace("_", " ").replace("-", " ")
    key = _ARTICLES.sub("", key)
    return _EDGE_PUNCT.sub("", _SPACE.sub(" ", key)).strip()


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
