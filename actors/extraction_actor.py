"""ExtractionActor: turns logged units into candidates. Stateless; runs as a pool.

Embedding is not done here: the pipeline embeds the candidates of a whole batch of jobs in
one IndexActor call, which is faster than one call per job on a small machine.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from actors.llm.base import ModelClient
from engine.grounding import check_candidate
from engine.models import Candidate, Unit
from engine.utterance import asks


class Extracted(BaseModel):
    model_config = ConfigDict(frozen=True)
    candidates: tuple[Candidate, ...]


class ExtractionService:
    """Extracts candidates with the configured model client."""

    def __init__(self, client: ModelClient) -> None:
        self.client = client

    def ping(self) -> str:
        return self.client.name

    def extract(self, units: Sequence[Unit], scope: str) -> Extracted:
        """Candidates of the units, each grounded in the units it cites (DESIGN §5), whatever the client.

        Whichever client proposed it, a question or request is never a fact (issue 13)."""
        by_id = {u.id: u for u in units}
        found = self.client.extract(list(units), scope)
        return Extracted(candidates=tuple(c for c in found if check_candidate(c, by_id).ok and not asks(c.text)))
