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

from engine.values import CLOCK_TIME, WEEKDAY

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
    cosine; the closest such key wins (ties by name). Vectors are unit length. A key of one word
    (``interval``) is the scope's only key of that kind, when it has exactly one.

    Two keys whose subjects each name something the other does not (``frontend package manager``,
    ``backend package manager``: :func:`siblings`) are two settings, however close their vectors
    (0.93 here). A key close to two such siblings (``package manager``) names neither of them. This
    depends on order: a part's key that arrives when only the key without a part is known
    (``package manager``) lands on it, as every part's key did before parts were keyed.

    Args:
        key: the normalised key of a new candidate.
        vector: the embedding of ``key``.
        known: normalised keys already in use in the scope, with their embeddings.
        min_cos: the threshold (``ingest.tau_key``).
    """
    if not key or key in known:
        return key
    kind = key_kind(key)
    if key == kind and min_cos <= 1.0:
        # A bare head ("the window is 40 minutes") names the one setting of that kind the scope knows
        # ("backup window"), as a definite description does; with two or more it names none.
        heads = [other for other in known if key_kind(other) == kind]
        if len(heads) == 1:
            return heads[0]
    best, best_cos = key, min_cos
    near = []
    for other in sorted(known):
        if key_kind(other) != kind or siblings(key, other):
            continue
        cos = float(np.dot(vector, known[other]))
        if cos >= min_cos:
            near.append(other)
        if cos >= best_cos and (best == key or cos > best_cos):
            best, best_cos = other, cos
    if len(near) > 1 and any(siblings(a, b) for a in near for b in near):
        return key  # "package manager" near both "frontend package manager" and "backend package manager": neither
    return best



# The kinds a value has by its shape alone, whatever the words around it. Extractive memories
# (the speaker's own clause) are keyed ``<subject> <kind>`` with one of these; a key written by a
# pattern reading ends in the word of its reading instead (``port``, ``interval``, ``owner``...).
SHAPE_KINDS = frozenset({"code", "day", "host", "location", "name", "number", "time", "version"})
_DAY = re.compile(WEEKDAY, re.IGNORECASE)
_VERSION = re.compile(r"v?\d+\.\d+(?:\.\d+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:\s*[a-z%]+)?", re.IGNORECASE)  # "20", "6 minutes", "512mb"
_TIME = re.compile(rf"{CLOCK_TIME}(?:\s*[a-z]+)?", re.IGNORECASE)  # "03:30", "03:30 utc", "9:15pm"
_HOST = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d+)?", re.IGNORECASE)
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?")


def value_kind(belief: str) -> str:
    """The kind of a value by its shape: ``version``, ``time``, ``day`` (of the week), ``number``, ``host`` (a URL, or a
    dotted name with two dots or a port), ``location`` (a path), else ``name`` (a word, a tool, a
    person, code, a file name: "db.internal" and "deploy.yml" cannot be told apart by shape)."""
    value = normalize_belief(belief).strip("`")
    if not value:
        return ""
    if _IPV4.fullmatch(value):
        return "host"  # four numbers, with or without a port: an address, never a version
    if _VERSION.fullmatch(value):
        return "version"
    if _TIME.fullmatch(value):
        return "time"
    if _DAY.fullmatch(value):
        return "day"
    if _NUMBER.fullmatch(value):
        return "number"
    if "://" in value or (_HOST.fullmatch(value) and (value.count(".") >= 2 or ":" in value)):
        return "host"  # a name of two dots or more, or with a port ("pg.corp.net", "db.lan:5432")
    if "/" in value:
        return "location"
    return "name"


def key_subject(key: str) -> str:
    """What a key is about without its kind: ``nightly export time`` -> ``nightly export``; a key
    that does not end in a shape kind is all subject (``measurement interval``)."""
    words = normalize_key(key).split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1] in SHAPE_KINDS else " ".join(words)


def slot_text(key: str, belief: str) -> str:
    """A key with the kind of its value: the slot that one value at a time fills
    (``measurement interval`` holding ``6 minutes`` -> ``measurement interval number``)."""
    kind = value_kind(belief)
    subject = key_subject(key)
    return f"{subject} {kind}".strip() if kind and subject else ""


def same_word(a: str, b: str) -> bool:
    """One word, give or take an ending ("counter"/"counters", "ingest"/"ingestion"), or a common short
    form of it ("db"/"database", "prod"/"production")."""
    if a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))):
        return True
    return _SHORT_FORMS.get(a, a) == _SHORT_FORMS.get(b, b)


# Short forms of software English, each to its long form: a closed list, since letters alone cannot
# tell a short form ("db" for "database") from another word ("db" and "dashboard", "log" and "login").
_SHORT_FORMS = {
    "db": "database", "dbs": "database", "prod": "production", "stg": "staging", "stage": "staging",
    "dev": "development", "env": "environment", "envs": "environment", "cfg": "config", "conf": "config",
    "configuration": "config", "repo": "repository", "repos": "repository", "auth": "authentication",
    "app": "application", "apps": "application", "docs": "documentation", "doc": "documentation",
    "k8s": "kubernetes", "pg": "postgres", "postgresql": "postgres", "msg": "message", "msgs": "message",
    "svc": "service", "infra": "infrastructure", "deps": "dependencies", "perf": "performance",
}


def siblings(key_a: str, key_b: str) -> bool:
    """Whether two keys name two things of one family ("frontend package manager" and "backend package
    manager"): their subjects each name something the other does not."""
    return _siblings(_thing(key_a), _thing(key_b))


def _siblings(a: str, b: str) -> bool:
    """Whether two subjects each name something the other does not ("admin console" and
    "public console", "staging db" and "prod db"): two things of one family, not one thing
    said twice. A subject that only adds words ("api" and "api server") is no sibling."""
    wa, wb = a.split(), b.split()
    only_a = [w for w in wa if not any(same_word(w, x) for x in wb)]
    only_b = [w for w in wb if not any(same_word(w, x) for x in wa)]
    return bool(only_a and only_b)


def _thing(key: str) -> str:
    """The words of a key that name the thing: without a shape kind, and without the last word of a
    reading's key of two words or more (``file storage`` -> ``file``, ``api port`` -> ``api``)."""
    words = normalize_key(key).split()
    return " ".join(words[:-1]) if len(words) > 1 else " ".join(words)


def resolve_slot(key: str, belief: str, vector: np.ndarray, known: Mapping[str, tuple[str, np.ndarray]],
                 min_cos: float) -> str:
    """The known key whose slot is the slot of ``key``, else ``key`` itself.

    :func:`resolve_key` compares keys of one kind word. A key of a *shape* kind (an extractive
    memory's ``<subject> <kind>``) and a key of a reading's own word (``measurement interval``)
    never share a last word, so they are compared as slots: subject plus the kind of the value
    held. Two slots match when their values have the same kind and the embeddings of the slot
    texts are at least ``min_cos`` apart in cosine (the closest wins, ties by name) and neither
    subject names a thing the other does not (``_siblings``: embeddings put two consoles of one app
    close together (about 0.9), so meaning alone cannot part siblings). Only pairs in
    which one side ends in a shape kind and the other does not are compared here, so keys of two
    readings keep the rule of :func:`resolve_key`.

    Args:
        key: the normalised key of a new candidate.
        belief: the value the candidate asserts.
        vector: the unit embedding of ``slot_text(key, belief)``.
        known: known keys of the scope, with the kind of their current value and the unit
            embedding of their slot text.
        min_cos: the threshold (``ingest.tau_key``).
    """
    if not key or key in known:
        return key
    kind = value_kind(belief)
    shaped = key_kind(key) in SHAPE_KINDS
    best, best_cos = key, min_cos
    for other in sorted(known):
        other_kind, other_vec = known[other]
        if other_kind != kind or (key_kind(other) in SHAPE_KINDS) == shaped:
            continue
        if _siblings(_thing(key), _thing(other)):
            continue
        cos = float(np.dot(vector, other_vec))
        if cos >= best_cos and (best == key or cos > best_cos):
            best, best_cos = other, cos
    return best
