"""AdjudicationActor: judges tensions and recognises which injected memories an answer used.

The model client is built here, inside the actor, from plain settings (never shipped).
A ``local-only`` memory is never shown to it: such pairs are judged by the rules judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from actors.llm import rules_judge
from actors.llm.base import Judgement, ModelClient
from actors.llm.factory import make_client
from engine.models import Memory, Sensitivity
from engine.settings import ModelSettings


class AdjudicationService:
    """Asks the configured model client for verdicts; never shows it a local-only memory.

    Args:
        model: the ``[model]`` section; the client is built from it here.
        data_dir: the data directory (the openai client keeps its reply cache there).
    """

    def __init__(self, model: ModelSettings, data_dir: Path | None = None) -> None:
        self.client: ModelClient = make_client(model, data_dir)

    @classmethod
    def with_client(cls, client: ModelClient) -> AdjudicationService:
        """An in-process service over a ready client (tests and ``Runtime(use_ray=False)``)."""
        svc = cls.__new__(cls)
        svc.client = client
        return svc

    def ping(self) -> str:
        return self.client.name

    def purge_cache(self, texts: Sequence[str]) -> int:
        """Erase purged texts from this worker's reply cache, on the node it runs on (forget --purge)."""
        from actors.llm.response_cache import purge_client_cache

        return purge_client_cache(self.client, texts)

    def probe(self) -> str:
        """Check the endpoint from inside the actor, as the pipeline uses it (``dynmem doctor``)."""
        check = getattr(self.client, "check", None)
        if callable(check):
            return str(check())
        return f"{self.client.name} client (offline, no endpoint needed)"

    def judge(self, a: Memory, b: Memory) -> Judgement:
        if Sensitivity.LOCAL_ONLY in (a.sensitivity, b.sensitivity):
            return rules_judge.judge(a, b)  # a local-only memory never reaches a model
        return self.client.judge(a, b)

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        shown = [m for m in injected if m.sensitivity != Sensitivity.LOCAL_ONLY]
        return self.client.recognize(answer, shown)
