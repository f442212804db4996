"""AdjudicationActor: judges tensions and recognises which injected memories an answer used."""

from __future__ import annotations

from collections.abc import Sequence

from actors.llm import rules_judge
from actors.llm.base import Judgement, ModelClient
from engine.models import Memory, Sensitivity


class AdjudicationService:
    """Asks the configured model client for verdicts; never shows it a local-only memory."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client

    def ping(self) -> str:
        return self.client.name

    def judge(self, a: Memory, b: Memory) -> Judgement:
        if Sensitivity.LOCAL_ONLY in (a.sensitivity, b.sensitivity):
            return rules_judge.judge(a, b)  # a local-only memory never reaches a model
        return self.client.judge(a, b)

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        shown = [m for m in injected if m.sensitivity != Sensitivity.LOCAL_ONLY]
        return self.client.recognize(answer, shown)
