"""Builders shared by the tests: candidates, memories, settings, a fake index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.models import Candidate, Kind, Origin
from engine.settings import Settings

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY = 86_400_000


def cand(text: str, key: str = "", belief: str = "", *, scope: str = "project:p", t: int = T0, src: Sequence[str] = ("u1",),
         negated: bool = False, kind: Kind = Kind.FACT, origin: Origin = Origin.EXTRACTOR) -> Candidate:
    return Candidate(text=text, key=key, belief=belief, scope=scope, valid_from_ms=t, source_unit_ids=tuple(src),
                     negated=negated, kind=kind, origin=origin)


def settings(**retrieval: object) -> Settings:
    base = Settings()
    if retrieval:
        return base.model_copy(update={"retrieval": base.retrieval.model_copy(update=retrieval)})
    return base


class LocalIndex:
    """An IndexPort over the real VectorIndex with the deterministic hash embedder."""

    def __init__(self) -> None:
        from actors.embedder import make_embedder
        from actors.index import VectorIndex

        self.embedder = make_embedder("hash")
        self.index = VectorIndex()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed(list(texts))

    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.index.upsert(scope, list(ids), vectors)

    def remove(self, ids: Sequence[str]) -> None:
        self.index.remove(list(ids))

    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]:
        return self.index.search(vector, list(scopes), k)

    def save_snapshot(self, scope: str, path: str, token: str, wait_s: float = 0.0) -> bool:
        return self.index.save(scope, path, token, wait_s)

    def load_snapshot(self, scope: str, path: str, token: str) -> bool:
        return self.index.load(scope, path, token)

    def embed_search_vectors(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, np.ndarray]]:
        vec, hits = self.embed_search(text, scopes, k)
        return vec, hits, self.index.vectors(dict.fromkeys([*(h[0] for h in hits), *also]))

    def embed_search(self, text: str, scopes: Sequence[str], k: int) -> tuple[np.ndarray, list[tuple[str, float]]]:
        vec = self.embed([text])[0]
        return vec, self.search(vec, scopes, k)
