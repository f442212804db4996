"""Cosine shortlists over memory vectors: one FAISS index per scope.

A scope starts as an exact ``IndexIDMap2(IndexFlatIP)``. When it holds more than
``approximate_above`` vectors it is rebuilt as ``IndexIDMap2(IndexHNSWFlat)`` (M 32,
efSearch 64: recall 0.997 at 100k x 384, /work/shared/FACTS.md "FAISS").

HNSW cannot remove vectors, so an approximate scope keeps stale entries: a removed id
stays in the graph and a replaced id has its old vector there too. Search over-fetches,
drops labels that are no longer live in the scope, and rescores the survivors against
their current vector (``IndexIDMap2.reconstruct`` returns the newest vector added under a
label), so scores are exact and nothing removed is ever returned. When stale entries pass
``rebuild_stale_fraction`` of the scope's entries the scope is rebuilt from its live vectors.

A rebuild of a scope with at least ``background_above`` vectors (the switch to HNSW at
50k takes 12-41 s) runs on a thread: the current index keeps serving and taking writes,
which are logged and replayed into the new index when it is swapped in, at the start of
the next call once the thread is done (:meth:`VectorIndex.wait_for_builds` waits for it).

FAISS labels are int64 derived from the memory id string (blake2b, 8 bytes, top bit
cleared); a two-way map turns them back. All vectors are L2-normalised, so inner
product is cosine. Errors from ``faiss`` become ``IndexError_`` here.

Thread-safe: every public method holds one lock (the index actor serves searches from its
``query`` concurrency group while writes arrive in the default one); waits for a background
build happen outside it, and the build thread touches only its new index.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import faiss
import numpy as np

from engine.errors import IndexError_, InvalidInput

__all__ = ["VectorIndex", "label_for"]

_LABEL_MASK = 0x7FFF_FFFF_FFFF_FFFF  # non-negative int64; faiss uses -1 for "no result"


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Run ``method`` holding the index's lock (the owner's threads: the actor's call groups)."""

    @functools.wraps(method)
    def wrapper(self: VectorIndex, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


def _meta_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".npz")


def label_for(memory_id: str) -> int:
    """The int64 FAISS label of a memory id: blake2b-64 with the sign bit cleared."""
    digest = hashlib.blake2b(memory_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _LABEL_MASK


@contextmanager
def _faiss_errors(what: str) -> Iterator[None]:
    try:
        yield
    except (RuntimeError, AssertionError) as exc:  # C++ exceptions; shape asserts in faiss' Python layer
        raise IndexError_(f"faiss failed to {what}: {exc}") from exc


@dataclass
class _Scope:
    index: faiss.Index
    approximate: bool
    live: set[int] = field(default_factory=set)  # labels whose current vector is here

    @property
    def stale(self) -> int:
        """Entries in the index that are removed or superseded (approximate scopes only)."""
        return int(self.index.ntotal) - len(self.live)


@dataclass
class _Build:
    """A rebuild of one scope running on a thread, and the writes made since its snapshot."""

    index: faiss.Index
    approximate: bool
    labels: np.ndarray
    thread: threading.Thread | None = None
    pending: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    error: BaseException | None = None


class VectorIndex:
    """Per-scope cosine search over memory ids.

    Args:
        dim: vector width (384 for all-MiniLM-L6-v2).
        approximate_above: a scope with more live vectors than this switches to HNSW.
        rebuild_stale_fraction: an HNSW scope is rebuilt when stale entries pass this share.
        hnsw_m, ef_search: HNSW graph degree and search breadth.
        background_above: rebuilds of scopes with at least this many vectors run on a thread.
    """

    def __init__(
        self,
        dim: int = 384,
        approximate_above: int = 50_000,
        rebuild_stale_fraction: float = 0.2,
        hnsw_m: int = 32,
        ef_search: int = 64,
        background_above: int = 20_000,
    ) -> None:
        if dim < 1 or approximate_above < 1 or not 0.0 < rebuild_stale_fraction < 1.0:
            raise InvalidInput("dim and approximate_above must be >= 1, rebuild_stale_fraction in (0, 1)")
        self.dim = dim
        self.approximate_above = approximate_above
        self.rebuild_stale_fraction = rebuild_stale_fraction
        self.hnsw_m = hnsw_m
        self.ef_search = ef_search
        self.background_above = background_above
        self._scopes: dict[str, _Scope] = {}
        self._builds: dict[str, _Build] = {}
        self._label_of: dict[str, int] = {}
        self._id_of: dict[int, str] = {}
        self._scope_of: dict[int, str] = {}
        # One query at a time is faster single-threaded (FACTS.md "FAISS"); HNSW builds
        # get the threads back. This is process-wide: the owning actor is the process.
        self._build_threads = max(1, faiss.omp_get_max_threads())
        faiss.omp_set_num_threads(1)
        self._lock = threading.RLock()

    # -- writes ----------------------------------------------------------------

    @_locked
    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Add or replace vectors under ``scope``; an id held by another scope moves here.

        Within one call a repeated id keeps its last row.

        Raises:
            InvalidInput: shapes disagree, a vector is zero or not finite, an id is not a str.
            IndexError_: two ids hash to one label, or faiss fails.
        """
        if not scope:
            raise InvalidInput("scope must be a non-empty string")
        self._finish_builds()
        rows = self._check_vectors(vectors, expected_rows=len(ids))
        last_row = {self._check_id(memory_id): i for i, memory_id in enumerate(ids)}
        if not last_row:
            return
        labels = np.asarray(self._claim_labels(list(last_row)), dtype=np.int64)
        rows = rows[list(last_row.values())]
        elsewhere: dict[str, list[int]] = {}
        for label in labels.tolist():
            held_by = self._scope_of.get(label)
            if held_by is not None and held_by != scope:
                elsewhere.setdefault(held_by, []).append(label)
        for other, moved in elsewhere.items():
            self._drop(other, moved)
            self._maybe_rebuild(other)
        target = self._scopes.get(scope)
        if target is None:
            target = self._scopes[scope] = _Scope(index=self._new_index(approximate=False), approximate=False)
        if not target.approximate:
            replaced = [label for label in labels.tolist() if label in target.live]
            if replaced:
                with _faiss_errors("remove replaced vectors"):
                    # faiss' SWIG stub names only IDSelector; its Python wrapper takes an int64 id array
                    target.index.remove_ids(np.asarray(replaced, dtype=np.int64))  # type: ignore[arg-type]
        with _faiss_errors("add vectors"):
            target.index.add_with_ids(rows, labels)
        build = self._builds.get(scope)
        if build is not None:
            build.pending.append((labels.copy(), rows.copy()))
        for label in labels.tolist():
            target.live.add(label)
            self._scope_of[label] = scope
        self._maybe_rebuild(scope)

    @_locked
    def remove(self, ids: Iterable[str]) -> int:
        """Remove ids from whichever scope holds them; unknown ids are ignored.

        Returns:
            how many ids were removed.
        """
        self._finish_builds()
        by_scope: dict[str, list[int]] = {}
        for memory_id in ids:
            label = self._label_of.get(memory_id)
            if label is not None and label in self._scope_of:
                by_scope.setdefault(self._scope_of[label], []).append(label)
        for scope, labels in by_scope.items():
            self._drop(scope, labels)
            self._forget(labels)
            self._maybe_rebuild(scope)
        return sum(len(labels) for labels in by_scope.values())

    @_locked
    def clear(self, scope: str) -> None:
        """Drop every vector of ``scope``."""
        dropped = self._scopes.pop(scope, None)
        if dropped is not None:
            for label in dropped.live:
                self._scope_of.pop(label, None)
            self._forget(dropped.live)

    # -- reads -----------------------------------------------------------------

    @_locked
    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The ``k`` ids most similar to ``vector`` across ``scopes``, best first.

        Scores are cosine similarities; ties break by id so results are deterministic.
        Unknown scopes contribute nothing.

        Raises:
            InvalidInput: the query has the wrong width, is zero or not finite.
            IndexError_: faiss fails.
        """
        return self._search(vector, scopes, k, None)

    @_locked
    def search_vectors(self, vector: np.ndarray, scopes: Sequence[str], k: int, also: Iterable[str] = ()
                       ) -> tuple[list[tuple[str, float]], dict[str, np.ndarray]]:
        """:meth:`search`, and :meth:`vectors` of its hits and of ``also``, in one call.

        An approximate scope rescores its hits with their reconstructed vectors: those are kept
        and handed out, not reconstructed a second time (a recall at 100k, issue 15).
        """
        kept: dict[str, np.ndarray] = {}
        hits = self._search(vector, scopes, k, kept)
        wanted = dict.fromkeys([*(h[0] for h in hits), *also])
        rest = self._vectors(i for i in wanted if i not in kept)
        return hits, {i: v for i in wanted if (v := kept.get(i, rest.get(i))) is not None}

    def _search(self, vector: np.ndarray, scopes: Sequence[str], k: int,
                kept: dict[str, np.ndarray] | None) -> list[tuple[str, float]]:
        self._finish_builds()
        faiss.omp_set_num_threads(1)  # per calling thread (the query group's is not the constructor's)
        query = self._check_vectors(np.asarray(vector).reshape(1, -1), expected_rows=1)
        if k < 1:
            return []
        hits: list[tuple[str, float]] = []
        for scope in dict.fromkeys(scopes):
            held = self._scopes.get(scope)
            if held is not None and held.live:
                hits.extend(self._search_scope(held, query, k, kept))
        hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    @_locked
    def vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """Current (normalised) vectors of the ids that are indexed; others are left out."""
        return self._vectors(ids)

    def _vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        by_scope: dict[str, list[tuple[str, int]]] = {}
        for memory_id in ids:
            label = self._label_of.get(memory_id)
            scope = self._scope_of.get(label) if label is not None else None
            if label is not None and scope is not None:
                by_scope.setdefault(scope, []).append((memory_id, label))
        found: dict[str, np.ndarray] = {}
        for scope, pairs in by_scope.items():
            with _faiss_errors("reconstruct vectors"):  # one call per scope (a recall asks for ~60)
                rows = self._scopes[scope].index.reconstruct_batch(np.asarray([lb for _, lb in pairs], dtype=np.int64))
            found.update(zip((mid for mid, _ in pairs), np.asarray(rows, dtype=np.float32), strict=True))
        return found

    @_locked
    def size(self, scope: str | None = None) -> int:
        """Live vectors in ``scope``, or in all scopes."""
        if scope is None:
            return len(self._scope_of)
        held = self._scopes.get(scope)
        return 0 if held is None else len(held.live)

    @_locked
    def scope_of(self, memory_id: str) -> str | None:
        """The scope that holds ``memory_id``, if any."""
        label = self._label_of.get(memory_id)
        return None if label is None else self._scope_of.get(label)

    @_locked
    def is_approximate(self, scope: str) -> bool:
        """Whether ``scope`` is currently served by HNSW rather than exact search."""
        self._finish_builds()
        held = self._scopes.get(scope)
        return held is not None and held.approximate

    @_locked
    def building(self, scope: str) -> bool:
        """Whether a background rebuild of ``scope`` is still running."""
        build = self._builds.get(scope)
        return build is not None and build.thread is not None and build.thread.is_alive()

    @_locked
    def building_any(self) -> bool:
        """Whether any background rebuild is still running."""
        return any(self.building(scope) for scope in list(self._builds))

    def wait_for_builds(self, timeout_s: float | None = None) -> None:
        """Wait for background rebuilds to finish and swap them in, including a rebuild that a
        finished one started (too many writes arrived during it: a store opened in chunks).
        The waiting holds no lock: searches and writes go on meanwhile."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            with self._lock:
                threads = [b.thread for b in self._builds.values() if b.thread is not None]
            for thread in threads:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            with self._lock:
                self._finish_builds()
            if not self.building_any() or (deadline is not None and time.monotonic() >= deadline):
                return

    # -- snapshots (a store opens without sending every vector again) -------------------

    def save(self, scope: str, path: str | os.PathLike[str], token: str, wait_s: float = 0.0) -> bool:
        """Write the index serving ``scope`` to ``path`` (``path.npz`` beside it: the token, the live ids).

        A background rebuild of the scope is waited for up to ``wait_s`` (so that the HNSW graph,
        not the exact index it replaces, is what the next open reads). Files are written to
        temporary names and renamed, the graph first, so the pair is complete before the
        metadata names its token.

        Returns:
            whether a snapshot was written (False: nothing held for ``scope``).
        """
        if self.building(scope) and wait_s > 0:
            self.wait_for_builds(wait_s)
        with self._lock:
            return self._save(scope, path, token)

    def _save(self, scope: str, path: str | os.PathLike[str], token: str) -> bool:
        self._finish_builds()
        held = self._scopes.get(scope)
        if held is None or not held.live:
            return False
        target = Path(path)
        meta = _meta_path(target)
        labels = np.fromiter(sorted(held.live), dtype=np.int64, count=len(held.live))
        ids = "\n".join(self._id_of[label] for label in labels.tolist())
        with _faiss_errors("write an index snapshot"):
            faiss.write_index(held.index, str(target) + ".tmp")
        try:
            with open(str(meta) + ".tmp", "wb") as fh:
                np.savez(fh, token=np.frombuffer(token.encode("utf-8"), dtype=np.uint8),
                         dim=np.array([self.dim], dtype=np.int64), approximate=np.array([held.approximate]),
                         labels=labels, ids=np.frombuffer(ids.encode("utf-8"), dtype=np.uint8))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(str(target) + ".tmp", target)
            os.replace(str(meta) + ".tmp", meta)
        except OSError as exc:
            raise IndexError_(f"cannot write the index snapshot {target}: {exc}") from exc
        return True

    @_locked
    def load(self, scope: str, path: str | os.PathLike[str], token: str) -> bool:
        """Serve ``scope`` from the snapshot at ``path`` if it was saved for ``token``; else change nothing.

        Returns:
            whether the snapshot was used (False: no file, another token or width, a damaged file,
            or an id held by another scope).
        """
        target = Path(path)
        try:
            with np.load(_meta_path(target), allow_pickle=False) as z:
                if z["token"].tobytes().decode("utf-8") != token or int(z["dim"][0]) != self.dim:
                    return False
                approximate = bool(z["approximate"][0])
                labels = z["labels"].astype(np.int64)
                ids = z["ids"].tobytes().decode("utf-8").split("\n") if z["ids"].size else []
            index = faiss.read_index(str(target))
        except (OSError, KeyError, ValueError, IndexError, UnicodeDecodeError, RuntimeError, zipfile.BadZipFile):
            return False
        if len(ids) != labels.size or index.d != self.dim or index.ntotal < labels.size:
            return False
        label_list = labels.tolist()
        known = set(label_list) & self._id_of.keys()
        if known:  # ids this index already knows must agree with the snapshot's
            id_at = dict(zip(label_list, ids, strict=True))
            for label in known:
                held_by = self._scope_of.get(label)
                if (held_by is not None and held_by != scope) or self._id_of[label] != id_at[label]:
                    return False
        if approximate:
            with _faiss_errors("set up a loaded index"):
                inner: Any = faiss.downcast_index(index.index)  # type: ignore[attr-defined]  # an IndexIDMap2 read back
                inner.hnsw.efSearch = self.ef_search
        self._builds.pop(scope, None)  # a build of the old content is of no use now
        self.clear(scope)
        self._label_of.update(zip(ids, label_list))
        self._id_of.update(zip(label_list, ids))
        self._scope_of.update(dict.fromkeys(label_list, scope))
        self._scopes[scope] = _Scope(index=index, approximate=approximate, live=set(label_list))
        self._maybe_rebuild(scope)
        return True

    # -- internals -------------------------------------------------------------

    def _search_scope(self, held: _Scope, query: np.ndarray, k: int,
                      kept: dict[str, np.ndarray] | None = None) -> list[tuple[str, float]]:
        """The ``k`` best of one scope; an approximate scope puts the vectors it rescored with in ``kept``."""
        total = int(held.index.ntotal)
        if not held.approximate:
            with _faiss_errors("search"):
                scores, labels = held.index.search(query, min(k, total))
            return [
                (self._id_of[label], float(score))
                for score, label in zip(scores[0].tolist(), labels[0].tolist(), strict=True)
                if label >= 0
            ]
        # Over-fetch until k live labels turn up: stale entries may crowd the top.
        fetch = min(total, max(2 * k, k + held.stale))
        while True:
            with _faiss_errors("search"):
                _, labels = held.index.search(query, fetch)
            live = [label for label in dict.fromkeys(labels[0].tolist()) if label in held.live]
            if len(live) >= k or fetch >= total:
                break
            fetch = min(total, fetch * 4)
        if not live:
            return []
        with _faiss_errors("reconstruct candidates"):
            current = held.index.reconstruct_batch(np.asarray(live, dtype=np.int64))
        exact = current @ query[0]
        if len(live) > k:
            # Only the k best of this scope (and any tied with the k-th) can be in the answer: the
            # others are not looked up by id (one dictionary miss each at 100k, issue 15).
            cut = len(live) - k
            best = np.flatnonzero(exact >= np.partition(exact, cut)[cut])
            live, current, exact = [live[i] for i in best.tolist()], current[best], exact[best]
        ids = [self._id_of[label] for label in live]
        if kept is not None:
            kept.update(zip(ids, np.asarray(current, dtype=np.float32), strict=True))
        return list(zip(ids, exact.tolist(), strict=True))

    def _drop(self, scope: str, labels: list[int]) -> None:
        held = self._scopes[scope]
        if not held.approximate:
            with _faiss_errors("remove vectors"):
                # faiss' SWIG stub names only IDSelector; its Python wrapper takes an int64 id array
                held.index.remove_ids(np.asarray(labels, dtype=np.int64))  # type: ignore[arg-type]
        for label in labels:
            held.live.discard(label)
            self._scope_of.pop(label, None)
        if not held.live:
            del self._scopes[scope]

    def _forget(self, labels: Iterable[int]) -> None:
        for label in list(labels):
            memory_id = self._id_of.pop(label, None)
            if memory_id is not None:
                self._label_of.pop(memory_id, None)

    def _maybe_rebuild(self, scope: str) -> None:
        held = self._scopes.get(scope)
        if held is None or scope in self._builds:
            return  # a running build replays this call's writes when it is swapped in
        too_big = not held.approximate and len(held.live) > self.approximate_above
        too_stale = held.approximate and held.stale > self.rebuild_stale_fraction * held.index.ntotal
        if too_big or too_stale:
            self._start_build(scope, held)

    def _start_build(self, scope: str, held: _Scope) -> None:
        labels = np.fromiter(held.live, dtype=np.int64, count=len(held.live))
        with _faiss_errors("read vectors for a rebuild"):
            rows = np.ascontiguousarray(held.index.reconstruct_batch(labels), dtype=np.float32)
        approximate = len(labels) > self.approximate_above
        build = _Build(index=self._new_index(approximate=approximate), approximate=approximate, labels=labels)
        if len(labels) < self.background_above:
            self._fill(build, rows, threads=self._build_threads)
            self._swap(scope, build)
            return
        build.thread = threading.Thread(target=self._fill, args=(build, rows, self._build_threads),
                                        name=f"faiss-rebuild-{scope}", daemon=True)
        self._builds[scope] = build
        build.thread.start()

    @staticmethod
    def _fill(build: _Build, rows: np.ndarray, threads: int) -> None:
        """Add the snapshot to the new index (on the build thread: touches only ``build``)."""
        faiss.omp_set_num_threads(threads)  # per thread: the serving thread stays at 1
        try:
            build.index.add_with_ids(rows, build.labels)
        except Exception as exc:  # noqa: BLE001 - reported on the owner thread by _finish_builds
            build.error = exc
        finally:
            faiss.omp_set_num_threads(1)

    def _finish_builds(self) -> None:
        for scope, build in list(self._builds.items()):
            if build.thread is not None and build.thread.is_alive():
                continue
            del self._builds[scope]
            if build.error is not None:
                raise IndexError_(f"rebuild of scope {scope!r} failed: {build.error}") from build.error
            held = self._scopes.get(scope)
            written = sum(len(labels) for labels, _ in build.pending)
            too_many = written >= max(self.background_above, len(build.labels) // 2)
            if held is not None and build.approximate and too_many:
                # Replaying that many writes into HNSW here would block the owner (a store
                # being opened sends its vectors in chunks): build again from what is served now.
                self._start_build(scope, held)
                continue
            self._swap(scope, build)
            self._maybe_rebuild(scope)

    def _swap(self, scope: str, build: _Build) -> None:
        """Replay the writes made during the build, then serve the new index."""
        held = self._scopes.get(scope)
        if held is None:
            return  # the scope was emptied meanwhile
        index = build.index
        present = set(build.labels.tolist())
        with _faiss_errors("replay writes into a rebuilt scope"):
            for labels, rows in build.pending:
                if not build.approximate:
                    again = [label for label in labels.tolist() if label in present]
                    if again:
                        index.remove_ids(np.asarray(again, dtype=np.int64))  # type: ignore[arg-type]
                index.add_with_ids(rows, labels)
                present.update(labels.tolist())
            gone = [label for label in present if label not in held.live]
            if gone and not build.approximate:
                index.remove_ids(np.asarray(gone, dtype=np.int64))  # type: ignore[arg-type]
        self._scopes[scope] = _Scope(index=index, approximate=build.approximate, live=set(held.live))

    def _new_index(self, approximate: bool) -> faiss.Index:
        with _faiss_errors("create an index"):
            if not approximate:
                return faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
            hnsw = faiss.IndexHNSWFlat(self.dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efSearch = self.ef_search
            return faiss.IndexIDMap2(hnsw)

    def _claim_labels(self, memory_ids: list[str]) -> list[int]:
        """Labels for the ids, registering new ones; checks every id before registering any."""
        labels = [self._label_of.get(memory_id, label_for(memory_id)) for memory_id in memory_ids]
        claimed: dict[int, str] = {}
        for memory_id, label in zip(memory_ids, labels, strict=True):
            holder = claimed.setdefault(label, self._id_of.get(label, memory_id))
            if holder != memory_id:
                raise IndexError_(f"memory ids {holder!r} and {memory_id!r} hash to the same label {label}")
        for memory_id, label in zip(memory_ids, labels, strict=True):
            self._label_of[memory_id] = label
            self._id_of[label] = memory_id
        return labels

    @staticmethod
    def _check_id(memory_id: object) -> str:
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput(f"memory id must be a non-empty str, got {memory_id!r}")
        return memory_id

    def _check_vectors(self, vectors: np.ndarray, expected_rows: int) -> np.ndarray:
        rows = np.array(vectors, dtype=np.float32, copy=True, ndmin=2)
        if rows.ndim != 2 or rows.shape != (expected_rows, self.dim):
            raise InvalidInput(f"expected {expected_rows} x {self.dim} vectors, got shape {np.shape(vectors)}")
        if not np.isfinite(rows).all():
            raise InvalidInput("vectors must be finite")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        if expected_rows and (norms <= 1e-12).any():
            raise InvalidInput("cannot index a zero vector")
        if expected_rows:
            rows /= norms
        return np.ascontiguousarray(rows)
