"""Light English inflection folding: the inflectional steps of the Porter2 (Snowball English) stemmer.

"Who runs the releases?" should reach "Release owner: Aiyana": a plural, a third person, a past
or an -ing form and its plain word share one stem (``releases``, ``released``, ``releasing``,
``release`` -> ``releas``). Only the steps of the published algorithm that undo inflection are
kept (https://snowballstem.org/algorithms/english/stemmer.html, as revised for Snowball 3: the
exceptional forms, steps 1a, 1b, 1c and 5); the derivational steps 2-4 ("organization" -> "organ",
"generate" -> "generat" -> "gener") are left out, as they join words that mean different things.
On the words of examples/ and the development histories, every stem agrees with the Snowball
English stemmer (``snowballstemmer`` 3.1.1) wherever that stemmer's steps 2-4 leave the word alone.

Pure and deterministic: a word in, its stem out. :func:`engine.lexical.tokenize` calls it only on
plain prose words (letters, lower-case after an optional capital), never on identifiers.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
# The algorithm's own exceptional forms ("exception1"), its prefixes that end R1, and the words
# whose -eed or -ing it leaves alone.
_EXCEPTIONS = {"skis": "ski", "skies": "sky", "idly": "idl", "gently": "gentl", "ugly": "ugli",
               "early": "earli", "only": "onli", "singly": "singl", "sky": "sky", "news": "news",
               "howe": "howe", "atlas": "atlas", "cosmos": "cosmos", "bias": "bias", "andes": "andes"}
_R1_PREFIXES = ("arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers")
_KEEP_EED = frozenset({"succ", "proc", "exc"})
_KEEP_ING = frozenset({"even", "cann", "inn", "earr", "herr", "out"})


def _vowel(w: str, i: int) -> bool:
    """Whether ``w[i]`` is a vowel; ``Y`` (a y at the start or after a vowel, marked) is not."""
    return w[i] in _VOWELS


def _region(w: str, start: int) -> int:
    """Where the region after the first non-vowel following a vowel begins, from ``start``."""
    for i in range(start + 1, len(w)):
        if not _vowel(w, i) and _vowel(w, i - 1):
            return i + 1
    return len(w)


def _r1_r2(w: str) -> tuple[int, int]:
    for prefix in _R1_PREFIXES:
        if w.startswith(prefix):
            r1 = len(prefix)
            break
    else:
        r1 = _region(w, 0)
    return r1, _region(w, r1)


def _short_syllable_at_end(w: str) -> bool:
    """A vowel then a non-vowel other than w, x or Y, after a non-vowel; a vowel then a non-vowel
    at the start; or "past"."""
    n = len(w)
    if n >= 3 and not _vowel(w, n - 3) and _vowel(w, n - 2) and not _vowel(w, n - 1) and w[-1] not in "wxY":
        return True
    return (n == 2 and _vowel(w, 0) and not _vowel(w, 1)) or w.endswith("past")


def _has_vowel(part: str) -> bool:
    return any(c in _VOWELS for c in part)


def _step_1a(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith(("ied", "ies")):
        return w[:-2] if len(w) > 4 else w[:-1]
    if w.endswith(("us", "ss")):
        return w
    if w.endswith("s") and _has_vowel(w[:-2]):  # a vowel not just before the s: "gaps", not "gas"
        return w[:-1]
    return w


def _step_1b(w: str, r1: int) -> str:
    for suffix in ("eedly", "eed"):
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            return stem + "ee" if len(stem) >= r1 and stem not in _KEEP_EED else w
    for suffix in ("ingly", "edly", "ing", "ed"):
        if w.endswith(suffix):
            stem = w[: -len(suffix)]
            if suffix == "ing" and stem in _KEEP_ING:
                return w
            if suffix == "ing" and len(stem) == 2 and stem[1] == "y" and not _vowel(stem, 0):
                return stem[0] + "ie"  # "dying" -> "die"
            if not _has_vowel(stem):
                return w
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if stem.endswith(_DOUBLES):
                return stem if len(stem) == 3 and stem[0] in "aeo" else stem[:-1]  # "add(ed)" keeps its dd
            if len(stem) == r1 and _short_syllable_at_end(stem):  # a short word: "hop(ing)" -> "hope"
                return stem + "e"
            return stem
    return w


def _step_1c(w: str) -> str:
    if len(w) > 2 and w[-1] in "yY" and not _vowel(w, len(w) - 2):
        return w[:-1] + "i"
    return w


def _step_5(w: str, r1: int, r2: int) -> str:
    if w.endswith("e"):
        at = len(w) - 1
        if at >= r2 or (at >= r1 and not _short_syllable_at_end(w[:-1])):
            return w[:-1]
    elif w.endswith("ll") and len(w) - 1 >= r2:
        return w[:-1]
    return w


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The inflection-folded stem of a lower-case word (``"releases"`` -> ``"releas"``).

    Words of one or two letters, and words with anything but ``a-z``, are returned unchanged.
    """
    if len(word) < 3 or not word.isascii() or not word.isalpha() or not word.islower():
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    # y at the start or after a vowel is a consonant: marked Y for the steps, unmarked at the end.
    w = "".join("Y" if c == "y" and (i == 0 or word[i - 1] in _VOWELS) else c for i, c in enumerate(word))
    r1, r2 = _r1_r2(w)  # positions in the word as given (the steps only change its end)
    w = _step_1a(w)
    w = _step_1b(w, r1)
    w = _step_1c(w)
    w = _step_5(w, r1, r2)
    return w.lower()
