"""Does a message say that a named thing is gone? A small learned classifier, not a verb list.

"we ditched Sentry", "`legacy-auth` is out", "Took the Hotjar snippet out", "moved the queue off
RabbitMQ": a removal is said in more ways than any list of verbs holds, and "should we drop X?",
"removed the retry around X" or "X removed the need for Y" name a thing beside words of removal
without saying it is gone. This model reads one named thing in its message: a logistic
regression (``linear``) over the words around the thing (by position, left and right) and the
words and value shapes of the clause it is named in, trained on messages written for this purpose
by helpers who never read the extractor or any evaluation data (``actors/llm/data/removal.jsonl``,
its README says how it was made), each named thing labelled gone or not.

``named_things`` proposes the things of a message by their form (code, a path, an ENV_NAME, a host,
a URL, an identifier, a capitalised name, a known technology); ``gone`` gives those the model reads
as removed. The weights ship in ``actors/llm/data/removal_weights.json`` and are rebuilt, bit for
bit, by ``python -m eval.removals.train``. Pure: no I/O besides reading the weights once, no clock.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import NamedTuple

import numpy as np

from actors.llm import linear
from actors.llm.durable import shaped
from actors.llm.rules_text import STOPWORDS, tech_category, tech_name

__all__ = ["Labelled", "features", "gone", "load_weights", "named_things", "probability", "train"]

_WEIGHTS = "removal_weights.json"
_THING = "\x01"  # stands for the thing being read, before shaping
_WORD = re.compile(r"<\w+>|[a-z][a-z'’-]*|[?!:,;()]|\.(?=\s|$)")  # a dot ends a sentence, not "config.yaml"
_STOPS = frozenset(".?!;")  # what ends the sentence a thing is read in
_WINDOW = 6  # words either side that are read by position or as a bag
# Bounds on the work for one thing, far above any training message (371 characters, a thing named at most
# four times), so that a long unpunctuated paste costs time in its length: words read either side, places read.
_REACH = 60
_OCCURRENCES = 8


class Labelled(NamedTuple):
    """A named thing of a message and whether the message says it is gone (training)."""

    text: str
    speaker: str
    thing: str
    label: int


def _masked(text: str, thing: str) -> str:
    """The text with every whole occurrence of the thing (with or without backticks) marked."""
    bare = thing.strip("`")
    name = re.escape(bare)
    pattern = re.compile(rf"`{name}`|(?<![\w./`-]){name}(?![\w/`-]|\.\w)")
    return pattern.sub(f" {_THING} ", text)


def _clause(words: list[str], i: int) -> tuple[list[str], int]:
    """The words of the clause the thing at ``words[i]`` is read in, and its place there: its sentence
    (to the nearest stop or semicolon) without bracketed asides, or the aside it is inside."""
    a = i
    while a > max(0, i - _REACH) and words[a - 1] not in _STOPS:
        a -= 1
    b = i
    while b < min(len(words), i + _REACH) and words[b] not in _STOPS:
        b += 1
    depth, levels = 0, []
    for w in words[a:b]:
        if w == "(":
            depth += 1
        elif w == ")":
            depth = max(0, depth - 1)
        levels.append(-1 if w in ("(", ")") else depth)
    kept = [k for k, level in enumerate(levels) if level == levels[i - a]]
    return [words[a + k] for k in kept], kept.index(i - a)


def features(text: str, thing: str, speaker: str) -> list[int]:
    """The hashed feature indices of ``thing`` as named in ``text`` by ``speaker``: for each place it is
    named, the words of its clause (``_clause``) and their pairs, the clause's opening word, and the
    words before and after the thing, by distance and as a bag (with their four-letter pieces, so that
    "ditched" and "ditching" share weight)."""
    marked = shaped(_masked(text.strip(), thing)).replace(_THING, " <thing> ")
    words = _WORD.findall(marked.lower())
    feats = [f"s:{speaker}", "bias"]
    if "`" in thing:
        feats.append("coded")
    at = [i for i, w in enumerate(words) if w == "<thing>"]
    if not at:
        feats.append("unseen")
    for i in at[:_OCCURRENCES]:
        end = next((k for k in range(i, min(len(words), i + _REACH)) if words[k] in _STOPS), len(words))
        if end < len(words) and words[end] == "?":
            feats.append("ends:?")  # the thing is named in a question
        clause, place = _clause(words, i)
        feats += [f"w:{w}" for w in clause if w != "<thing>"]
        feats += [f"sb:{x} {y}" for x, y in zip(clause, clause[1:], strict=False)]
        feats.append(f"first:{clause[0]}")
        left = clause[max(0, place - _WINDOW):place][::-1]
        right = clause[place + 1:place + 1 + _WINDOW]
        for side, near in (("L", left), ("R", right)):
            for n, w in enumerate(near[:3], 1):
                feats.append(f"{side}{n}:{w}")
            if len(near) >= 2:
                feats.append(f"{side}12:{near[0]} {near[1]}")
            for w in near:
                feats.append(f"{side}:{w}")
                if len(w) > 4 and not w.startswith("<"):
                    feats += [f"{side}c:{w[k:k + 4]}" for k in range(len(w) - 3)]
        if not right:
            feats.append("ends-with-thing")
    return linear.hashed(feats)


def train(examples: Sequence[Labelled], *, l2: float = 3e-5, epochs: int = 3000, lr: float = 8.0) -> np.ndarray:
    """Weights of a logistic regression over ``features`` (``linear.fit``: deterministic, classes weighted equally)."""
    if not examples:
        raise ValueError("training needs at least one example")
    return linear.fit([features(e.text, e.thing, e.speaker) for e in examples], [e.label for e in examples],
                      l2=l2, epochs=epochs, lr=lr)


def probability(w: np.ndarray | dict[int, float], text: str, thing: str, speaker: str) -> float:
    """P(the message says ``thing`` is gone) under weights ``w``."""
    return linear.probability(w, features(text, thing, speaker))


def load_weights() -> tuple[dict[int, float], float]:
    """The shipped weights and threshold (read once from the package)."""
    return linear.load(_WEIGHTS, "eval.removals.train")


# Things by their form, whatever the vocabulary.
_FORMED = re.compile(
    r"`[^`\n]+`"  # code
    r"|\b[a-z][a-z0-9+.-]*://[^\s`'\")]+"  # a URL
    r"|(?:~|\.{1,2})?/[\w.@~-]+(?:/[\w.@~-]*)*|\b[\w.-]+(?:/[\w.-]+)+/?"  # a path
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"  # an ENV_NAME
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|app|internal|local|lan|cloud|co|sh|ai)\b"  # a host
    r"|\b[A-Za-z][\w]*[-_.][\w.-]*[A-Za-z0-9]\b"  # an identifier: auth-v2, user_events, config.yaml
    r"|\b[a-z]+\d[\w]*\b"  # node16, s3
    r"|#[a-z][\w-]+"  # a #channel
)
# A name of one to three capitalised words, or in capitals ("Redis", "Google Analytics", "Drone CI",
# "SQS", "jQuery"), with the major version it is named with ("Python 3.8", "Helm 2").
_NAME_WORD = r"(?:[A-Z][\w+.]*[a-z0-9+][\w+]*|[A-Z][A-Z0-9]{2,6}\b|[a-z]+[A-Z]\w*)"
_CAPITALISED = re.compile(rf"\b{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}}(?:\s+v?\d+(?:\.(?:\d+|x))*\b)?")
_NUMBER = re.compile(r"v?\d+(?:[.,:]\d+)*[a-z%]*", re.I)
_ABBREVIATION = re.compile(r"(?:[a-z]\.)+[a-z]\.?", re.I)  # "e.g", "i.e", "a.k.a"
# Where a sentence or a list item opens, before a word (searched in the few characters before it).
_OPENS = re.compile(r"(?:^|[.!?:]\s+|\n\s*(?:[-*]\s+)?)$")
# A lower-case word standing alone in prose (not part of code, a path or an identifier).
_PROSE_WORD = re.compile(r"(?<![\w`./-])[a-z][a-z]+(?![\w`/-])")


@functools.lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """Words of ordinary prose: the lower-case words that three or more messages of the shipped training
    corpora (``durable.jsonl``, ``removal.jsonl``: about 5,800 chat messages) use alone in prose
    ("removed", "took", "config", "repo"). Not written by hand, and the same on every install."""
    seen: Counter[str] = Counter()
    for corpus in ("durable.jsonl", "removal.jsonl"):
        for line in resources.files("actors.llm.data").joinpath(corpus).read_text(encoding="utf-8").splitlines():
            if line.strip():
                seen.update(set(_PROSE_WORD.findall(json.loads(line)["text"])))
    return frozenset(w for w, n in seen.items() if n >= 3)


def _name_like(word: str) -> bool:
    """Whether a capitalised word opening a sentence may be a name: not a common word, or a known
    technology, or written with an inner capital or a digit."""
    return (bool(re.search(r"[A-Z0-9]", word[1:])) or word.lower() not in _common_words()
            or bool(tech_category(tech_name(word))))


def _plain_parts(value: str) -> bool:
    """Whether a word is a phrase, not a name: common words joined by hyphens ("chilled-out", "server-side"),
    or two numbers or short common words around a slash ("24/7", "and/or"; a path such as
    "internal/api/schema" stays a name)."""
    if "/" in value:
        parts = value.split("/")
        return len(parts) == 2 and all(p.isdigit() or (p.isalpha() and len(p) <= 3 and p.lower() in _common_words())
                                       for p in parts)
    parts = value.split("-")
    return len(parts) > 1 and all(p.isalpha() and p.lower() in _common_words() for p in parts)


def named_things(text: str) -> list[str]:
    """The named things of a message, by form, in order of appearance (each once).

    A capitalised word opening a sentence is taken only when it is no common word ("Removed",
    "The") or looks like a name (an inner capital, a digit, or a known technology); an opening
    name of several words is read both whole and without its first word ("Ditched Sentry",
    "Google Analytics"). Numbers, versions, abbreviations and compounds of common words are no things.
    """
    found: list[tuple[int, str]] = []
    taken = bytearray(len(text) + 1)

    def take(a: int, b: int) -> bool:
        if any(taken[a:b]):
            return False
        taken[a:b] = b"\x01" * (b - a)
        return True

    for m in _FORMED.finditer(text):
        value = m.group(0).rstrip(".")
        bare = value.strip("`")
        if not take(m.start(), m.end()) or _NUMBER.fullmatch(bare) or _ABBREVIATION.fullmatch(bare) \
                or (value == bare and _plain_parts(value)):
            continue  # the span stays taken: "react-query" yields no "react" below
        found.append((m.start(), value))
    for m in _CAPITALISED.finditer(text):
        if any(taken[m.start():m.end()]):
            continue
        words = m.group(0).split()
        opening = _OPENS.search(text, max(0, m.start() - 16), m.start()) is not None
        while words and words[0].lower() in STOPWORDS:
            words, opening = words[1:], False
        if opening and words and not _name_like(words[0]):
            words = words[1:]  # "Removed Redis", "Pillow is gone": an opening common word is no name
        elif opening and len(words) > 1:  # "Gitea Actions", "Bugsnag SDK": both readings, the model decides
            found.append((m.start() + len(m.group(0)) - len(" ".join(words[1:])), " ".join(words[1:])))
        if not words or re.fullmatch(r"[A-Z]{2,}s", words[-1]):
            continue  # "PRs", "APIs": a plural of a common noun
        take(m.start(), m.end())
        found.append((m.start(), " ".join(words)))
    for m in re.finditer(r"\b[a-z][a-z0-9]+\b", text):
        word = m.group(0)
        if word not in STOPWORDS and (tech_category(tech_name(word)) or (len(word) >= 4 and word not in _common_words())) \
                and take(m.start(), m.end()):
            found.append((m.start(), word))
    out: list[str] = []
    for _, value in sorted(found):
        if value not in out:
            out.append(value)
    return out


# A name written as code, or with a digit, an identifier character or a capital inside a word:
# "`moment`", "node16", "auth-v2", "LEGACY_SSO_URL", "GlitchTip". A plain word ("Python", "redis"), one
# in capitals ("TODO", "PDF") or words joined by hyphens outside code (``_COMPOUND``) is not.
_FORMED_NAME = re.compile(r"^`|\d|[./_:@#-]|[a-z0-9][A-Z]")
# Words joined by hyphens, not in code: "hard-coded", "left-pad". A name or a phrase; `left-pad` in code is a name.
_COMPOUND = re.compile(r"[a-z]+(?:-[a-z]+)+")
# A sentence, up to where it ends (a stop before white space or the end).
_SENTENCE = re.compile(r".+?(?:[.?!;](?=\s|$)|$)", re.S)


def gone(text: str, speaker: str, model: tuple[dict[int, float], float] | None = None, *,
         plain: bool = False) -> list[str]:
    """The named things that ``text`` says are gone, as written (without backticks).

    Only names of a distinctive form count: a plain word is also the name of a language, a team or
    a part of the product ("for the Python code", "Mei (models)"), and every memory that mentions
    it would be retired with it, so a misreading costs too much. Each thing is read in the sentences
    that name it (the model reads nothing else), and at most ``_REACH`` words either side of at most
    ``_OCCURRENCES`` places, so a long paste stays cheap. ``plain``: the names of no distinctive form instead
    (a capitalised word: "Ceph", "Jenkins"), which the caller must scope to what the message says they were for.
    """
    w, threshold = model or load_weights()  # ``model``: other weights and threshold (the trainer's report)
    sentences = [m.group(0) for m in _SENTENCE.finditer(text)]
    out = []
    for thing in named_things(text):
        if bool(_FORMED_NAME.search(thing)) == plain or _COMPOUND.fullmatch(thing):
            continue
        bare = thing.strip("`")
        naming = " ".join(s for s in sentences if bare in s)
        if probability(w, naming or text, thing, speaker) >= threshold:
            out.append(bare)
    return out
