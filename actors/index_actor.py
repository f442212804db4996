"""IndexActor: owns the embedder and the FAISS indexes (one per scope), shared by all projects.

With a local embedder (``minilm``, ``hash``) every text is embedded by it. With a remote one
(``openai``), ``local-only`` texts must never reach the endpoint (DESIGN §9), so the actor
also holds the local embedder ``[embedder] local_name`` and works in a *split* space: a
vector is ``[remote | local]``; an ordinary memory fills the remote half (the local half is
zero), a local-only memory fills the local half. A query is embedded by both halves.
The inner product of a query with a memory is then exactly the cosine in that memory's
own space, so the engine, which stores vectors and takes dot products, needs no change;
:meth:`IndexService.search` scores each half separately because the FAISS index
normalises a query before searching. A local-only and an ordinary memory have cosine 0:
they are never near duplicates of each other.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from actors.embedder import Embedder, make_embedder
from actors.index import VectorIndex
from engine.errors import IndexError_, InvalidInput
from engine.redact import redact
from engine.settings import EmbedderSettings, ModelSettings

#: Embedders that send text to a model endpoint.
REMOTE_EMBEDDERS = frozenset({"openai"})


class IndexChange(NamedTuple):
    """What one engine step changes in a scope's index: ids removed, then ids (re)written."""

    remove: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    vectors: np.ndarray | None = None


class PackedVectors(NamedTuple):
    """The vectors of many memories in one reply: their ids and one float32 matrix (row i is
    ``ids[i]``'s vector). Ray sends a matrix as one buffer where a dict of vectors costs one
    buffer each: about 1 ms more per recall for the ~60 candidates of a shortlist, measured
    from a driver on 2 cores (issue 15)."""

    ids: tuple[str, ...]
    matrix: np.ndarray

    @classmethod
    def of(cls, vectors: dict[str, np.ndarray], dim: int) -> PackedVectors:
        if not vectors:
            return cls((), np.zeros((0, dim), dtype=np.float32))
        return cls(tuple(vectors), np.asarray(np.stack(list(vectors.values())), dtype=np.float32))

    def as_dict(self) -> dict[str, np.ndarray]:
        """Back to ``{id: vector}`` (rows of the one matrix, no copies)."""
        return dict(zip(self.ids, self.matrix, strict=True))


class IndexService:
    """Embeds text and answers cosine shortlists within scopes.

    Args:
        settings: the ``[embedder]`` section; the embedder is built here, inside the actor.
        model: the ``[model]`` section (the endpoint of a remote embedder).
    """

    def __init__(self, settings: EmbedderSettings | None = None, model: ModelSettings | None = None) -> None:
        settings = settings or EmbedderSettings()
        self.settings = settings
        self.batch_size = settings.batch_size
        self.embedder: Embedder = make_embedder(settings.name, batch_size=settings.batch_size, settings=settings,
                                                model=model)
        self.local: Embedder | None = None
        if settings.name in REMOTE_EMBEDDERS:
            if settings.local_name in REMOTE_EMBEDDERS:
                raise InvalidInput(f"[embedder] local_name must be a local embedder, not {settings.local_name!r}")
            self.local = make_embedder(settings.local_name, batch_size=settings.batch_size)
        self.split = self.embedder.dim if self.local is not None else 0
        self.dim = self.embedder.dim + (self.local.dim if self.local is not None else 0)
        self.index = VectorIndex(dim=self.dim)
        # Agents ask the same questions again (retries, every turn of a session, the bench);
        # a hit skips the forward pass, the largest part of a recall (eval/results/perf.md).
        self.query_cache_size = settings.query_cache_size
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._raw_keys: OrderedDict[bytes, str] = OrderedDict()  # digest of a query as typed -> its cache key
        self._cache_lock = threading.Lock()
        self.query_cache_hits = 0
        # A new value each time the actor starts: the FAISS index lives in memory, so after a
        # restart by Ray it is empty until the engines upsert their vectors again (RemoteIndex).
        self._generation = uuid.uuid4().hex

    def generation(self) -> str:
        """Names this start of the actor (it changes when Ray restarts it)."""
        return self._generation

    def ping(self) -> str:
        return self.embedder.name if self.local is None else f"{self.embedder.name}+{self.local.name}"

    def embedder_id(self) -> str:
        """Names the vector space: embedder (and model), width, and the local half in split mode.

        An export records it with its vectors; an import uses them only when it is this one.
        """
        main = self.embedder.name + (f":{model}" if (model := getattr(self.embedder, "model", "")) else "")
        local = f"+{self.local.name}" if self.local is not None else ""
        return f"{main}{local}/{self.dim}"

    def embedder_backend(self) -> str:
        """How the main embedder computes its vectors (``onnx`` or ``numpy`` for MiniLM, else its name);
        loads the model if it is not loaded yet."""
        load = getattr(self.embedder, "load", None)
        if callable(load):
            load()
        return str(getattr(self.embedder, "backend", self.embedder.name))

    def probe(self) -> str:
        """Embed one text (``dynmem doctor``); a one-line verdict or an error."""
        vec = self.embed(["dynmem doctor check"])
        if vec.shape != (1, self.dim):
            raise IndexError_(f"expected a 1 x {self.dim} vector, got {vec.shape}")
        return f"{self.ping()} embeds {self.dim}-d vectors"

    def embed(self, texts: Sequence[str], local_only: Sequence[bool] | None = None) -> np.ndarray:
        """Memory vectors; a text flagged ``local_only`` is embedded by the local embedder only.

        Redaction runs before anything reaches a model, the embedder included.
        """
        texts = [redact(t) for t in texts]
        flags = [bool(f) for f in local_only] if local_only is not None else [False] * len(texts)
        if len(flags) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(flags)} local_only flags")
        if self.local is None:
            return self.embedder.embed(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        remote = [i for i, f in enumerate(flags) if not f]
        local = [i for i, f in enumerate(flags) if f]
        if remote:
            out[remote, :self.split] = self.embedder.embed([texts[i] for i in remote])
        if local:
            out[local, self.split:] = self.local.embed([texts[i] for i in local])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a query, from a bounded LRU cache keyed by its normalised text.

        A query seen before as typed skips the normalisation too (redaction is a tenth of a
        millisecond): the raw text is remembered by its digest only, never as text.
        """
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
        with self._cache_lock:  # the query group and the default group may both embed queries
            key = self._raw_keys.get(digest)
            if key is not None:
                self._raw_keys.move_to_end(digest)
        if key is None:
            key = normalise_query(text)
        with self._cache_lock:
            vec = self._query_cache.get(key)
            if vec is not None:
                self._query_cache.move_to_end(key)
                self._raw_keys[digest] = key
                while len(self._raw_keys) > self.query_cache_size:
                    self._raw_keys.popitem(last=False)
                self.query_cache_hits += 1
                return vec
        vec = self._embed_query(key)
        vec.flags.writeable = False  # shared by every later hit
        if self.query_cache_size > 0:
            with self._cache_lock:
                self._raw_keys[digest] = key
                self._query_cache[key] = vec
                while len(self._raw_keys) > self.query_cache_size:
                    self._raw_keys.popitem(last=False)
                while len(self._query_cache) > self.query_cache_size:
                    self._query_cache.popitem(last=False)
        return vec

    def _embed_query(self, clean: str) -> np.ndarray:
        """A query vector: both halves in split mode (each unit length), else one unit row."""
        if self.local is None:
            return np.asarray(self.embedder.embed([clean])[0], dtype=np.float32)
        return np.concatenate([self.embedder.embed([clean])[0], self.local.embed([clean])[0]]).astype(np.float32)

    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        self.index.upsert(scope, list(ids), np.asarray(vectors, dtype=np.float32))

    def remove(self, ids: Sequence[str]) -> None:
        self.index.remove(list(ids))

    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]:
        vec = np.asarray(vector, dtype=np.float32).reshape(-1)
        if self.local is None:
            return self.index.search(vec, list(scopes), k)
        best: dict[str, float] = {}
        for half in (slice(0, self.split), slice(self.split, self.dim)):
            part = np.zeros_like(vec)
            part[half] = vec[half]
            if float(np.linalg.norm(part)) <= 1e-12:
                continue
            for mid, cos in self.index.search(part, list(scopes), k):
                best[mid] = max(cos, best.get(mid, -1.0))
        return sorted(best.items(), key=lambda h: (-h[1], h[0]))[:k]

    def update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                      scopes: Sequence[Sequence[str]], k: int) -> list[list[tuple[str, float]]]:
        """Carry out ``changes`` in order (each as :meth:`remove`, then :meth:`upsert` into ``scope``),
        then shortlist each row of ``queries`` in its scopes: an engine batch's index work for
        one job in one call, where one call per change and per query made ingest wait on round
        trips (issue 12)."""
        for change in changes:
            if change.remove:
                self.remove(list(change.remove))
            if change.ids and change.vectors is not None:
                self.upsert(scope, list(change.ids), change.vectors)
        rows = [] if queries is None else list(np.asarray(queries, dtype=np.float32))
        if len(rows) != len(scopes):
            raise InvalidInput(f"{len(rows)} queries but {len(scopes)} scope lists")
        return [self.search(q, s, k) for q, s in zip(rows, scopes)]

    def checked_update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                              scopes: Sequence[Sequence[str]], k: int) -> tuple[str, list[list[tuple[str, float]]]]:
        """:meth:`update_search` with this start's :meth:`generation` (see :meth:`checked_search`)."""
        return self._generation, self.update_search(scope, changes, queries, scopes, k)

    def checked_search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> tuple[str, list[tuple[str, float]]]:
        """:meth:`search` with this start's :meth:`generation`: one round trip where a caller that
        must notice a restart would make two (it discards the hits and searches again after a refill)."""
        return self._generation, self.search(vector, scopes, k)

    def search_vectors(self, vector: np.ndarray, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                       ) -> tuple[str, list[tuple[str, float]], PackedVectors]:
        """:meth:`checked_search`, plus the vectors of the hits and of the ids in ``also`` (those indexed):
        a recall scores and suppresses its candidates from memory, without reading them from disk."""
        hits, found = self._search_found(vector, scopes, k, also)
        return self._generation, hits, PackedVectors.of(found, self.dim)

    def _search_found(self, vector: np.ndarray, scopes: Sequence[str], k: int, also: Sequence[str]
                      ) -> tuple[list[tuple[str, float]], dict[str, np.ndarray]]:
        if self.local is None:
            return self.index.search_vectors(np.asarray(vector, dtype=np.float32).reshape(-1), list(scopes), k, also)
        hits = self.search(vector, scopes, k)  # split space: each half searched on its own (:meth:`search`)
        return hits, self.index.vectors(dict.fromkeys([*(h[0] for h in hits), *also]))

    def checked_embed_search(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[str, np.ndarray, list[tuple[str, float]], PackedVectors]:
        """This start's generation, the query's vector, its shortlist and the candidates' vectors
        (:meth:`search_vectors`): a recall's one call to this actor, served in its ``query`` group
        (the index is thread-safe, so it never waits for a bulk batch)."""
        vec = self.embed_query(text)
        gen, hits, vectors = self.search_vectors(vec, scopes, k, also)
        return gen, vec, hits, vectors

    def embed_search_vectors(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, np.ndarray]]:
        """:meth:`checked_embed_search` without the generation (the engine's port in process: the vectors
        stay a dict, not packed into one matrix for Ray and unpacked again)."""
        vec = self.embed_query(text)
        hits, found = self._search_found(vec, scopes, k, also)
        return vec, hits, found

    def embed_search(self, text: str, scopes: Sequence[str], k: int) -> tuple[np.ndarray, list[tuple[str, float]]]:
        vec = self.embed_query(text)
        return vec, self.search(vec, scopes, k)

    def size(self, scope: str | None = None) -> int:
        return self.index.size(scope)

    def save_snapshot(self, scope: str, path: str, token: str, wait_s: float = 0.0) -> bool:
        """Write ``scope``'s index to ``path`` for the store content ``token`` (``VectorIndex.save``)."""
        return self.index.save(scope, path, token, wait_s)

    def load_snapshot(self, scope: str, path: str, token: str) -> bool:
        """Serve ``scope`` from the snapshot at ``path`` when it was saved for ``token`` (``VectorIndex.load``)."""
        return self.index.load(scope, path, token)

    def wait_for_builds(self, timeout_s: float | None = None) -> bool:
        """Wait for background index rebuilds (the switch to HNSW); True when none is left running."""
        self.index.wait_for_builds(timeout_s)
        return not self.index.building_any()


def normalise_query(text: str) -> str:
    """The cache key of a query: redacted, whitespace runs collapsed, ends stripped.

    The embedders see words, not spacing (MiniLM's pre-tokenizer splits on whitespace),
    so the vector of the normalised text is the vector of the query.
    """
    return " ".join(redact(text).split())
