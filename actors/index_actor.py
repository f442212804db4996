"""IndexActor: owns the embedder and the FAISS indexes (one per scope), shared by all projects."""

from __future__ import annotations

from collections import OrderedDict
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
        # Agents ask the same questions again (retries, every turn of a session, the bench);
        # a hit skips the forward pass, the largest part of a recall (eval/results/perf.md).
        self.query_cache_size = settings.query_cache_size if settings is not None else 1024
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.query_cache_hits = 0

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

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a query, from a bounded LRU cache keyed by its normalised text."""
        key = normalise_query(text)
        vec = self._query_cache.get(key)
        if vec is not None:
            self._query_cache.move_to_end(key)
            self.query_cache_hits += 1
            return vec
        vec = np.asarray(self.embed([key])[0], dtype=np.float32)
        vec.flags.writeable = False  # shared by every later hit
        if self.query_cache_size > 0:
            self._query_cache[key] = vec
            while len(self._query_cache) > self.query_cache_size:
                self._query_cache.popitem(last=False)
        return vec

    def embed_search(self, text: str, scopes: Sequence[str], k: int) -> tuple[np.ndarray, list[tuple[str, float]]]:
        vec = self.embed_query(text)
        return vec, self.search(vec, scopes, k)

    def size(self, scope: str | None = None) -> int:
        return self.index.size(scope)


def normalise_query(text: str) -> str:
    """The cache key of a query: redacted, whitespace runs collapsed, ends stripped.

    The embedders see words, not spacing (MiniLM's pre-tokenizer splits on whitespace),
    so the vector of the normalised text is the vector of the query.
    """
    return " ".join(redact(text).split())
