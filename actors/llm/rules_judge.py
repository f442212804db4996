"""Rule-based adjudication and recognition for the rules client.

``judge`` and ``classify`` compare keys, beliefs and negation first; for unkeyed text they
fall back on lexical overlap, calling a pair a contradiction only when the two share their
subject words and differ in a value token (number, version, path, known tool).
``recognize`` reports an injected memory as used when its distinctive tokens show up in
the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from actors.llm.base import Decision, Judgement
from actors.llm.rules_text import (
    MEMORY_TALK,
    STOPWORDS,
    TECH_NAMES,
    content_tokens,
    is_value_token,
    strip_memory_blocks,
    tokens,
)
from engine.keys import fingerprint, normalize_belief, normalize_key, normalize_text
from engine.models import Candidate, Kind, Memory, Verdict

DECIDED_BY = "rules"
# Jaccard over subject (non-value) tokens; 0.5 = half the subject words shared.
SUBJECT_OVERLAP = 0.5
# Jaccard over all content tokens above which unkeyed texts with equal values are the same.
SAME_OVERLAP = 0.85
# Words too generic to show that an answer used a memory.
_GENERIC = frozenset(
    "project uses server listens runs port command default database cache version "
    "using run tests test code file files set environment variable owns deadline lives live "
    "longer anymore instead always never".split()
)


@dataclass(frozen=True)
class Claim:
    """The comparable part of a memory or a candidate."""

    ref: str
    text: str
    key: str
    belief: str
    negated: bool
    valid_from_ms: int
    changed: bool = False  # stated as a change (kind decision: "now on 52", "switched to X")


def _claim(item: Memory | Candidate, ref: str) -> Claim:
    return Claim(
        ref, item.text, normalize_key(item.key), normalize_belief(item.belief), item.negated, item.valid_from_ms,
        changed=item.kind is Kind.DECISION,
    )


def _split(text: str) -> tuple[set[str], set[str]]:
    """(subject tokens, value tokens) of a text."""
    subject: set[str] = set()
    values: set[str] = set()
    for token in content_tokens(text):
        (values if is_value_token(token) else subject).add(token.rstrip("."))
    return subject, values


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _newer(a: Claim, b: Claim) -> str:
    if a.valid_from_ms == b.valid_from_ms:
        return f"both valid from {a.valid_from_ms}; the later-ingested one wins"
    new, old = (a, b) if a.valid_from_ms > b.valid_from_ms else (b, a)
    return f"{new.ref} (valid from {new.valid_from_ms}) is newer than {old.ref} (valid from {old.valid_from_ms})"


def compare(a: Claim, b: Claim) -> tuple[Verdict, str]:
    """The rules verdict for two claims and why."""
    if a.key and a.key == b.key:
        if a.belief == b.belief and a.negated == b.negated:
            return Verdict.SAME, f"same key {a.key!r} and value {a.belief!r}"
        if a.belief == b.belief:
            return Verdict.UPDATE, f"key {a.key!r}: {a.belief!r} asserted and retracted; {_newer(a, b)}"
        return Verdict.UPDATE, f"same key {a.key!r}, value {a.belief!r} vs {b.belief!r}; {_newer(a, b)}"
    if a.negated != b.negated and a.belief and a.belief == b.belief and not (a.key and b.key):
        return Verdict.UPDATE, f"{a.belief!r} asserted by one and dropped by the other; {_newer(a, b)}"
    if a.key and b.key:
        return Verdict.UNRELATED, f"different keys {a.key!r} and {b.key!r}"
    if a.negated and b.negated and a.belief and a.belief == b.belief:
        return Verdict.SAME, f"both drop {a.belief!r}"
    subj_a, val_a = _split(a.text)
    subj_b, val_b = _split(b.text)
    if normalize_text(a.text).rstrip(".") == normalize_text(b.text).rstrip("."):
        return Verdict.SAME, "identical text"
    overlap = _jaccard(subj_a, subj_b)
    if val_a == val_b and _jaccard(subj_a | val_a, subj_b | val_b) >= SAME_OVERLAP:
        return Verdict.SAME, f"near-identical text (overlap {overlap:.2f}) with the same values"
    if overlap >= SUBJECT_OVERLAP and val_a and val_b and val_a != val_b:
        shared = ", ".join(sorted(subj_a & subj_b)[:4])
        later = a if a.valid_from_ms > b.valid_from_ms else b if b.valid_from_ms > a.valid_from_ms else None
        if later is not None and later.changed:
            # The later one says the value changed ("pinned to 0.13 now" after "pinned to 0.12 now"): a change, not a dispute.
            return Verdict.UPDATE, f"shared subject ({shared}); the later states a change; {_newer(a, b)}"
        return (
            Verdict.CONTRADICTION,
            f"shared subject ({shared}) with different values {sorted(val_a - val_b)} vs {sorted(val_b - val_a)}",
        )
    return Verdict.UNRELATED, f"no shared key, subject overlap {overlap:.2f}"


def judge(a: Memory, b: Memory) -> Judgement:
    verdict, reason = compare(_claim(a, a.id), _claim(b, b.id))
    return Judgement(verdict=verdict, reason=reason, decided_by=DECIDED_BY)


def is_memory_talk(text: str) -> bool:
    return bool(MEMORY_TALK.search(text)) or "<dynmem-memory" in text.lower()


def classify(candidate: Candidate, neighbours: Sequence[Memory]) -> Decision:
    """Place a candidate: reject, same, update, contradiction or create (first strong match wins)."""
    if not candidate.text.strip() or is_memory_talk(candidate.text):
        return Decision(action="reject", reason="empty or about the memory system itself")
    print_ = fingerprint(candidate.scope, candidate.key, candidate.belief, candidate.text, candidate.negated)
    for memory in neighbours:
        if memory.fingerprint == print_:
            return Decision(action="same", target_id=memory.id, reason="same fingerprint")
    claim = _claim(candidate, "candidate")
    ranked: dict[Verdict, tuple[str, str]] = {}
    for memory in neighbours:
        verdict, reason = compare(claim, _claim(memory, memory.id))
        if verdict is not Verdict.UNRELATED and verdict not in ranked:
            ranked[verdict] = (memory.id, reason)
    for verdict, action in (
        (Verdict.SAME, "same"),
        (Verdict.UPDATE, "update"),
        (Verdict.CONTRADICTION, "contradiction"),
    ):
        if verdict in ranked:
            target, reason = ranked[verdict]
            return Decision(action=action, target_id=target, reason=reason)  # type: ignore[arg-type]
    return Decision(action="create", reason="no neighbour shares its key or subject")


def _distinctive(memory: Memory) -> tuple[set[str], str]:
    """(distinctive tokens, belief phrase) of a memory."""
    found = {
        t.rstrip(".")
        for t in tokens(memory.text + " " + memory.belief)
        if t not in STOPWORDS and t not in _GENERIC and (is_value_token(t) or len(t) >= 5)
    }
    return found, normalize_belief(memory.belief)


def _contains_phrase(haystack: str, phrase: str) -> bool:
    return bool(re.search(rf"(?<![\w.]){re.escape(phrase)}(?![\w])", haystack))


def recognize(answer: str, injected: Sequence[Memory]) -> list[str]:
    """Ids of injected memories whose value or distinctive tokens appear in the answer."""
    text = normalize_text(strip_memory_blocks(answer).replace("`", " "))
    answer_tokens = {t.rstrip(".") for t in tokens(text)}
    used: list[str] = []
    for memory in injected:
        if memory.id in used:
            continue
        distinctive, belief = _distinctive(memory)
        hits = distinctive & answer_tokens
        strong_belief = bool(belief) and (
            is_value_token(belief) or len(belief) >= 5 or belief in TECH_NAMES or " " in belief
        )
        belief_hit = bool(belief) and _contains_phrase(text, belief)
        if (belief_hit and (strong_belief or len(hits - {belief}) >= 1)) or (
            len(hits) >= 2 and len(hits) >= 0.34 * len(distinctive)
        ) or (len(distinctive) == 1 and hits and is_value_token(next(iter(hits)))):
            used.append(memory.id)
    return used
