"""The offline, deterministic ``rules`` model client (DESIGN §5), the default one.

Pure Python: no I/O, no clock, no randomness; the same input always gives the same output.
Extraction lives in ``rules_extract`` (the pipeline; its extractors in ``rules_facts``,
``rules_procedures`` and ``rules_choices``, patterns and canonical keys), adjudication and
recognition in ``rules_judge``, text handling in ``rules_text``; the "conversation"
profile extracts with ``rules_conversation`` instead. Its limits are written
down in ``RULES_LIMITS.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from collections.abc import Sequence

from actors.llm import rules_conversation, rules_judge
from actors.llm.base import Decision, Judgement
from actors.llm.rules_extract import PROMPT_VERSION, extract_unit
from engine.models import Candidate, Memory, Unit

__all__ = ["PROFILES", "PROMPT_VERSION", "RulesClient"]

PROFILES = ("developer", "extractive", "conversation")


class RulesClient:
    """``ModelClient`` built from patterns and lexical overlap, needing no model endpoint."""

    name = "rules"

    def __init__(self, profile: str = "developer") -> None:
        """``profile``: "developer" (code-base decisions and facts), "extractive" (the same, plus the
        speaker's own clause for statements with a value that no pattern reads), or "conversation"
        (``rules_conversation``)."""
        if profile not in PROFILES:
            raise ValueError(f"unknown extraction profile {profile!r}; use one of {', '.join(PROFILES)}")
        self.profile = profile
        readers: dict[str, Callable[[Unit, str], list[Candidate]]] = {
            "developer": extract_unit,
            "extractive": functools.partial(extract_unit, extractive=True),
            "conversation": rules_conversation.extract_unit,
        }
        self._extract_unit = readers[profile]

    def extract(self, units: Sequence[Unit], scope: str) -> list[Candidate]:
        """Candidates stated in the units, in unit order, each citing its unit and time."""
        out: list[Candidate] = []
        for unit in units:
            out.extend(self._extract_unit(unit, scope))
        return out

    def judge(self, a: Memory, b: Memory) -> Judgement:
        """Same key and value: same; same key, other value: update; else lexical rules."""
        return rules_judge.judge(a, b)

    def classify(self, candidate: Candidate, neighbours: Sequence[Memory]) -> Decision:
        """Place a candidate relative to its nearest memories."""
        return rules_judge.classify(candidate, neighbours)

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        """Ids of the injected memories whose distinctive tokens appear in the answer."""
        return rules_judge.recognize(answer, injected)
