"""The model client interface shared by the offline ``rules`` client and ``openai``.

DESIGN §5: ``extract(units) -> candidates``, ``judge(a, b) -> verdict``,
``classify(candidate, neighbours) -> decision``, ``recognize(answer, injected) -> used ids``.
Clients never see ``local-only`` memories or unredacted text: callers filter and redact first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from engine.models import Candidate, Memory, Unit, Verdict


class Judgement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    verdict: Verdict
    reason: str
    decided_by: str  # e.g. "rules" or "openai:gpt-4o-mini@judge-v1"


class Decision(BaseModel):
    """What a candidate is relative to its nearest existing memories."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    action: Literal["create", "same", "update", "contradiction", "reject"]
    target_id: str | None = None
    reason: str


class ModelClient(Protocol):
    name: str

    def extract(self, units: Sequence[Unit], scope: str) -> list[Candidate]:
        """Distil units into self-contained candidate memories citing their unit ids."""
        ...

    def judge(self, a: Memory, b: Memory) -> Judgement:
        """Decide whether two memories are the same, an update, a contradiction or unrelated."""
        ...

    def classify(self, candidate: Candidate, neighbours: Sequence[Memory]) -> Decision:
        """Place a candidate relative to its neighbours."""
        ...

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        """Return the ids of the injected memories that the answer actually used."""
        ...
