"""Is this clause worth remembering? A small learned classifier, not a word list.

A clause of a turn is *durable* when it states something that holds for the project from
now on (a fact, a decision, a change, the assistant confirming a change it made), and not
durable when it asks, requests, plans, proposes, complains, reports a one-off event or a
measurement, or chats. Hand-written lists of such words fit the sentences they were written
against; this model is a logistic regression over hashed features of the clause's words,
word pairs, its first and last words and the *shapes* of its values (a number, a path, a
URL, code, an ENV_NAME), trained on a labelled corpus written for this purpose by someone
who never read the extractor or any evaluation data (``actors/llm/data/durable.jsonl``,
its README says how it was made).

The weights ship in ``actors/llm/data/durable_weights.json`` and are rebuilt, bit for bit,
by ``python -m eval.durable.train`` (deterministic: fixed order, fixed steps, no
randomness). Pure: no I/O besides reading the weights once, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from actors.llm import linear

__all__ = ["DIM", "Example", "features", "load_weights", "score", "shaped", "train"]

DIM = linear.DIM
_WEIGHTS = "durable_weights.json"

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("<url>", re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)),
    ("<code>", re.compile(r"`[^`]+`")),
    ("<env>", re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")),
    ("<path>", re.compile(r"(?:~|\.{1,2})?/[\w.@~-]+(?:/[\w.@~-]*)*|\b[\w-]+(?:/[\w.-]+)+/?")),
    ("<host>", re.compile(r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)+\.[a-z]{2,}\b", re.I)),
    ("<ver>", re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")),
    ("<num>", re.compile(r"\b\d+(?:[.,:]\d+)*[a-z%]*\b", re.I)),
)
_WORD = re.compile(r"<\w+>|[a-z][a-z'’-]*|[?!:]")


def shaped(text: str) -> str:
    out = text
    for name, pattern in _SHAPES:
        out = pattern.sub(f" {name} ", out)
    return out


def _bucket(n: int) -> str:
    return "len:" + ("1-3" if n <= 3 else "4-7" if n <= 7 else "8-14" if n <= 14 else "15-25" if n <= 25 else "26+")


def features(text: str, speaker: str) -> list[int]:
    """The hashed feature indices of a clause said by ``speaker`` ("user" or "assistant")."""
    text_shaped = shaped(text.strip())
    words = _WORD.findall(text_shaped.lower())
    feats = [f"s:{speaker}", _bucket(len(words)), "bias"]
    if words:
        feats += [f"first:{words[0]}", f"last:{words[-1]}", f"s:{speaker}|first:{words[0]}"]
        if len(words) > 1:
            feats.append(f"first2:{words[0]} {words[1]}")
    if text.rstrip().endswith("?"):
        feats.append("ends:?")
    if re.match(r"\s*(?:[-*•]|\d+[.)])\s", text):
        feats.append("bullet")
    feats += [f"w:{w}" for w in words]
    feats += [f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    feats += [f"c:{w[i:i + 4]}" for w in words if len(w) > 4 and not w.startswith("<") for i in range(len(w) - 3)]
    return linear.hashed(feats)


class Example:
    """One labelled clause of the training corpus."""

    __slots__ = ("label", "speaker", "text")

    def __init__(self, text: str, speaker: str, label: int) -> None:
        self.text, self.speaker, self.label = text, speaker, label


def train(examples: Sequence[Example], *, l2: float = 1e-4, epochs: int = 3000, lr: float = 8.0) -> np.ndarray:
    """Weights of a logistic regression over ``features`` (``linear.fit``: deterministic, classes weighted equally)."""
    if not examples:
        raise ValueError("training needs at least one example")
    return linear.fit([features(e.text, e.speaker) for e in examples], [e.label for e in examples], l2=l2,
                      epochs=epochs, lr=lr)


def probability(w: np.ndarray | dict[int, float], text: str, speaker: str) -> float:
    """P(durable) of a clause under weights ``w``."""
    return linear.probability(w, features(text, speaker))


to_json = linear.to_json


def load_weights() -> tuple[dict[int, float], float]:
    """The shipped weights and threshold (read once from the package)."""
    return linear.load(_WEIGHTS, "eval.durable.train")


def score(text: str, speaker: str) -> float:
    """P(durable) of a clause under the shipped weights."""
    w, _ = load_weights()
    return probability(w, text, speaker)


def is_durable(text: str, speaker: str) -> bool:
    """Whether the shipped model reads the clause as a durable statement."""
    w, threshold = load_weights()
    return probability(w, text, speaker) >= threshold
