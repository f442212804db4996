"""EngineActor: one per project, the single writer of that project's ``memory.sqlite``.

``EngineService`` is the plain class (tests build it directly); ``launch.py`` wraps it
with ``ray.remote``. Every change is one SQLite transaction holding the memories, their
audit rows, tensions, jobs and a receipt (the effect transaction); only after the commit
is the in-memory table updated and the vector index told. A batch of extraction jobs
(:meth:`EngineService.ingest_many`) is one transaction for all of its jobs: each job is
mirrored in the table and its index changes sent before the next job's shortlists (which
must see them); if the batch fails, the table and the index entries it touched are read
back from the store.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from actors.clock import Clock
from actors.index_actor import IndexChange
from actors.ref import Pending, Ref
from actors.store.memory_store import AuditRecord, ChangeWatch, MemoryStore, Review, Step
from actors.store.snapshots import LEXICAL_FILE, VECTORS_FILE, drop, load_lexical, save_lexical
from actors.wire import (
    ForgetRequest,
    ForgetResult,
    IngestJob,
    IngestOutcome,
    IngestReport,
    MemoryDetail,
    OpenConflict,
    RecallRequest,
    RecallResult,
    RememberRequest,
    RepairRecord,
    ReviewItem,
    Stats,
)
from engine.dynamics import credit, rebalance
from engine.effects import Effects, JobRequest
from engine.errors import ActorDied, Conflict, DynmemError, EmptyQuery, IndexError_, InvalidInput, NotFound, StoreError
from engine.forget import expire_due, purge, retract
from engine.ingest import ingest, rivals_of
from engine.keys import normalize_belief, normalize_key, resolve_key, resolve_slot, slot_text, value_kind
from engine.models import GLOBAL_SCOPE, AuditEvent, Candidate, Kind, Memory, Origin, Sensitivity, Tension, Tier, TrustState, Verdict
from engine.redact import redact
from engine.retrieval import Shortlisted, Suppressed, search_text, select
from engine.scopes import project_scope, readable_scopes, scope_for
from engine.settings import Settings
from engine.state import MemoryTable, stable_id, tension_id_for
from engine.verdicts import apply_review, apply_verdict


class IndexPort(Protocol):
    """What the engine needs from the IndexActor (a local object or a Ray handle adapter)."""

    def embed(self, texts: Sequence[str], local_only: Sequence[bool] | None = None) -> np.ndarray: ...
    def upsert(self, scope: str, ids: Sequence[str], vectors: np.ndarray) -> None: ...
    def remove(self, ids: Sequence[str]) -> None: ...
    def search(self, vector: np.ndarray, scopes: Sequence[str], k: int) -> list[tuple[str, float]]: ...
    def update_search(self, scope: str, changes: Sequence[IndexChange], queries: np.ndarray | None,
                      scopes: Sequence[Sequence[str]], k: int) -> list[list[tuple[str, float]]]: ...
    def embed_search_vectors(self, text: str, scopes: Sequence[str], k: int, also: Sequence[str] = ()
                             ) -> tuple[np.ndarray, list[tuple[str, float]], dict[str, np.ndarray]]: ...
    def save_snapshot(self, scope: str, path: str, token: str, wait_s: float = 0.0) -> bool: ...
    def load_snapshot(self, scope: str, path: str, token: str) -> bool: ...


#: At close, how long to wait for a running HNSW build before saving the vector snapshot: the
#: switch at 50k-100k vectors takes 12-41 s (FACTS.md "FAISS"); past this, the exact index
#: serving meanwhile is saved, and the next open starts the build again.
SNAPSHOT_BUILD_WAIT_S = 60.0


class GlobalPort(Protocol):
    """Read access to the global scope's engine, for recall from a project."""

    def snapshot(self, since_version: int) -> tuple[int, list[Memory], dict[str, np.ndarray]] | None: ...

    def submit_snapshot(self, since_version: int
                        ) -> Pending[tuple[int, list[Memory], dict[str, np.ndarray]] | None]: ...


_DUPLICATE = IngestReport(outcomes={"duplicate_job": 1}, memory_ids=(), applied=False)


class EngineService:
    """The engine of one project (or of the global scope when ``project`` is None)."""

    def __init__(self, project: str | None, data_dir: Path, settings: Settings, index: IndexPort,
                 clock: Clock | None = None, global_engine: GlobalPort | None = None) -> None:
        self.project = project
        self.scope = project_scope(project) if project is not None else GLOBAL_SCOPE
        self.settings = settings
        self.index = index
        self.clock = clock or Clock()
        self.global_engine = global_engine
        folder = Path(data_dir) / ("global" if project is None else "projects" / Path(_slug(project)))
        folder.mkdir(parents=True, exist_ok=True)
        if project is not None and not (folder / "project.json").exists():  # names the folder for `dynmem projects`
            (folder / "project.json").write_text(json.dumps({"project": project}), encoding="utf-8")
        self.folder = folder
        self.store = MemoryStore(folder / "memory.sqlite")
        # The lexical index is read from its snapshot when the store's content has not changed since.
        token = self.store.content_token()
        lexical = load_lexical(folder / LEXICAL_FILE, token)
        self.table = MemoryTable.from_records(self.store.memory_records(), self.store.load_tensions(open_only=True),
                                              lexical=lexical)
        self._saved_token = token if lexical is not None and self.table.lexical is lexical else ""
        self._vectors_token = ""  # the content token of the vector snapshot loaded at open, if any
        # Pairs judged distinct (verdict unrelated, or a person's keep_both): never suppress one by the other.
        self.distinct: set[frozenset[str]] = set()
        self._note_distinct(self.store.load_tensions(open_only=False))
        self._key_vectors: dict[str, np.ndarray] = {}  # embeddings of keys, for keys decided by meaning
        # An ingest batch's index changes: those not yet sent, and all of them until the batch is
        # in the store (a refill of a restarted index applies them again after the store's).
        self._pending_index: list[IndexChange] = []
        self._batch_index: list[IndexChange] = []
        self.step = self.store.step()
        self.version = 1
        self._global_version = 0
        self._global = MemoryTable()
        self._global_vectors: dict[str, np.ndarray] = {}
        self._global_watch = ChangeWatch(Path(data_dir) / "global" / "memory.sqlite")
        if hasattr(index, "on_restart"):  # a restarted IndexActor is refilled from this store (RemoteIndex)
            index.on_restart = self._refill_index
        self._reindex()
        _release_free_memory()  # opening a big store allocates rows and token lists once

    # ---- lifecycle -------------------------------------------------------------------
    def _reindex(self) -> None:
        # Vectors live in memory.sqlite and in the IndexActor's FAISS index, not here: they are
        # streamed from the store to the index in id order and in chunks (bounded memory), and
        # recall reads the few it needs (its candidates') from the store.
        token = self.store.content_token()
        if self.index.load_snapshot(self.scope, str(self.folder / VECTORS_FILE), token):
            self._vectors_token = token  # the vectors as the last close left them, for the same content
            return
        live = set(self.table.servable_ids())
        missing = live - self.store.vector_ids()
        if missing:  # rare (a vector was never stored): embed them and send everything in id order at once
            stored = self.store.vectors(sorted(live - missing))
            some = [m for mid in sorted(missing) if (m := self.table.get(mid)) is not None]
            vecs = self.index.embed([m.text for m in some], _local_only(some))
            stored.update({m.id: vecs[i] for i, m in enumerate(some)})
            ids = sorted(stored)
            for start in range(0, len(ids), _UPSERT_CHUNK):
                chunk = ids[start : start + _UPSERT_CHUNK]
                self.index.upsert(self.scope, chunk, np.stack([np.asarray(stored[i], dtype=np.float32) for i in chunk]))
            return
        for ids, matrix in self.store.vector_chunks(_UPSERT_CHUNK):
            keep = [i for i, mid in enumerate(ids) if mid in live]
            if keep:
                self.index.upsert(self.scope, [ids[i] for i in keep], matrix[keep] if len(keep) < len(ids) else matrix)

    def _refill_index(self) -> None:
        """The IndexActor restarted empty: upload this scope's vectors again and, from a project's
        engine, the global scope's too (from its snapshot), so that its recalls find them."""
        self._reindex()
        for change in list(self._batch_index):  # a batch in progress: its changes are not in the store yet
            if change.remove:
                self.index.remove(list(change.remove))
            if change.ids and change.vectors is not None:
                self.index.upsert(self.scope, list(change.ids), change.vectors)
        if self.global_engine is None:
            return
        self._refresh_global()
        ids = sorted(self._global_vectors)
        for start in range(0, len(ids), _UPSERT_CHUNK):
            chunk = ids[start : start + _UPSERT_CHUNK]
            self.index.upsert(GLOBAL_SCOPE, chunk, np.stack([np.asarray(self._global_vectors[i], dtype=np.float32)
                                                             for i in chunk]))

    def _note_distinct(self, tensions: Sequence[Tension]) -> None:
        for t in tensions:
            if t.status == "decided" and t.verdict == Verdict.UNRELATED:
                self.distinct.add(frozenset((t.a_id, t.b_id)))

    def close(self) -> None:
        """Save what the next open would rebuild (when the content changed since it was saved), then close."""
        try:
            token = self.store.content_token()
            if token != self._saved_token:
                save_lexical(self.folder / LEXICAL_FILE, token, self.table.lexical)
                self._saved_token = token
            if token != self._vectors_token:
                self.index.save_snapshot(self.scope, str(self.folder / VECTORS_FILE), token, SNAPSHOT_BUILD_WAIT_S)
                self._vectors_token = token
        except (OSError, StoreError, IndexError_):
            pass  # a snapshot is an optimisation: the next open rebuilds without it
        self._global_watch.close()
        self.store.close()

    def ping(self) -> str:
        return self.scope

    # ---- the effect transaction ----------------------------------------------------------
    def _reload(self) -> None:
        self.table = MemoryTable.from_records(self.store.memory_records(), self.store.load_tensions(open_only=True))

    def _commit(self, effects: Effects, new_vectors: dict[str, np.ndarray], mirrored: bool = False,
                result: str = "", fsync: bool = True) -> bool:
        self._check_behind()
        now = self.clock.now_ms()
        adding = set(effects.index_add)  # a set: an import of 100k memories tested a tuple 100k times
        vecs = {i: v for i, v in new_vectors.items() if i in adding}
        purged = any(m.purged for m in effects.memories)
        if purged:  # the snapshots hold the memories' tokens and vectors: none may outlive a purge
            drop(self.folder / LEXICAL_FILE, self.folder / VECTORS_FILE, self.folder / (VECTORS_FILE + ".npz"))
            self._saved_token = self._vectors_token = ""
        # Value credit (every live recall) leaves the snapshots valid; a new text, state or vector does not.
        changed = bool(vecs or effects.index_remove or purged) or (
            (mirrored and bool(effects.memories)) or any(self._content_differs(m) for m in effects.memories))
        try:
            applied = self.store.apply(effects, vecs, now, result, content_changed=changed, fsync=fsync)
        except Exception:
            if mirrored:
                self._reload()
            raise
        if not applied:
            self._reload()
            return False
        if not mirrored:
            self.table.apply(effects)
        self._note_distinct(effects.tensions)
        if effects.step is not None:
            self.step = effects.step
        if effects.index_remove:
            self.index.remove(list(effects.index_remove))
        if vecs:
            ids = sorted(vecs)
            self.index.upsert(self.scope, ids, np.stack([vecs[i] for i in ids]))
        if effects.memories:
            self.version += 1
        return True

    def _content_differs(self, m: Memory) -> bool:
        """Whether writing ``m`` changes what the snapshots hold (its text or whether it is served)."""
        old = self.table.get(m.id)
        return old is None or old.text != m.text or old.servable != m.servable or old.purged != m.purged

    # ---- ingest ----------------------------------------------------------------------
    def ingest(self, receipt: str, candidates: Sequence[Candidate], vectors: np.ndarray | None = None,
               units: int = 1, request_id: str = "", result: str = "") -> IngestReport:
        """Ingest the candidates of one extraction job (exactly once, keyed by ``receipt``)."""
        job = IngestJob(receipt=receipt, candidates=tuple(candidates), units=units)
        outcome = self._ingest_jobs([job], vectors, request_id, result, keep_going=False)[0]
        assert outcome.report is not None  # keep_going=False raises the job's error instead
        return outcome.report

    def ingest_many(self, jobs: Sequence[IngestJob], vectors: np.ndarray | None = None,
                    budget_s: float | None = None) -> list[IngestOutcome]:
        """Ingest a batch of extraction jobs in order, each exactly as :meth:`ingest` would, in ONE
        store transaction and one index call per job (issue 12: one commit and four to six round
        trips per job were most of a replay's time once the model calls overlapped).

        ``vectors`` holds the candidates' vectors, job after job (None: embedded here). A job whose
        ingest fails with a :class:`DynmemError` gets that error in its outcome and leaves nothing
        behind; the jobs before it are kept and the ones after it go on.

        With ``budget_s``, the call stops after the job that uses up that much time and commits:
        the outcomes are then those of the first jobs only, and the caller sends the rest again.
        A recall of this project waits for at most one such slice, not for a whole batch.
        """
        return self._ingest_jobs(list(jobs), vectors, "", "", keep_going=True, budget_s=budget_s)

    def _ingest_jobs(self, jobs: list[IngestJob], vectors: np.ndarray | None, request_id: str, result: str,
                     keep_going: bool, budget_s: float | None = None) -> list[IngestOutcome]:
        self._check_behind()
        deadline = time.monotonic() + budget_s if budget_s is not None else None
        out: list[IngestOutcome] = []
        staged: list[Step] = []
        seen: set[str] = set()
        offset = 0
        try:
            for job in jobs:
                if deadline is not None and out and time.monotonic() >= deadline:
                    break  # the rest in the caller's next call: a recall gets its turn meanwhile
                n = len(job.candidates)
                vecs = vectors[offset:offset + n] if vectors is not None and n else None
                offset += n
                if job.receipt in seen or self.store.has_receipt(job.receipt):
                    out.append(IngestOutcome(report=_DUPLICATE))
                    continue
                try:
                    report, step = self._stage_ingest(job, vecs, request_id, result)
                except DynmemError as exc:
                    # Nothing of this job may stay: the jobs before it are committed, then the
                    # table (which mirrored half of this job) is read back from the store.
                    touched = self._touched()
                    self._commit_staged(staged)
                    staged = []
                    self._recover(touched)
                    if not keep_going:
                        raise
                    out.append(IngestOutcome(error=exc.message, code=exc.code))
                    continue
                seen.add(job.receipt)
                staged.append(step)
                out.append(IngestOutcome(report=report))
            applied = self._commit_staged(staged)
        except BaseException:
            self._recover()
            raise
        if not all(applied):  # a receipt recorded meanwhile by another writer (the writer lock forbids it)
            self._recover()
        return out

    def _stage_ingest(self, job: IngestJob, vectors: np.ndarray | None, request_id: str,
                      result: str) -> tuple[IngestReport, Step]:
        """One job's ingest, mirrored in the table and its index changes queued; its store writes
        are returned for the batch's one transaction."""
        now = self.clock.now_ms()
        cands = self._resolve_keys([c.model_copy(update={"scope": c.scope or self.scope}) for c in job.candidates])
        if cands and vectors is None:
            vectors = self.index.embed([c.text for c in cands], _local_only(cands))
        matrix = np.asarray(vectors, dtype=np.float32) if vectors is not None and cands else None
        # Every candidate's shortlist in one call, after the batch's earlier changes: what one search
        # per candidate saw, since a job's own candidates reach the index only after the job.
        shortlists = self._shortlists(matrix, [[c.scope] for c in cands]) if matrix is not None else []
        work = self.table  # mirrored as we go; read back from the store if the batch fails
        total = Effects()
        new_vecs: dict[str, np.ndarray] = {}
        outcomes: Counter[str] = Counter()
        ids: list[str] = []
        step = self.step + job.units
        for i, c in enumerate(cands):
            vec = matrix[i] if matrix is not None else None
            neighbours: list[tuple[Memory, float]] = []
            for mid, cos in shortlists[i] if matrix is not None else ():
                m = work.get(mid)
                if m is not None:
                    neighbours.append((m, cos))
            res = ingest(c, work, neighbours, now_ms=now, step=step, settings=self.settings,
                         request_id=request_id or job.receipt)
            work.apply(res.effects)
            total = total + res.effects
            outcomes[res.outcome] += 1
            if res.memory_id:
                ids.append(res.memory_id)
                if vec is not None and res.outcome in ("created", "updated", "contested"):
                    new_vecs[res.memory_id] = vec
        moved, events = rebalance(work, step, now, self.settings.dynamics)
        upkeep = Effects(memories=tuple(moved), audit=tuple(events))
        work.apply(upkeep)
        expired = expire_due(work.expiring(), now)  # only memories with a time to live can expire
        work.apply(expired)
        total = total + upkeep + expired + Effects(receipt=job.receipt, step=step)
        staged = self._stage(total, new_vecs, result)
        return IngestReport(outcomes=dict(outcomes), memory_ids=tuple(dict.fromkeys(ids)), applied=True), staged

    def _stage(self, effects: Effects, new_vectors: dict[str, np.ndarray], result: str) -> Step:
        """What :meth:`_commit` does around its write for effects already mirrored in the table,
        with the index changes queued (sent with the next job's shortlists, or after the commit)."""
        adding = set(effects.index_add)
        vecs = {i: v for i, v in new_vectors.items() if i in adding}
        purged = any(m.purged for m in effects.memories)
        if purged:  # the snapshots hold the memories' tokens and vectors: none may outlive a purge
            drop(self.folder / LEXICAL_FILE, self.folder / VECTORS_FILE, self.folder / (VECTORS_FILE + ".npz"))
            self._saved_token = self._vectors_token = ""
        changed = bool(vecs or effects.index_remove or purged or effects.memories)
        self._note_distinct(effects.tensions)
        if effects.step is not None:
            self.step = effects.step
        if effects.index_remove or vecs:
            ids = sorted(vecs)
            change = IndexChange(remove=tuple(effects.index_remove), ids=tuple(ids),
                                 vectors=np.stack([vecs[i] for i in ids]) if ids else None)
            self._pending_index.append(change)
            self._batch_index.append(change)
        if effects.memories:
            self.version += 1
        return Step(effects, vecs, result, changed)

    def _shortlists(self, queries: np.ndarray, scopes: list[list[str]]) -> list[list[tuple[str, float]]]:
        changes, self._pending_index = self._pending_index, []
        return self.index.update_search(self.scope, changes, queries, scopes, 5)

    def _commit_staged(self, staged: list[Step]) -> list[bool]:
        """Write the staged steps in one transaction, then send the index changes still queued."""
        applied = self.store.apply_many(staged, self.clock.now_ms()) if staged else []
        if self._pending_index:
            self.index.update_search(self.scope, self._pending_index, None, [], 5)
        # In the store and the index now (a refill of a restarted index finds them in the store).
        self._pending_index, self._batch_index = [], []
        return applied

    def _touched(self) -> list[str]:
        """The ids whose index entries the batch in progress changed (or queued to change)."""
        return sorted({i for ch in self._batch_index for i in (*ch.remove, *ch.ids)})

    def _recover(self, touched: list[str] | None = None) -> None:
        """After a failed batch: the table, step and distinct pairs read back from the store, and
        every id the batch sent to the index (``touched``, default all) put back as the store has it."""
        touched = self._touched() if touched is None else touched
        self._pending_index, self._batch_index = [], []
        self._reload()
        self.step = self.store.step()
        self.distinct = set()
        self._note_distinct(self.store.load_tensions(open_only=False))
        self.version += 1
        if touched:
            self.index.remove(touched)
            stored = self.store.vectors([i for i in touched if (m := self.table.get(i)) is not None and m.servable])
            if stored:
                keys = sorted(stored)
                self.index.upsert(self.scope, keys, np.stack([np.asarray(stored[i], dtype=np.float32) for i in keys]))

    def _resolve_keys(self, cands: list[Candidate]) -> list[Candidate]:
        """Read each new key as the known key of the scope that means the same: by the key's own
        words within one kind (``engine.keys.resolve_key``), else by its slot, subject plus the kind
        of the value (``engine.keys.resolve_slot``)."""
        tau = self.settings.ingest.tau_key
        new = sorted({normalize_key(c.key) for c in cands if c.key})
        known = sorted(self.table.raw_keys(self.scope))
        unknown = [k for k in new if k not in set(known)]
        if tau > 1.0 or not unknown or not known:
            return cands
        self._embed_keys([*known, *unknown])
        pool = {k: self._key_vectors[k] for k in known}
        read = {k: resolve_key(k, self._key_vectors[k], pool, tau) for k in unknown}

        def open_slot(c: Candidate) -> str:
            """The slot text of a candidate whose key is still unknown, else ""."""
            key = normalize_key(c.key) if c.key else ""
            if not key or key in pool or read.get(key, key) != key or c.negated or not c.belief:
                return ""
            return slot_text(key, c.belief)

        mine = [open_slot(c) for c in cands]
        if not any(mine):
            return [c.model_copy(update={"key": read.get(normalize_key(c.key), c.key)}) if c.key else c for c in cands]
        # Slots: the candidates' keys still unknown, and the known keys that hold a value now.
        held = {k: m.belief for k in known for m in self.table.with_key(self.scope, k)
                if m.servable and not m.negated and m.belief}
        slots = {k: slot_text(k, b) for k, b in held.items()}
        self._embed_keys([*mine, *slots.values()])  # one call for the batch
        known_slots = {k: (value_kind(held[k]), self._key_vectors[t]) for k, t in slots.items() if t}
        out = []
        for c, text in zip(cands, mine):
            if not text:
                key = normalize_key(c.key) if c.key else ""
                out.append(c.model_copy(update={"key": read.get(key, c.key)}) if c.key else c)
                continue
            key = normalize_key(c.key)
            out.append(c.model_copy(update={"key": resolve_slot(key, c.belief, self._key_vectors[text], known_slots, tau)}))
        return out

    def _embed_keys(self, texts: Sequence[str]) -> None:
        """Embed the key and slot texts not embedded yet (unit vectors, cached by text)."""
        need = sorted({t for t in texts if t and t not in self._key_vectors})
        if need:
            # keys are embedded locally (the bundled embedder, DESIGN §5): a key of a local-only
            # memory never reaches a remote embedder, and all keys share one space
            raw = np.asarray(self.index.embed(need, [True] * len(need)), dtype=np.float32)  # read-only from Ray
            vecs = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)
            self._key_vectors.update(zip(need, vecs))

    def ingest_repair(self, receipt: str, candidates: Sequence[Candidate], report: str) -> dict[int, str]:
        """Ingest grounded repair proposals, never overriding a person's review decision.

        Returns the proposals (by position) refused here, with the reason; the report,
        completed with those reasons by the caller's format, is stored with the receipt.
        """
        if self.store.has_receipt(receipt):
            return {}
        decided = self._human_decided()
        refused: dict[int, str] = {}
        kept: list[Candidate] = []
        for i, c in enumerate(candidates):
            c = c.model_copy(update={"scope": self.scope, "origin": Origin.REPAIR})
            clash = [m.id for m in rivals_of(c, self.table) if m.id in decided]
            if clash:
                refused[i] = f"would override a human review decision on {clash[0]}"
            else:
                kept.append(c)
        doc = json.loads(report)
        for entry in doc.get("proposals", []):
            if entry.get("slot") in refused:
                entry.update({"accepted": False, "reason": refused[entry["slot"]]})
        self.ingest(receipt, kept, units=0, result=json.dumps(doc))
        return refused

    def _human_decided(self) -> set[str]:
        tensions = {t.id: t for t in self.store.load_tensions(open_only=False)}
        out: set[str] = set()
        for r in self.store.reviews("decided"):
            t = tensions.get(r.tension_id)
            if t is not None and r.decided_by == Origin.HUMAN.value:
                out |= {t.a_id, t.b_id}
        return out

    def repairs(self, limit: int = 100) -> list[RepairRecord]:
        """Recorded repair investigations, newest first."""
        return [RepairRecord.model_validate({"job": key, "at_ms": at, **json.loads(result or "{}")})
                for key, at, result in self.store.receipts("repair:", limit)]

    def remember(self, req: RememberRequest) -> IngestReport:
        """A memory stated directly by the user or agent (not extracted)."""
        text = redact(req.text).strip()
        if not text:
            raise InvalidInput("remember needs non-empty text")
        now = self.clock.now_ms()
        scope = scope_for(self.project or "", req.scope) if self.project is not None else GLOBAL_SCOPE
        if scope != self.scope:
            raise InvalidInput(f"this engine writes {self.scope}, not {scope}")
        ttl_ms = int(req.ttl_hours * 3_600_000) if req.ttl_hours else None
        tier = Tier.TEMPORARY if ttl_ms and req.tier == Tier.NORMAL else req.tier
        cand = Candidate(text=text, key=normalize_key(req.key), belief=normalize_belief(req.belief), kind=Kind.NOTE,
                         salience=1.0, scope=scope, valid_from_ms=now, tier=tier, sensitivity=req.sensitivity,
                         ttl_ms=ttl_ms, origin=Origin.HUMAN)
        receipt = "remember:" + (req.request_id or stable_id("r", scope, text, now))
        return self.ingest(receipt, [cand], units=0, request_id=req.request_id)

    # ---- recall ----------------------------------------------------------------------
    def _refresh_global(self) -> None:
        if self.global_engine is None:
            return
        self._take_global(self.global_engine.snapshot(self._global_version))

    def _take_global(self, snap: tuple[int, list[Memory], dict[str, np.ndarray]] | None) -> bool:
        """Hold the global scope's snapshot, if it changed; returns whether it did."""
        if snap is None:
            return False
        self._global_version, mems, vecs = snap
        self._global = MemoryTable(mems)
        self._global_vectors = vecs
        return True

    def _submit_global(self) -> Pending[tuple[int, list[Memory], dict[str, np.ndarray]] | None] | None:
        """Ask the global engine for its snapshot, if its store changed since the last look (the
        look is read from the file: no round trip to that actor while nothing changed). Asked for
        whatever version this engine holds (-1): the versions of a global engine that Ray restarted
        start again from 1, and might meet the one held here."""
        if self.global_engine is None or not self._global_watch.changed():
            return None
        return self.global_engine.submit_snapshot(-1)

    def _finish_global(self, pending: Pending[tuple[int, list[Memory], dict[str, np.ndarray]] | None] | None) -> bool:
        """Wait for the snapshot asked by :meth:`_submit_global`; returns whether the global scope changed."""
        if pending is None or self.global_engine is None:
            return False
        try:
            snap = Ref.result(pending)
        except ActorDied:  # the global engine is being restarted: ask again, waiting for it
            snap = self.global_engine.snapshot(self._global_version)
        return self._take_global(snap)

    def snapshot(self, since_version: int) -> tuple[int, list[Memory], dict[str, np.ndarray]] | None:
        """Servable memories and vectors, if anything changed since ``since_version``."""
        if since_version == self.version:
            return None
        live = [m for m in self.table if m.servable]
        return self.version, live, self.store.vectors([m.id for m in live]) if live else {}

    def _memory(self, mid: str) -> Memory | None:
        return self.table.get(mid) or self._global.get(mid)

    def _vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of a few memories: this scope's from the store, global ones from the snapshot."""
        out = {i: v for i in ids if (v := self._global_vectors.get(i)) is not None}
        mine = [i for i in ids if i not in out]
        if mine:
            out.update(self.store.vectors(mine))
        return out

    def recall(self, req: RecallRequest, retrieval_id: str | None = None) -> RecallResult:
        """Rank, gate, suppress and render the memory block for ``req.query``."""
        query = req.query.strip()
        if not query:
            raise EmptyQuery("the query is empty")
        if self.project is not None and req.project != self.project:
            raise InvalidInput(f"recall for {req.project!r} sent to the engine of {self.scope}")
        # The global engine answers for a project that has no stores yet (a read must not create
        # them): it reads the global scope only, and records nothing.
        project = self.project if self.project is not None else req.project
        if self.project is None:
            req = req.model_copy(update={"passive": True})
        t0 = self.clock.now_ms()
        self._check_behind()
        # Whether the global scope changed is asked of its engine while the index embeds and
        # searches (the two round trips overlap: one hop less on the recall path, issue 15).
        pending_global = self._submit_global()
        r = self.settings.retrieval
        scopes = sorted(readable_scopes(project))
        searched = search_text(query, project)  # the project's own name tells its memories apart no more than "the"
        lex = self.table.lexical.search(searched, r.shortlist)
        global_lex = self._global.lexical.search(searched, r.shortlist)
        # One reply brings the FAISS shortlist and the vectors of every candidate (hits and lexical
        # ones), from the index's memory: the hot path reads nothing from disk.
        qvec, found, vectors = self.index.embed_search_vectors(searched, scopes, r.shortlist,
                                                               sorted(set(lex) | set(global_lex)))
        if self._finish_global(pending_global):  # changed: its lexical shortlist as it is now
            global_lex = self._global.lexical.search(searched, r.shortlist)
        lex.update({k: v for k, v in global_lex.items() if k not in lex})
        hits = dict(found)
        pool: list[Shortlisted] = []
        as_of = req.as_of_ms
        candidates = set(hits) | set(lex)
        if as_of is not None:
            candidates |= self.table.valid_from_at_or_before(as_of)
        missing = sorted(i for i in candidates if i not in vectors)
        if missing:  # not indexed (retired or purged, asked for by as_of): from the store
            vectors.update(self._vectors_of(missing))
        for mid in sorted(candidates):
            m = self._memory(mid)
            if m is None:
                continue
            cos = hits.get(mid)
            if cos is None:
                v = vectors.get(mid)
                if v is None and as_of is not None and not m.purged:
                    v = self.index.embed([m.text], _local_only([m]))[0]
                cos = float(np.dot(qvec, v)) if v is not None else 0.0
            # built unvalidated: every field is already typed (a model per candidate is most of a recall)
            pool.append(Shortlisted.of(m, float(cos), lex.get(mid, 0.0)))
        always = self.table.always_on() + self._global.always_on()

        def rival_of(m: Memory) -> Memory | None:
            for t in self.table.open_tensions_of(m.id):
                other = self._memory(t.b_id if t.a_id == m.id else t.a_id)
                if other is not None:
                    return other
            return None

        distinct = self.distinct

        def pair_cosine(a: str, b: str) -> float:
            if distinct and frozenset((a, b)) in distinct:
                return 0.0
            va, vb = vectors.get(a), vectors.get(b)
            return float(np.dot(va, vb)) if va is not None and vb is not None else 0.0

        now = self.clock.now_ms()
        sel = select(query, pool, project=project, settings=self.settings, now_ms=now, step=self.step,
                     k=req.k, budget_tokens=req.budget_tokens, for_model=req.for_model, as_of_ms=as_of,
                     always_on=always, rival_of=rival_of, pair_cosine=pair_cosine)
        rid = retrieval_id or stable_id("r", project, query, now, self.step)
        if not req.passive and as_of is None and (sel.memories or sel.suppressed):
            self._credit_shadow(rid, [m.id for m in sel.memories if m.scope == self.scope],
                                self._suppression_tensions(sel.suppressed, now))
        return RecallResult(retrieval_id=rid, abstained=sel.abstained, context=sel.context, memories=sel.memories,
                            conflicts=sel.conflicts, suppressed=sel.suppressed,
                            latency_ms=float(self.clock.now_ms() - t0))

    def _suppression_tensions(self, suppressed: Sequence[Suppressed], now_ms: int) -> Effects:
        """Detection by suppression: a near-duplicate skipped at read time becomes a tension to judge."""
        tensions: list[Tension] = []
        jobs: list[JobRequest] = []
        for sup in suppressed:
            a, b = self.table.get(sup.by_id), self.table.get(sup.memory_id)
            if a is None or b is None or a.fingerprint == b.fingerprint:
                continue  # global memories are judged by their own engine; identical values need no verdict
            tid = tension_id_for(a.id, b.id)
            if tid in self.table.tensions or any(t.id == tid for t in tensions):
                continue
            tensions.append(Tension(id=tid, scope=self.scope, a_id=a.id, b_id=b.id, reason="suppression",
                                    cosine=sup.cosine, created_at_ms=now_ms))
            jobs.append(JobRequest(kind="adjudicate", key=f"adjudicate:{tid}", payload=json.dumps({"tension_id": tid})))
        return Effects(tensions=tuple(tensions), jobs=tuple(jobs))

    def _credit_shadow(self, retrieval_id: str, ids: Sequence[str], extra: Effects | None = None) -> None:
        """Shadow credit for what a live recall injected; the ids are kept for feedback."""
        mems = []
        for mid in ids:
            m = self.table.get(mid)
            if m is not None:
                mems.append(credit(m, self.step, self.settings.dynamics, shadow=1.0))
        receipt = "recall:" + retrieval_id
        if self.store.has_receipt(receipt):
            return  # a retried live recall (same retrieval id) is credited once
        fx = (extra or Effects()) + Effects(memories=tuple(mems), receipt=receipt)
        # Nothing here was acknowledged to anyone, so the reply does not wait for it: the table
        # changes now and the store commits after the reply (_commit_behind). Committed without
        # waiting for the disk unless asked ([retrieval] credit_fsync): it survives a crash of the
        # process. A power loss may take the last credits and receipts; a suppression tension lost
        # with them is found again the next time the same pair is suppressed (detection by
        # suppression reads the current state).
        self._commit_behind(fx, result=json.dumps(list(ids)), fsync=self.settings.retrieval.credit_fsync)

    def _commit_behind(self, effects: Effects, result: str, fsync: bool) -> None:
        """:meth:`_commit` of a step that only credits memories and records tensions and jobs, with
        the store's transaction run after the reply (``MemoryStore.write_behind``): every later
        read or write of the store waits for it, so no caller sees the store without it. A failed
        one is noticed by the next recall or commit, which reloads the table from the store."""
        if effects.index_add or effects.index_remove or effects.step is not None or any(m.purged for m in effects.memories):
            raise InvalidInput("only a step that changes no index, step or purge may be committed behind the reply")
        now = self.clock.now_ms()
        changed = any(self._content_differs(m) for m in effects.memories)
        self.table.apply(effects)
        self._note_distinct(effects.tensions)
        if effects.memories:
            self.version += 1
        store = self.store
        store.write_behind(lambda: store.apply(effects, {}, now, result, content_changed=changed, fsync=fsync),
                           "a live recall's credit")

    def _check_behind(self) -> None:
        """Reload the table if a write left behind a reply failed (its changes are not in the store)."""
        if self.store.behind_errors():
            self._reload()

    def injected(self, retrieval_id: str) -> list[Memory]:
        """The memories a live recall injected (for feedback)."""
        raw = self.store.receipt("recall:" + retrieval_id)
        if raw is None:
            raise NotFound(f"no live recall {retrieval_id!r} (passive recalls record nothing)")
        return [m for mid in json.loads(raw or "[]") if (m := self.table.get(mid)) is not None]

    def credit_hits(self, retrieval_id: str, used_ids: Sequence[str], request_id: str = "") -> bool:
        """Credit the memories an answer actually used (value dynamics and confidence); idempotent."""
        injected = {m.id for m in self.injected(retrieval_id)}
        mems = [credit(m, self.step, self.settings.dynamics, hit=1.0)
                for mid in used_ids if mid in injected and (m := self.table.get(mid)) is not None]
        receipt = "feedback:" + (request_id or retrieval_id)
        return self._commit(Effects(memories=tuple(mems), receipt=receipt), {}, result=json.dumps(list(used_ids)))

    def receipt(self, key: str) -> str | None:
        return self.store.receipt(key)

    # ---- reading ---------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory:
        m = self.table.get(memory_id)
        if m is None:
            raise NotFound(f"no memory {memory_id!r} in {self.scope}")
        return m

    def list_memories(self, state: str | None = None, limit: int = 1000) -> list[Memory]:
        if state is not None and state not in {s.value for s in TrustState}:
            raise InvalidInput(f"unknown state {state!r}; one of {', '.join(s.value for s in TrustState)}")
        rows = [m for m in self.table if state is None or m.state.value == state]
        return sorted(rows, key=lambda m: (-m.recorded_at_ms, m.id))[:limit]

    def detail(self, memory_id: str) -> MemoryDetail:
        m = self.get(memory_id)
        return MemoryDetail(memory=m, history=tuple(self.store.audit_for(memory_id)),
                            versions=tuple(self.table.versions_of(m)))

    def stats(self) -> Stats:
        return Stats(project=self.project or GLOBAL_SCOPE,
                     memories_by_state=self.table.count_by("state"),
                     memories_by_pool=self.table.count_by("pool", servable_only=True),
                     open_tensions=len(self.table.tensions), step=self.step)

    # ---- forgetting and verdicts -----------------------------------------------------------
    def forget(self, req: ForgetRequest) -> ForgetResult:
        """Retract (or purge) one memory by id, or every servable memory matching a text."""
        if req.memory_id:
            targets = [self.get(req.memory_id)]
        elif req.match and req.match.strip():
            needle = req.match.strip().casefold()
            targets = [m for m in self.table if m.servable and needle in m.text.casefold()]
            if not targets:
                raise NotFound(f"no servable memory matches {req.match!r}")
        else:
            raise InvalidInput("forget needs a memory id or --match TEXT")
        now = self.clock.now_ms()
        total = Effects()
        for m in targets:
            fx = (purge if req.purge else retract)(m, actor=Origin.HUMAN, reason="forgotten on request",
                                                   now_ms=now, request_id=req.request_id)
            total = total + fx
        receipt = "forget:" + (req.request_id or stable_id("f", *(m.id for m in targets), now, req.purge))
        self._commit(total + Effects(receipt=receipt), {})
        units = tuple(sorted({u for m in targets for u in m.source_unit_ids})) if req.purge else ()
        erase = tuple(t for m in targets for t in (m.text, m.belief) if len(t) >= 4) if req.purge else ()
        return ForgetResult(retired=tuple(m.id for m in targets), purged=req.purge, purged_units=units,
                            erase_from_caches=erase)

    def decide(self, tension_id: str, verdict: Verdict, decided_by: Origin, why: str, request_id: str = "") -> bool:
        """Apply a verdict to an open tension (from the adjudicator, an agent or a human)."""
        tension = self.table.tensions.get(tension_id)
        if tension is None:
            return False
        now = self.clock.now_ms()
        fx = apply_verdict(tension, verdict, table=self.table, decided_by=decided_by, why=why,
                           now_ms=now, step=self.step, settings=self.settings, request_id=request_id)
        applied = self._commit(fx + Effects(receipt=f"verdict:{tension_id}:{verdict.value}:{request_id}"), {})
        if applied and verdict == Verdict.CONTRADICTION:
            self._file_review(tension_id, now)
        return applied

    def _file_review(self, tension_id: str, now_ms: int) -> None:
        """A contradiction waits for a person; it stays contested and visible meanwhile."""
        rid = "v_" + tension_id[2:]
        try:
            self.store.review(rid)
        except NotFound:
            self.store.add_review(Review(id=rid, tension_id=tension_id, scope=self.scope, created_ms=now_ms))

    def reviews(self, status: str | None = "open") -> list[ReviewItem]:
        """Reviews with the two memories they are about."""
        out = []
        for r in self.store.reviews(status):
            t = self.table.tensions.get(r.tension_id)
            tension = t or next((x for x in self.store.load_tensions(open_only=False) if x.id == r.tension_id), None)
            mems = [self.table.get(i) for i in ((tension.a_id, tension.b_id) if tension else ())]
            out.append(ReviewItem(review=r, memories=tuple(m for m in mems if m is not None)))
        return out

    def decide_review(self, review_id: str, decision: str, decided_by: Origin, note: str = "",
                      request_id: str = "") -> list[Memory]:
        """Settle a filed contradiction: accept_new, keep_old, keep_both or retract_both."""
        review = self.store.review(review_id)
        if review.status != "open":
            raise Conflict(f"review {review_id!r} was already decided ({review.decision})")
        tension = self.table.tensions.get(review.tension_id)
        if tension is None:
            raise Conflict(f"the conflict of review {review_id!r} is no longer open")
        now = self.clock.now_ms()
        fx = apply_review(tension, decision, table=self.table, decided_by=decided_by, note=note, now_ms=now,
                          step=self.step, settings=self.settings, request_id=request_id)
        self._commit(fx + Effects(receipt=f"review:{review_id}"), {})
        self.store.decide_review(review_id, decision, decided_by.value, note, now)
        return [m for i in (tension.a_id, tension.b_id) if (m := self.table.get(i)) is not None]

    def patch(self, memory_id: str, tier: str | None = None, sensitivity: str | None = None,
              request_id: str = "") -> Memory:
        """Change a memory's tier or sensitivity (audited)."""
        m = self.get(memory_id)
        update: dict[str, object] = {}
        if tier is not None:
            update["tier"] = Tier(tier)
        if sensitivity is not None:
            update["sensitivity"] = Sensitivity(sensitivity)
        if not update:
            return m
        new = m.model_copy(update=update)
        ev = AuditEvent(memory_id=m.id, action="patch", actor=Origin.HUMAN, reason="changed on request",
                        request_id=request_id, at_ms=self.clock.now_ms(), from_state=m.state.value,
                        to_state=new.state.value, detail=", ".join(f"{k}={v}" for k, v in sorted(update.items())))
        self._commit(Effects(memories=(new,), audit=(ev,), receipt="patch:" + stable_id("p", m.id, update, ev.at_ms)), {})
        return new

    def conflicts(self) -> list[OpenConflict]:
        """Open tensions with both memories (contested ones are served with a marker meanwhile)."""
        out: list[OpenConflict] = []
        for t in sorted(self.table.tensions.values(), key=lambda x: x.created_at_ms):
            a, b = self.table.get(t.a_id), self.table.get(t.b_id)
            if a is not None and b is not None:
                out.append(OpenConflict(tension=t, a=a, b=b))
        return out

    def audit(self, limit: int = 100, since_id: int | None = None) -> list[AuditRecord]:
        return list(self.store.audit(limit=limit, since_id=since_id))


    # ---- export and import ---------------------------------------------------------------
    def export(self) -> list[Memory]:
        """Every memory of this scope, all states (purged ones keep only hashes)."""
        return sorted(self.table, key=lambda m: (m.recorded_at_ms, m.id))

    def export_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these memories (for an export that carries them)."""
        return self.store.vectors(ids)

    def import_memories(self, memories: Sequence[Memory], request_id: str = "",
                        vectors: Mapping[str, np.ndarray] | None = None) -> int:
        """Restore memories as given (states, pools, validity), embedding the servable ones.

        ``vectors`` are the memories' own vectors from an export made in this vector space
        (the caller checks the embedder id): those memories are not embedded again. A vector
        of the wrong width is refused.

        Memories of another scope are refused; an id that already exists is overwritten.
        """
        foreign = [m.id for m in memories if m.scope != self.scope]
        if foreign:
            raise InvalidInput(f"{len(foreign)} memories belong to another scope than {self.scope} (e.g. {foreign[0]})")
        now = self.clock.now_ms()
        live = [m for m in memories if m.servable and not m.purged]
        given = vectors or {}
        new_vecs: dict[str, np.ndarray] = {}
        for m in live:
            v = given.get(m.id)
            if v is not None:
                v = np.asarray(v, dtype=np.float32).reshape(-1)
                norm = float(np.linalg.norm(v))
                if not np.isfinite(v).all() or norm <= 1e-12:
                    raise InvalidInput(f"the vector of {m.id} is not a finite non-zero vector")
                new_vecs[m.id] = v / norm
        todo = [m for m in live if m.id not in new_vecs]
        if todo:
            vecs = self.index.embed([m.text for m in todo], _local_only(todo))
            new_vecs.update({m.id: vecs[i] for i, m in enumerate(todo)})
        widths = {v.shape[0] for v in new_vecs.values()}
        if len(widths) > 1:
            raise InvalidInput(f"imported vectors have widths {sorted(widths)}; this store embeds {max(widths)}-d")
        audit = tuple(AuditEvent(memory_id=m.id, action="import", actor=Origin.HUMAN, reason="imported",
                                 request_id=request_id, at_ms=now, to_state=m.state.value) for m in memories)
        receipt = "import:" + (request_id or stable_id("i", *(m.id for m in memories), now))
        fx = Effects(memories=tuple(memories), audit=audit, index_add=tuple(new_vecs),
                     index_remove=tuple(m.id for m in memories if not (m.servable and not m.purged)), receipt=receipt)
        self._commit(fx, new_vecs)
        return len(memories)

    # ---- jobs on memory.sqlite (adjudicate, review, recognize) -----------------------
    def lease_adjudications(self, n: int, lease_ms: int = 60_000,
                            token: str = "") -> list[tuple[int, str, Memory, Memory]]:
        """Lease ``adjudicate`` jobs with the two memories of each tension (``token``: see jobs.lease)."""
        out = []
        for job in self.store.lease_jobs(["adjudicate"], n, self.clock.now_ms(), lease_ms, token=token):
            tid = json.loads(job.payload)["tension_id"]
            t = self.table.tensions.get(tid)
            a = self.table.get(t.a_id) if t else None
            b = self.table.get(t.b_id) if t else None
            if t is None or a is None or b is None:
                self.store.complete_job(job.id, self.clock.now_ms())  # already decided
                continue
            out.append((job.id, tid, a, b))
        return out

    def complete_job(self, job_id: int, token: str = "") -> None:
        self.store.complete_job(job_id, self.clock.now_ms(), token)

    def fail_job(self, job_id: int, error: str, token: str = "") -> None:
        self.store.fail_job(job_id, error, self.clock.now_ms(), token=token)

    def defer_job(self, job_id: int, until_ms: int, error: str, token: str = "") -> None:
        """Give a leased job back until ``until_ms`` without counting the attempt (endpoint down)."""
        self.store.defer_job(job_id, until_ms, error, self.clock.now_ms(), token)

    def job_counts(self) -> dict[str, dict[str, int]]:
        return self.store.job_counts()


#: Vectors sent to the IndexActor per call when a store is opened (bounded messages and copies).
_UPSERT_CHUNK = 10_000


def _release_free_memory() -> None:
    """Give memory freed after a bulk load back to the system (glibc keeps it otherwise).

    Opening a store of 100k memories reads every row and token once; without this the engine
    actor's RSS stays about 60 MiB higher than what it holds (eval/results/perf-scale).
    """
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def _local_only(items: Sequence[Memory] | Sequence[Candidate]) -> list[bool]:
    """Which texts must be embedded locally: a local-only memory never reaches a remote embedder."""
    return [x.sensitivity == Sensitivity.LOCAL_ONLY for x in items]


def _slug(project: str) -> str:
    """A file-system-safe, collision-free folder name for a project."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", project).strip("-.")[:40] or "project"
    return f"{safe}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"

