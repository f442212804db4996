"""IndexActor: owns the embedder and the FAISS indexes (one per scope), shared by all projects."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actors.embedder import make_embedder
from actors.index import VectorIndex
from engine.redact import redact
from engine.settings import EmbedderSettings, ModelSettings


class IndexService:
    """Embeds text and answers cosine shortlists within scopes."""

    def __init__(self, embedder: str = "minilm", batch_size: int = 32, settings: EmbedderSettings | None = None,
                 model: ModelSettings | None = None) -> None:
        self.embedder = make_embedder(embedder, batch_size=batch_size, settings=settings, model=model)
        self.batch_size = batch_size
        self.index = VectorIndex(dim=self.embedder.dim)

    def ping(self) -> str:
        return self.embedder.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # Redaction runs before anything reaches a model, the embedder included.
        return self.embedder.embed([redact(t) for t in texts])

    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.index.upsert(scope, list(ids), np.asarray(vectors, dtype=np.float32))

    def remove(self, ids: Sequence[str]) -> None:
        self.index.remove(list(ids))

    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]:
        return self.index.search(np.asarray(vector, dtype=np.float32), list(scopes), k)

    def embed_search(self, text: str, scopes: Sequence[str], k: int) -> tuple[np.ndarray, list[tuple[str, float]]]:
        vec = self.embed([text])[0]
        return vec, self.search(vec, scopes, k)

    def size(self, scope: str | None = None) -> int:
        return self.index.size(scope)
