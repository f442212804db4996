"""ExtractionActor: turns logged units into candidates. Stateless; runs as a pool.

The model client is built here, inside the actor, from plain settings: a live client holds
locks, sockets and an HTTP connection pool and cannot be shipped across processes.

Embedding is not done here: the pipeline embeds the candidates of a whole batch of jobs in
one IndexActor call, which is faster than one call per job on a small machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from actors.llm.base import ModelClient
from actors.llm.factory import make_client
from engine.grounding import check_candidate
from engine.models import Candidate, Unit
from engine.settings import ModelSettings
from engine.utterance import asks


class Extracted(BaseModel):
    model_config = ConfigDict(frozen=True)
    candidates: tuple[Candidate, ...]


class ExtractionService:
    """Extracts candidates with the configured model client.

    Args:
        model: the ``[model]`` section; the client is built from it here.
        data_dir: the data directory (the openai client keeps its reply cache there).
    """

    def __init__(self, model: ModelSettings, data_dir: Path | None = None) -> None:
        self.client: ModelClient = make_client(model, data_dir)

    @classmethod
    def with_client(cls, client: ModelClient) -> ExtractionService:
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

    def extract(self, units: Sequence[Unit], scope: str) -> Extracted:
        """Candidates of the units, each grounded in the units it cites (DESIGN §5), whatever the client.

        Whichever client proposed it, a question or request is never a fact (issue 13)."""
        by_id = {u.id: u for u in units}
        found = self.client.extract(list(units), scope)
        return Extracted(candidates=tuple(c for c in found if check_candidate(c, by_id).ok and not asks(c.text)))
