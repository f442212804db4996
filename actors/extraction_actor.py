"""ExtractionActor: turns logged units into candidates (+ embeddings). Stateless; runs as a pool."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from actors.llm.base import ModelClient
from engine.models import Candidate, Unit


class Extracted(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    candidates: tuple[Candidate, ...]
    vectors: np.ndarray | None


class ExtractionService:
    """Extracts candidates with the configured model client and embeds them."""

    def __init__(self, client: ModelClient, index: object | None = None) -> None:
        self.client = client
        self.index = index  # an IndexPort (local object or Ray handle adapter)

    def ping(self) -> str:
        return self.client.name

    def extract(self, units: Sequence[Unit], scope: str) -> Extracted:
        cands = tuple(self.client.extract(list(units), scope))
        vecs = None
        if cands and self.index is not None:
            vecs = self.index.embed([c.text for c in cands])  # type: ignore[attr-defined]
        return Extracted(candidates=cands, vectors=vecs)
