"""Durable memory state in ``memory.sqlite``: memories, vectors, audit, tensions, reviews.

``MemoryStore`` is the plain class behind the EngineActor, the single writer of its file.
The engine decides, this store carries out: :meth:`MemoryStore.apply` writes one
``Effects`` (memories, audit rows, tensions, jobs, vectors, step counter and receipt) in
ONE transaction. The receipt makes a step exactly-once: applying the same receipt key
again does nothing and returns ``False``.

The audit table is append-only, enforced by triggers: rows cannot be deleted, and the
only update allowed replaces ``detail`` with a ``[purged ...]`` placeholder, which
:meth:`apply` does when a memory is purged (so its text leaves the audit trail too).

Row shapes follow the engine models one column per field (tuples as JSON text, enums
as their values, booleans as 0/1), so ``Memory(**row)`` round-trips.
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, get_origin

import numpy as np

from actors.store.jobs import JOBS_MIGRATION, LEASE_TOKEN_MIGRATION, JobsFile, enqueue
from actors.store.migrations import Migration, translate_errors
from engine.effects import Effects
from engine.errors import Conflict, DataDirError, InvalidInput, NotFound, StoreError
from engine.models import AuditEvent, Frozen, Memory, Tension

_SCHEMA = Migration.sql(
    "0001_memory_schema",
    """
    CREATE TABLE memories (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        text TEXT NOT NULL,
        key TEXT NOT NULL DEFAULT '',
        belief TEXT NOT NULL DEFAULT '',
        fingerprint TEXT NOT NULL,
        kind TEXT NOT NULL,
        tier TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        state TEXT NOT NULL,
        pool TEXT NOT NULL,
        value REAL NOT NULL,
        value_step INTEGER NOT NULL,
        conf_for REAL NOT NULL,
        conf_against REAL NOT NULL,
        evidence INTEGER NOT NULL,
        source_unit_ids TEXT NOT NULL DEFAULT '[]',
        valid_from_ms INTEGER NOT NULL,
        valid_to_ms INTEGER,
        last_evidence_ms INTEGER NOT NULL,
        recorded_at_ms INTEGER NOT NULL,
        retired_at_ms INTEGER,
        expires_at_ms INTEGER,
        created_step INTEGER NOT NULL,
        last_hit_step INTEGER NOT NULL,
        origin TEXT NOT NULL,
        prompt_version TEXT NOT NULL DEFAULT '',
        superseded_by TEXT,
        negated INTEGER NOT NULL DEFAULT 0,
        purged INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX memories_by_scope_state ON memories (scope, state);
    CREATE INDEX memories_by_scope_key ON memories (scope, key);
    CREATE INDEX memories_by_fingerprint ON memories (fingerprint);
    CREATE TABLE embeddings (
        memory_id TEXT PRIMARY KEY
            REFERENCES memories (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id TEXT NOT NULL,
        action TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT NOT NULL,
        evidence TEXT NOT NULL DEFAULT '[]',
        request_id TEXT NOT NULL DEFAULT '',
        at_ms INTEGER NOT NULL,
        from_state TEXT NOT NULL DEFAULT '',
        to_state TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_by_memory ON audit (memory_id, id);
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN
        SELECT RAISE(ABORT, 'audit rows are append-only');
    END;
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    WHEN NOT (
        new.id = old.id AND new.memory_id = old.memory_id AND new.action = old.action
        AND new.actor = old.actor AND new.reason = old.reason AND new.evidence = old.evidence
        AND new.request_id = old.request_id AND new.at_ms = old.at_ms
        AND new.from_state = old.from_state AND new.to_state = old.to_state
        AND new.detail LIKE '[purged%'
    )
    BEGIN
        SELECT RAISE(ABORT, 'audit rows are append-only');
    END;
    CREATE TABLE tensions (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL,
        a_id TEXT NOT NULL REFERENCES memories (id) DEFERRABLE INITIALLY DEFERRED,
        b_id TEXT NOT NULL REFERENCES memories (id) DEFERRABLE INITIALLY DEFERRED,
        reason TEXT NOT NULL,
        cosine REAL NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'open',
        verdict TEXT,
        decided_by TEXT,
        why TEXT NOT NULL DEFAULT '',
        created_at_ms INTEGER NOT NULL
    );
    CREATE INDEX tensions_by_status ON tensions (status, scope);
    CREATE TABLE reviews (
        id TEXT PRIMARY KEY,
        tension_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'decided')),
        decision TEXT NOT NULL DEFAULT '',
        decided_by TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        created_ms INTEGER NOT NULL,
        decided_ms INTEGER
    );
    CREATE INDEX reviews_by_status ON reviews (status, created_ms);
    CREATE TABLE receipts (
        key TEXT PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        result TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
)

_MEMORY_FIELDS = tuple(Memory.model_fields)
_AUDIT_FIELDS = tuple(AuditEvent.model_fields)
_TENSION_FIELDS = tuple(Tension.model_fields)
_M = TypeVar("_M", bound=Frozen)
#: Placeholder written over audit ``detail`` text of a purged memory.
PURGED_DETAIL = "[purged]"


class AuditRecord(Frozen):
    """An audit event with its row id (ids increase; page with ``since_id``)."""

    id: int
    event: AuditEvent


class Review(Frozen):
    """A tension waiting for (or given) a human decision."""

    id: str
    tension_id: str
    scope: str
    status: str = "open"  # open | decided
    decision: str = ""
    decided_by: str = ""
    reason: str = ""
    created_ms: int
    decided_ms: int | None = None


_REVIEW_FIELDS = tuple(Review.model_fields)
#: Per model, the fields stored as JSON text: its tuple-typed fields.
_JSON_FIELDS: dict[type[Frozen], frozenset[str]] = {
    model: frozenset(
        name for name, info in model.model_fields.items() if get_origin(info.annotation) is tuple
    )
    for model in (Memory, AuditEvent, Tension, Review)
}


def _to_row(model: Frozen, fields: Sequence[str]) -> tuple[Any, ...]:
    """Model -> row: tuples as JSON text, enums as values, booleans as 0/1."""
    data = model.model_dump(mode="json")
    out: list[Any] = []
    for name in fields:
        value = data[name]
        if isinstance(value, list):
            value = json.dumps(value)
        elif isinstance(value, bool):
            value = int(value)
        out.append(value)
    return tuple(out)


def _from_row(model: type[_M], fields: Sequence[str], row: Sequence[Any]) -> _M:
    """Row -> model; JSON text is decoded for the model's tuple-typed fields."""
    data = dict(zip(fields, row, strict=True))
    for name in _JSON_FIELDS[model] & data.keys():
        data[name] = tuple(json.loads(data[name]))
    return model(**data)


def _record_converters() -> list[Callable[[Any], Any] | None]:
    """Per column of ``memories``, how a stored value becomes the model's value (None: as stored)."""
    out: list[Callable[[Any], Any] | None] = []
    for info in Memory.model_fields.values():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            out.append({e.value: e for e in kind}.__getitem__)
        elif get_origin(kind) is tuple:
            out.append(None)  # kept as its JSON text: engine.state.from_record decodes it when a memory is used
        elif kind is bool:
            out.append(bool)
        elif kind is float:
            out.append(float)
        else:
            out.append(None)
    return out


_RECORD_CONVERTERS = _record_converters()


def _upsert_sql(table: str, fields: Sequence[str]) -> str:
    columns = ", ".join(fields)
    marks = ", ".join("?" * len(fields))
    updates = ", ".join(f"{f} = excluded.{f}" for f in fields if f != "id")
    return (
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}"
    )


def _vector_blob(memory_id: str, vector: np.ndarray) -> tuple[int, bytes]:
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        raise InvalidInput(f"vector for {memory_id!r} must be a non-empty finite 1-D array")
    return int(array.size), array.tobytes()


class Step(NamedTuple):
    """One engine step for :meth:`MemoryStore.apply_many`: its effects, the vectors to store,
    the answer kept with its receipt, and whether it changes what the snapshots hold."""

    effects: Effects
    vectors: Mapping[str, np.ndarray]
    result: str = ""
    content_changed: bool = True


class MemoryStore(JobsFile):
    """Owner of ``memory.sqlite``; every change arrives as one :class:`Effects`."""

    MIGRATIONS = (_SCHEMA, JOBS_MIGRATION, LEASE_TOKEN_MIGRATION)

    def apply(
        self,
        effects: Effects,
        vectors: Mapping[str, np.ndarray],
        now_ms: int,
        result: str = "",
        content_changed: bool = True,
        fsync: bool = True,
    ) -> bool:
        """Write one engine step in ONE transaction; exactly-once on ``effects.receipt``.

        Upserts memories and tensions, appends audit rows, enqueues jobs (deduplicated on
        their keys), stores the given vectors, sets the step counter and records the
        receipt with ``result`` (what the step answered, for replies to retries). When
        ``content_changed`` (a memory's text, servability or vector changed, not only its
        value), a new content token is recorded: snapshots of the lexical and vector indexes
        carry the token they were made from and are used only while it is current. A
        purged memory loses its embedding and the detail text of its audit rows; the WAL
        is then truncated (best effort: a blocked checkpoint is retried by the next one).
        ``fsync=False``: committed without waiting for the disk (``SqliteFile._write``).

        Returns:
            ``False`` when the receipt was already recorded (nothing is written).
        """
        return self.apply_many([Step(effects, vectors, result, content_changed)], now_ms, fsync=fsync)[0]

    def apply_many(self, steps: Sequence[Step], now_ms: int, fsync: bool = True) -> list[bool]:
        """Write several engine steps, in order, in ONE transaction (one fsync for all of them).

        Each step is written exactly as :meth:`apply` writes it alone (a step whose receipt is
        already recorded writes nothing and gives ``False``); a failure writes none of them.
        """
        out: list[bool] = []
        purged: set[str] = set()
        with self._write("apply effects", fsync=fsync or any(m.purged for st in steps for m in st.effects.memories)) \
                as conn:
            for step in steps:
                applied = self._apply_in(conn, step, now_ms)
                out.append(applied)
                if applied:
                    purged.update(m.id for m in step.effects.memories if m.purged)
        if purged:
            try:
                self.checkpoint()
            except StoreError:
                pass  # committed; the text leaves the WAL at the next successful checkpoint
        return out

    def _apply_in(self, conn: sqlite3.Connection, step: Step, now_ms: int) -> bool:
        """One step's writes inside the caller's transaction (see :meth:`apply`)."""
        effects, vectors, result, content_changed = step
        purged = {m.id for m in effects.memories if m.purged}
        blobs = {i: _vector_blob(i, v) for i, v in vectors.items() if i not in purged}
        if effects.receipt is not None and self._has_receipt(conn, effects.receipt):
            return False
        if effects.memories:
            conn.executemany(
                _upsert_sql("memories", _MEMORY_FIELDS),
                [_to_row(m, _MEMORY_FIELDS) for m in effects.memories],
            )
        for memory_id in sorted(purged):
            conn.execute("DELETE FROM embeddings WHERE memory_id = ?", (memory_id,))
            conn.execute(
                "UPDATE audit SET detail = ? WHERE memory_id = ? AND detail != '' "
                "AND detail NOT LIKE '[purged%'",
                (PURGED_DETAIL, memory_id),
            )
        if effects.audit:
            conn.executemany(
                f"INSERT INTO audit ({', '.join(_AUDIT_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(_AUDIT_FIELDS))})",
                [_to_row(e, _AUDIT_FIELDS) for e in effects.audit],
            )
        if effects.tensions:
            conn.executemany(
                _upsert_sql("tensions", _TENSION_FIELDS),
                [_to_row(t, _TENSION_FIELDS) for t in effects.tensions],
            )
        for job in effects.jobs:
            enqueue(conn, job.kind, job.key, job.payload, now_ms)
        conn.executemany(
            "INSERT INTO embeddings (memory_id, dim, vector) VALUES (?, ?, ?) "
            "ON CONFLICT (memory_id) DO UPDATE SET "
            "dim = excluded.dim, vector = excluded.vector",
            [(i, dim, blob) for i, (dim, blob) in blobs.items()],
        )
        if content_changed:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('content', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (uuid.uuid4().hex,),
            )
        if effects.step is not None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('step', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(effects.step),),
            )
        if effects.receipt is not None:
            conn.execute(
                "INSERT INTO receipts (key, at_ms, result) VALUES (?, ?, ?)",
                (effects.receipt, now_ms, result),
            )
        return True

    @staticmethod
    def _has_receipt(conn: sqlite3.Connection, key: str) -> bool:
        return conn.execute("SELECT 1 FROM receipts WHERE key = ?", (key,)).fetchone() is not None

    def load_memories(self, scopes: Iterable[str] | None = None) -> list[Memory]:
        """All memories (of the given scopes, when given), in insertion order."""
        sql = f"SELECT {', '.join(_MEMORY_FIELDS)} FROM memories"
        args: list[str] = []
        if scopes is not None:
            args = list(scopes)
            sql += f" WHERE scope IN ({','.join('?' * len(args))})"
        with self._read("load memories") as conn:
            rows = conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return [_from_row(Memory, _MEMORY_FIELDS, r) for r in rows]

    def memory_records(self) -> list[tuple[Any, ...]]:
        """Every memory as a record (``engine.state.FIELDS`` order, typed values, tuple fields as their
        JSON text), in insertion order.

        What opening a store reads: the same values as :meth:`load_memories` without building a
        validated model per row (the rows were validated when written), so a store of 100k
        memories opens in seconds (eval/results/perf.md).
        """
        convert = list(enumerate(_RECORD_CONVERTERS))
        scopes: dict[str, str] = {}
        at_scope = _MEMORY_FIELDS.index("scope")
        out: list[tuple[Any, ...]] = []
        with self._read("load memories") as conn:
            cursor = conn.execute(f"SELECT {', '.join(_MEMORY_FIELDS)} FROM memories ORDER BY rowid")
            try:
                for row in cursor:
                    values = [row[i] if f is None else f(row[i]) for i, f in convert]
                    values[at_scope] = scopes.setdefault(values[at_scope], values[at_scope])  # one string per scope
                    out.append(tuple(values))
            except (KeyError, ValueError, TypeError) as exc:
                raise StoreError(f"a memory row in {self.path} does not fit the schema: {exc}") from exc
        return out

    def vector_ids(self) -> set[str]:
        """Ids of the memories that have a stored vector."""
        with self._read("read vector ids") as conn:
            return {str(r[0]) for r in conn.execute("SELECT memory_id FROM embeddings")}

    def vector_chunks(self, chunk: int = 10_000) -> Iterator[tuple[list[str], np.ndarray]]:
        """Every stored vector in memory-id order, ``chunk`` rows at a time, as (ids, float32 matrix).

        Bounded memory: a store of 100k vectors (150 MB) is never held at once.
        """
        last = ""
        while True:
            with self._read("read vectors") as conn:
                rows = conn.execute(
                    "SELECT memory_id, vector FROM embeddings WHERE memory_id > ? ORDER BY memory_id LIMIT ?",
                    (last, chunk),
                ).fetchall()
            if not rows:
                return
            last = str(rows[-1][0])
            start = 0
            for end in range(1, len(rows) + 1):  # consecutive rows of one width make one matrix
                if end == len(rows) or len(rows[end][1]) != len(rows[start][1]):
                    group = rows[start:end]
                    matrix = np.frombuffer(b"".join(b for _, b in group), dtype=np.float32).reshape(len(group), -1)
                    yield [str(i) for i, _ in group], matrix.copy()
                    start = end

    def _one(self, model: type[_M], table: str, fields: Sequence[str], row_id: str, what: str) -> _M:
        """One row by id as ``model``; raises :class:`NotFound`."""
        with self._read(f"read {what}") as conn:
            row = conn.execute(f"SELECT {', '.join(fields)} FROM {table} WHERE id = ?", (row_id,)).fetchone()
        if row is None:
            raise NotFound(f"no {what} with id {row_id!r}")
        return _from_row(model, fields, row)

    def memory(self, memory_id: str) -> Memory:
        """One memory by id; raises :class:`NotFound`."""
        return self._one(Memory, "memories", _MEMORY_FIELDS, memory_id, "memory")

    def load_tensions(self, open_only: bool = True) -> list[Tension]:
        """Tensions, oldest first; only the open ones by default."""
        where = "WHERE status = 'open'" if open_only else ""
        with self._read("load tensions") as conn:
            rows = conn.execute(
                f"SELECT {', '.join(_TENSION_FIELDS)} FROM tensions {where} "
                "ORDER BY created_at_ms, id"
            ).fetchall()
        return [_from_row(Tension, _TENSION_FIELDS, r) for r in rows]

    def vectors(self, ids: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Stored float32 vectors by memory id (all of them, or those asked for)."""
        with self._read("read vectors") as conn:
            if ids is None:
                rows = conn.execute("SELECT memory_id, vector FROM embeddings").fetchall()
            else:
                wanted = list(dict.fromkeys(ids))
                rows = []
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    rows += conn.execute(
                        "SELECT memory_id, vector FROM embeddings "
                        f"WHERE memory_id IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
        return {str(i): np.frombuffer(blob, dtype=np.float32).copy() for i, blob in rows}

    def audit_for(self, memory_id: str) -> list[AuditEvent]:
        """The audit trail of one memory, oldest first."""
        with self._read("read audit") as conn:
            rows = conn.execute(
                f"SELECT {', '.join(_AUDIT_FIELDS)} FROM audit WHERE memory_id = ? ORDER BY id",
                (memory_id,),
            ).fetchall()
        return [_from_row(AuditEvent, _AUDIT_FIELDS, r) for r in rows]

    def audit(self, limit: int = 100, since_id: int | None = None) -> list[AuditRecord]:
        """Audit rows with ``id > since_id`` (oldest first), or the latest ``limit`` rows."""
        columns = ", ".join(("id", *_AUDIT_FIELDS))
        with self._read("read audit") as conn:
            if since_id is None:
                rows = conn.execute(
                    f"SELECT {columns} FROM audit ORDER BY id DESC LIMIT ?", (limit,)
                ).fetchall()[::-1]
            else:
                rows = conn.execute(
                    f"SELECT {columns} FROM audit WHERE id > ? ORDER BY id LIMIT ?",
                    (since_id, limit),
                ).fetchall()
        return [
            AuditRecord(id=r[0], event=_from_row(AuditEvent, _AUDIT_FIELDS, r[1:]))
            for r in rows
        ]

    def has_receipt(self, key: str) -> bool:
        """Whether a step with this receipt key was applied."""
        with self._read("read receipt") as conn:
            return self._has_receipt(conn, key)

    def receipt(self, key: str) -> str | None:
        """The result recorded with a receipt, or ``None`` when there is no such receipt."""
        with self._read("read receipt") as conn:
            row = conn.execute("SELECT result FROM receipts WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def receipts(self, prefix: str, limit: int = 100) -> list[tuple[str, int, str]]:
        """Receipts whose key starts with ``prefix``, newest first: (key, at_ms, result)."""
        with self._read("read receipts") as conn:
            rows = conn.execute(
                "SELECT key, at_ms, result FROM receipts WHERE substr(key, 1, ?) = ? ORDER BY at_ms DESC LIMIT ?",
                (len(prefix), prefix, limit),
            ).fetchall()
        return [(str(k), int(t), str(r)) for k, t, r in rows]

    def content_token(self) -> str:
        """Names the current content (texts, servable set, vectors); a new one is made at each change.

        A store without one (made before tokens, or never changed) gets one here.
        """
        with self._read("read content token") as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'content'").fetchone()
        if row is not None:
            return str(row[0])
        token = uuid.uuid4().hex
        with self._write("record content token") as conn:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('content', ?)", (token,))
            row = conn.execute("SELECT value FROM meta WHERE key = 'content'").fetchone()
        return str(row[0])

    def step(self) -> int:
        """The engine step counter (0 before the first step)."""
        with self._read("read step") as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'step'").fetchone()
        return 0 if row is None else int(row[0])

    def add_review(self, review: Review) -> None:
        """Record a new review; raises :class:`Conflict` when the id exists."""
        with self._write("add review") as conn:
            if conn.execute("SELECT 1 FROM reviews WHERE id = ?", (review.id,)).fetchone():
                raise Conflict(f"review {review.id!r} already exists")
            conn.execute(
                f"INSERT INTO reviews ({', '.join(_REVIEW_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(_REVIEW_FIELDS))})",
                _to_row(review, _REVIEW_FIELDS),
            )

    def review(self, review_id: str) -> Review:
        """One review by id; raises :class:`NotFound`."""
        return self._one(Review, "reviews", _REVIEW_FIELDS, review_id, "review")

    def reviews(self, status: str | None = "open", limit: int = 100) -> list[Review]:
        """Reviews with this status (all when ``None``), oldest first."""
        where, args = ("WHERE status = ?", [status]) if status is not None else ("", [])
        with self._read("list reviews") as conn:
            rows = conn.execute(
                f"SELECT {', '.join(_REVIEW_FIELDS)} FROM reviews {where} "
                "ORDER BY created_ms, id LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [_from_row(Review, _REVIEW_FIELDS, r) for r in rows]

    def decide_review(
        self, review_id: str, decision: str, decided_by: str, reason: str, now_ms: int
    ) -> Review:
        """Close an open review with a decision.

        Raises:
            NotFound: no such review.
            Conflict: it was already decided.
        """
        with self._write("decide review") as conn:
            row = conn.execute("SELECT status FROM reviews WHERE id = ?", (review_id,)).fetchone()
            if row is None:
                raise NotFound(f"no review with id {review_id!r}")
            if row[0] != "open":
                raise Conflict(f"review {review_id!r} was already decided")
            conn.execute(
                "UPDATE reviews SET status = 'decided', decision = ?, decided_by = ?, "
                "reason = ?, decided_ms = ? WHERE id = ?",
                (decision, decided_by, reason, now_ms, review_id),
            )
        return self.review(review_id)

    def backup(self, dest_path: str | os.PathLike[str]) -> Path:
        """Write a consistent snapshot to ``dest_path`` (atomically replaced, mode 0600).

        Raises:
            DataDirError: the destination directory is missing or not writable.
        """
        dest = Path(dest_path)
        if not dest.parent.is_dir() or not os.access(dest.parent, os.W_OK):
            raise DataDirError(f"backup directory {str(dest.parent)!r} is missing or not writable")
        tmp = dest.with_name(f".{dest.name}.partial")
        try:
            with self._held(), translate_errors("backup"):
                target = sqlite3.connect(tmp)
                try:
                    self.conn.backup(target)
                finally:
                    target.close()
            os.chmod(tmp, 0o600)
            os.replace(tmp, dest)
        except OSError as exc:
            raise StoreError(f"backup to {str(dest)!r} failed: {exc}") from exc
        finally:
            for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
                leftover.unlink(missing_ok=True)
        return dest


class ChangeWatch:
    """Whether another connection committed to a SQLite file since the last look, read without
    writing or locking it (``PRAGMA data_version`` on a read-only connection, a few microseconds).

    A project's engine watches the global store this way, so that a recall asks the global
    engine for its snapshot only after the global scope changed, instead of one round trip to
    that actor per recall (issue 15). The first look, and any look that fails, says "changed".
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._seen: int | None = None

    def changed(self) -> bool:
        try:
            if self._conn is None:
                if not self.path.exists():
                    return True
                self._conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            self.close()
            return True
        changed, self._seen = version != self._seen, version
        return changed

    def close(self) -> None:
        if self._conn is not None:
            conn, self._conn, self._seen = self._conn, None, None
            conn.close()

