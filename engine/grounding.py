"""Grounding: a repair proposal is accepted only if the log it cites supports it (DESIGN §6).

A proposal is a :class:`~engine.models.Candidate` written by an investigator. It is
grounded when

1. it cites at least one unit, and every cited unit exists;
2. every cited unit precedes the signal (``turn < bound_turn``): repair may not learn
   from what the user said after the failure it repairs;
3. its key content is in the cited text: every *value token* (a number, version, path,
   identifier or capitalised name) appears in the cited units, and at least
   ``CONTENT_SHARE`` of its other content words do;
4. it is not about the memory system itself (its tools, its injected blocks).

The checks run in that order except that 4 comes before 3, so a proposal quoting the
memory system's own talk is named for what it is. The first failure is the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from engine.keys import normalize_belief, normalize_text
from engine.lexical import STOPWORDS, tokenize
from engine.models import Candidate, Frozen, Unit
from engine.miss_signals import stem

__all__ = ["CONTENT_SHARE", "Grounding", "check_candidate", "check_proposal", "distinctive_tokens", "find_whole", "occurs_whole"]

#: Share of a proposal's ordinary content words that must appear in the cited text.
#: 0.6 (brief for the repair loop): lets an investigator rephrase ("lives in" ->
#: "is kept in") while a proposal made mostly of words the log never said is refused.
CONTENT_SHARE = 0.6

MEMORY_SYSTEM = re.compile(
    r"memory_(?:search|why|forget|remember)|log_(?:search|timeline|window)|<dynmem-memory|dynamics-memory|dynmem",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+#'-]*")
_VALUE_PUNCT = re.compile(r"[./:_@#+]")
_SEGMENT = re.compile(r"[/:@#+]+|(?<!\d)\.|\.(?!\d)")
# Words too common to show that a sentence came from its source (beyond lexical.STOPWORDS).
COMMON_WORDS = frozenset(
    """am being he she his her him whose whom here those some each every more most other such only
    very too same like via per up down out off over under still always never currently really
    actually basically yeah yep oh hey well project projects team thing things stuff way make
    makes made go goes going know see say says said tell told think should must may might shall
    has had been new old file files kept keep keeps stored store located lives live where set
    called named default""".split()
)


class Grounding(Frozen):
    """The verdict on one proposal: accepted or not, and why."""

    ok: bool
    reason: str


def _is_value_word(raw: str) -> bool:
    """A number, version, path, identifier (``snake_case``, ``camelCase``) or a capitalised name."""
    core = raw.strip("'").rstrip(".:-/")
    if not core:
        return False
    if any(ch.isdigit() for ch in core) or _VALUE_PUNCT.search(core):
        return True
    if any(ch.isupper() for ch in core[1:]):  # camelCase, API, PostgreSQL
        return True
    if core[0].isupper():  # a name; at the start of a sentence only if it is no common word
        low = core.lower()
        return low not in STOPWORDS and low not in COMMON_WORDS and low != "i"
    return False


def distinctive_tokens(text: str) -> tuple[list[str], list[str]]:
    """Split a sentence into (value tokens, other content tokens), lower-cased, in order.

    Value tokens are whole (``ops/rotations.yaml``, ``3.12``, ``ramesh``); content tokens
    are :func:`engine.lexical.tokenize` tokens without stopwords and very common words,
    and without the parts of value tokens.
    """
    values: dict[str, None] = {}
    covered: set[str] = set()
    for match in _WORD.finditer(text):
        raw = match.group(0)
        if raw.endswith("'s"):
            raw = raw[:-2]
        if _is_value_word(raw):
            core = raw.strip("'").rstrip(".:-/").lower()
            values.setdefault(core, None)
            covered.update(tokenize(core))
    content: dict[str, None] = {}
    for token in tokenize(text):
        if token in covered or token in values or token in COMMON_WORDS or len(token) < 2:
            continue
        content.setdefault(token, None)
    return list(values), list(content)


def _segments(token: str) -> list[str]:
    """``staging3.example.com`` -> ``staging3``, ``example``, ``com`` (versions stay whole)."""
    return [s for s in _SEGMENT.split(token) if s]


def _vocabulary(text: str) -> set[str]:
    tokens = tokenize(text)
    return set(tokens).union(*(_segments(t) for t in tokens))


def _present(token: str, vocabulary: set[str], stems: set[str]) -> bool:
    return token in vocabulary or stem(token) in stems


def check_proposal(candidate: Candidate, cited: Mapping[str, Unit], bound_turn: int) -> Grounding:
    """Accept a repair proposal only if the units it cites exist, precede the signal and contain it.

    Args:
        candidate: the proposal; ``source_unit_ids`` are its citations.
        cited: the units the caller could find for those ids (missing ids are unknown).
        bound_turn: the turn of the signal; cited units must have ``turn < bound_turn``.

    Returns:
        ``Grounding(ok=True, reason="grounded in u3")`` or the first reason to refuse.
    """
    ids = list(dict.fromkeys(candidate.source_unit_ids))
    if not ids:
        return Grounding(ok=False, reason="cites no unit")
    for unit_id in ids:
        if unit_id not in cited:
            return Grounding(ok=False, reason=f"cites unknown unit {unit_id}")
    for unit_id in ids:
        if cited[unit_id].turn >= bound_turn:
            return Grounding(ok=False, reason=f"cites unit {unit_id} at or after the signal (turn {bound_turn})")
    if MEMORY_SYSTEM.search(" ".join((candidate.text, candidate.key, candidate.belief))):
        return Grounding(ok=False, reason="about the memory system itself")
    values, content = distinctive_tokens(candidate.text)
    if not values and not content:
        return Grounding(ok=False, reason="states nothing distinctive")
    source = "\n".join(f"{cited[i].user}\n{cited[i].assistant}" for i in ids)
    vocabulary = _vocabulary(source)
    stems = {stem(t) for t in vocabulary}
    missing: list[str] = []
    for value in values:
        if value in vocabulary:
            continue
        # "localhost:9090" is grounded by "localhost" and "9090" said apart; "staging3.example.com"
        # is not grounded by "staging2.example.com": the missing part is named. Values match
        # exactly (no stemming).
        absent_parts = [p for p in _segments(value) if p not in vocabulary]
        if absent_parts:
            missing.extend(p for p in absent_parts if p not in missing)
        elif re.search(r"[/.]", value) and value not in missing:
            # A path or host is one value: "ops/rotation.yaml" is not grounded by "ops/rotations.yaml".
            missing.append(value)
    absent = [t for t in content if not _present(t, vocabulary, stems)]
    needed = math.ceil(CONTENT_SHARE * len(content) - 1e-9)
    if len(content) - len(absent) < needed:
        missing.extend(t for t in absent if t not in missing)
    if missing:
        return Grounding(ok=False, reason="text not in the cited units: " + ", ".join(repr(t) for t in missing))
    return Grounding(ok=True, reason="grounded in " + ", ".join(ids))


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A value ends where an identifier cannot go on: "fly" is not said by "fly.io", "8080" is said by "8080.".
_IDENT_CHAR = r"[\w-]"


def occurs_whole(value: str, source: str) -> bool:
    """Whether ``value`` appears in ``source`` as a whole value, case-insensitively (see ``find_whole``)."""
    return find_whole(value, source) >= 0


def find_whole(value: str, source: str) -> int:
    """Where ``value`` first appears in ``normalize_text(source)`` as a whole value, or -1.

    Neither neighbour may continue an identifier: ``fly`` does not occur in ``fly.io``,
    ``808`` not in ``8080``; a sentence's full stop after a value is no continuation. A
    word value may stand for a longer spelling of the same word (``postgres`` in
    ``PostgreSQL``), never for a part of a dotted, dashed or numbered name.
    """
    value = normalize_text(value)
    if not value:
        return -1
    # "postgres" in "postgresql", "mongo" in "mongodb"; never "go" in "gone".
    tail = r"[a-z]{0,3}" if len(value) >= 5 and value[-1].isalpha() else ""
    # After the value, a dash and a word is a compound ("squash" in "squash-merge"); a dash and a
    # number, a dot and a word, or an underscore continue a name.
    # A version may carry a "v" ("v5.3.1", "app-v5.3.1" state 5.3.1); a single number never ("@v4" states no "4").
    before = rf"(?:(?<!{_IDENT_CHAR})|(?<=(?<![\w.])v))" if re.match(r"\d+\.\d", value) else rf"(?<!{_IDENT_CHAR})"
    pattern = rf"{before}(?<!\w\.){re.escape(value)}{tail}(?!\w)(?!-\d)(?!-$)(?!\.\w)"
    found = re.search(pattern, normalize_text(source))
    return found.start() if found else -1


def check_candidate(candidate: Candidate, units: Mapping[str, Unit]) -> Grounding:
    """Accept an extracted candidate only if the units it cites say what it states (DESIGN §5).

    Its value (``belief``) and every code span of its text must occur whole in the cited
    units; without a belief, every number, version, path or host of its text must be found
    there: no memory states a value that its sources do not contain. The words around the
    value ("The project uses ... as its deploy target") are not checked.
    """
    ids = [i for i in dict.fromkeys(candidate.source_unit_ids) if i in units]
    if not ids:
        return Grounding(ok=False, reason="cites no known unit")
    if MEMORY_SYSTEM.search(" ".join((candidate.text, candidate.key, candidate.belief))):
        return Grounding(ok=False, reason="about the memory system itself")
    source = "\n".join(f"{units[i].user}\n{units[i].assistant}" for i in ids)
    belief = normalize_belief(candidate.belief)
    if belief and not occurs_whole(belief, source):
        return Grounding(ok=False, reason=f"value {belief!r} not in the cited units")
    for span in _CODE_SPAN.findall(candidate.text):
        if not occurs_whole(span.strip(), source):
            return Grounding(ok=False, reason=f"code {span!r} not in the cited units")
    if belief:
        return Grounding(ok=True, reason="grounded in " + ", ".join(ids))
    # No separate value: the text's numbers, versions, paths and hosts are its value (a name may
    # be the subject, resolved from context by a model: "upgraded to 16" -> "Postgres 16").
    vocabulary = _vocabulary(source)
    values, _ = distinctive_tokens(_CODE_SPAN.sub(" ", candidate.text))
    missing = [v for v in values if (any(ch.isdigit() for ch in v) or _VALUE_PUNCT.search(v))
               and v not in vocabulary and any(p not in vocabulary for p in _segments(v))]
    if missing:
        return Grounding(ok=False, reason="value not in the cited units: " + ", ".join(repr(t) for t in missing))
    return Grounding(ok=True, reason="grounded in " + ", ".join(ids))
