"""The raw turn log (L0) in ``log.sqlite``: units, their FTS5 index and the extract outbox.

``LogStore`` is the plain class behind the LogActor, the single writer of its file.
Appends are redacted before they touch the file, idempotent on ``request_id``, and write
one ``extract`` job per new unit in the same transaction (outbox), so a unit is never
stored without the work that distils it. Reads (search, timeline, window) are bounded.

Full-text search uses an external-content FTS5 table over ``units`` (no second copy of
the text) kept in step by triggers, tokenised with ``porter unicode61``: punctuation
splits identifiers into words, so ``src/payments/stripe.py`` is found by ``payments``
and, as a quoted phrase, by ``src/payments/``; ``camelCaseName`` is one case-folded
word. (``tokenchars '_-./'`` was rejected: it glues sentence-final dots to words and
makes ``payments`` miss ``src/payments/stripe.py``.)

Purging replaces a unit's text with a placeholder carrying its content hash, removes it
from the index, merges the index (``optimize``) and truncates the WAL; with
``secure_delete`` on, the text is then in no file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from actors.store.jobs import JOBS_MIGRATION, LEASE_TOKEN_MIGRATION, JobsFile, enqueue
from actors.store.migrations import Migration
from engine.errors import Conflict, EmptyQuery, InvalidInput, NotFound, StoreError
from engine.models import Frozen, TurnIn, Unit
from engine.gate import stored_id
from engine.redact import redact

EXTRACT_JOB = "extract"
#: Upper bound on rows any single read returns (the log tools are bounded by design).
MAX_ROWS = 200
#: Query words beyond this are ignored; FTS5 cost grows with the number of phrases.
MAX_QUERY_TOKENS = 32

_UNITS_MIGRATION = Migration.sql(
    "0001_units_fts",
    """
    CREATE TABLE units (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        session TEXT NOT NULL,
        turn INTEGER NOT NULL UNIQUE,
        ts_ms INTEGER NOT NULL,
        user TEXT NOT NULL,
        assistant TEXT NOT NULL,
        request_id TEXT NOT NULL UNIQUE,
        content_hash TEXT NOT NULL,
        purged INTEGER NOT NULL DEFAULT 0  -- 0, or the time of the purge in ms
    );
    CREATE INDEX units_by_session ON units (project, session, turn);
    CREATE VIRTUAL TABLE units_fts USING fts5(
        user, assistant,
        content = 'units', content_rowid = 'turn',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER units_fts_insert AFTER INSERT ON units WHEN new.purged = 0 BEGIN
        INSERT INTO units_fts (rowid, user, assistant)
            VALUES (new.turn, new.user, new.assistant);
    END;
    CREATE TRIGGER units_fts_delete AFTER DELETE ON units WHEN old.purged = 0 BEGIN
        INSERT INTO units_fts (units_fts, rowid, user, assistant)
            VALUES ('delete', old.turn, old.user, old.assistant);
    END;
    CREATE TRIGGER units_fts_update AFTER UPDATE ON units BEGIN
        INSERT INTO units_fts (units_fts, rowid, user, assistant)
            SELECT 'delete', old.turn, old.user, old.assistant WHERE old.purged = 0;
        INSERT INTO units_fts (rowid, user, assistant)
            SELECT new.turn, new.user, new.assistant WHERE new.purged = 0;
    END;
    """,
)

_UNIT_COLUMNS = "id, project, session, turn, ts_ms, user, assistant, request_id"
_HAS_WORD = re.compile(r"[^\W_]")


class LogHit(Frozen):
    """One search result: the unit, a highlighted snippet and a score (higher is better)."""

    unit: Unit
    snippet: str
    score: float


@dataclass(frozen=True)
class _Prepared:
    project: str
    session: str
    ts_ms: int
    user: str
    assistant: str
    request_id: str
    content_hash: str


def _sha256(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def _prepare(turn: TurnIn, now_ms: int) -> _Prepared:
    """Redact a turn and derive its hash and (when missing) its request id."""
    if not turn.project.strip():
        raise InvalidInput("a turn needs a project")
    user, assistant = redact(turn.user), redact(turn.assistant)
    session = stored_id(turn.session)  # ids go through the same gate (engine.gate)
    ts_ms = turn.ts_ms if turn.ts_ms is not None else now_ms
    # The hash leaves out ts_ms: a client retrying without a timestamp gets a new default.
    content_hash = _sha256(turn.project, session, user, assistant)
    request_id = stored_id(turn.request_id or "") or "auto-" + _sha256(
        turn.project, session, str(ts_ms), user, assistant
    )[:32]
    return _Prepared(turn.project, session, ts_ms, user, assistant, request_id, content_hash)


def _unit(row: Sequence[Any]) -> Unit:
    keys = [c.strip() for c in _UNIT_COLUMNS.split(",")]
    return Unit(**dict(zip(keys, row[: len(keys)], strict=True)))


def fts_query(text: str, operator: str = "AND") -> str:
    """Turn free text into a safe FTS5 query: each word a quoted phrase, joined by ``operator``.

    Quoting makes FTS syntax in user text (``"``, ``()``, ``AND``, ``NEAR``, ``*``, ``:``)
    literal; words without a letter or digit are dropped. Returns "" when nothing is left.
    """
    text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)  # no NUL or controls for FTS5
    words = [w for w in text.split() if _HAS_WORD.search(w)][:MAX_QUERY_TOKENS]
    return f" {operator} ".join('"' + w.replace('"', '""') + '"' for w in words)


class LogStore(JobsFile):
    """Owner of ``log.sqlite``: append turns, search and browse them, purge them."""

    MIGRATIONS = (_UNITS_MIGRATION, JOBS_MIGRATION, LEASE_TOKEN_MIGRATION)

    def append(self, turns: Sequence[TurnIn], now_ms: int) -> list[tuple[Unit, bool]]:
        """Store a batch of turns in one transaction, redacted, with one extract job each.

        Idempotent on ``request_id``: a turn whose id is already stored with the same
        content returns the stored unit with ``created=False`` and adds no job. A turn
        without a request id gets a deterministic one from its content and time.

        Returns:
            ``(unit, created)`` for each turn, in order.

        Raises:
            Conflict: a request id is reused with different content; nothing is stored.
        """
        prepared = [_prepare(t, now_ms) for t in turns]
        out: list[tuple[Unit, bool]] = []
        with self._write("append turns") as conn:
            last = conn.execute("SELECT COALESCE(MAX(turn), 0) FROM units").fetchone()[0]
            next_turn = int(last) + 1
            for p in prepared:
                row = conn.execute(
                    f"SELECT {_UNIT_COLUMNS}, content_hash FROM units WHERE request_id = ?",
                    (p.request_id,),
                ).fetchone()
                if row is not None:
                    if row[-1] != p.content_hash:
                        raise Conflict(
                            f"request id {p.request_id!r} was already used for different "
                            f"content (unit {row[0]})"
                        )
                    out.append((_unit(row), False))
                    continue
                unit = Unit(
                    id=f"u{next_turn}",
                    project=p.project,
                    session=p.session,
                    turn=next_turn,
                    ts_ms=p.ts_ms,
                    user=p.user,
                    assistant=p.assistant,
                    request_id=p.request_id,
                )
                conn.execute(
                    f"INSERT INTO units ({_UNIT_COLUMNS}, content_hash, purged) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                    (*unit.model_dump().values(), p.content_hash),
                )
                enqueue(conn, EXTRACT_JOB, f"extract:{unit.id}", {"unit_ids": [unit.id]}, now_ms)
                out.append((unit, True))
                next_turn += 1
        return out

    def units(self, ids: Iterable[str]) -> list[Unit]:
        """The units with these ids, in the order asked; unknown ids are skipped."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        with self._read("read units") as conn:
            found: dict[str, Unit] = {}
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for row in conn.execute(
                    f"SELECT {_UNIT_COLUMNS} FROM units WHERE id IN ({marks})", chunk
                ):
                    found[row[0]] = _unit(row)
        return [found[i] for i in wanted if i in found]

    def unit_count(self) -> int:
        """Number of units stored (purged ones included)."""
        with self._read("count units") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def last_turn(self) -> int:
        """The highest turn number, 0 for an empty log."""
        with self._read("read last turn") as conn:
            return int(conn.execute("SELECT COALESCE(MAX(turn), 0) FROM units").fetchone()[0])

    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]:
        """Full-text search ranked by BM25: all words first, then any word to fill ``limit``.

        Args:
            query: free text; FTS syntax in it is taken literally.
            before_turn: only units with ``turn < before_turn`` (for replay and repair).

        Raises:
            EmptyQuery: the query is blank.
        """
        if not query.strip():
            raise EmptyQuery("the search query is empty")
        limit = max(0, min(limit, MAX_ROWS))
        hits: dict[str, LogHit] = {}
        for operator in ("AND", "OR"):
            match = fts_query(query, operator)
            if not match or len(hits) >= limit:
                break
            for hit in self._match(match, limit, before_turn):
                hits.setdefault(hit.unit.id, hit)
            if " " not in match:
                break
        return list(hits.values())[:limit]

    def _match(self, match: str, limit: int, before_turn: int | None) -> list[LogHit]:
        bound = before_turn if before_turn is not None else 2**62
        with self._read("search log") as conn:
            rows = conn.execute(
                f"SELECT {', '.join('u.' + c.strip() for c in _UNIT_COLUMNS.split(','))}, "
                "snippet(units_fts, -1, '[', ']', '…', 16), bm25(units_fts) "
                "FROM units_fts JOIN units u ON u.turn = units_fts.rowid "
                "WHERE units_fts MATCH ? AND units_fts.rowid < ? AND u.purged = 0 "
                "ORDER BY bm25(units_fts) LIMIT ?",
                (match, bound, limit),
            ).fetchall()
        return [LogHit(unit=_unit(r), snippet=r[-2], score=-float(r[-1])) for r in rows]

    def timeline(
        self,
        around_turn: int | None = None,
        start: int | None = None,
        end: int | None = None,
        limit: int = 20,
    ) -> list[Unit]:
        """Units in turn order: centred on ``around_turn``, or from ``start`` to ``end``
        (inclusive), or the latest ones; at most ``limit`` (capped at ``MAX_ROWS``)."""
        limit = max(0, min(limit, MAX_ROWS))
        with self._read("read timeline") as conn:
            if around_turn is not None:
                first = max(1, around_turn - limit // 2)
                rows = conn.execute(
                    f"SELECT {_UNIT_COLUMNS} FROM units WHERE turn >= ? ORDER BY turn LIMIT ?",
                    (first, limit),
                ).fetchall()
            elif start is not None or end is not None:
                rows = conn.execute(
                    f"SELECT {_UNIT_COLUMNS} FROM units WHERE turn BETWEEN ? AND ? "
                    "ORDER BY turn LIMIT ?",
                    (start if start is not None else 0, end if end is not None else 2**62, limit),
                ).fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {_UNIT_COLUMNS} FROM units ORDER BY turn DESC LIMIT ?", (limit,)
                ).fetchall()[::-1]
        return [_unit(r) for r in rows]

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]:
        """The unit and up to ``radius`` turns either side of it, in turn order.

        Raises:
            NotFound: no unit has this id.
        """
        radius = max(0, min(radius, MAX_ROWS // 2))
        with self._read("read window") as conn:
            row = conn.execute("SELECT turn FROM units WHERE id = ?", (unit_id,)).fetchone()
            if row is None:
                raise NotFound(f"no unit with id {unit_id!r}")
            rows = conn.execute(
                f"SELECT {_UNIT_COLUMNS} FROM units WHERE turn BETWEEN ? AND ? ORDER BY turn",
                (row[0] - radius, row[0] + radius),
            ).fetchall()
        return [_unit(r) for r in rows]

    def purge_units(self, ids: Iterable[str], now_ms: int) -> list[str]:
        """Erase the text of units so it is in no file; ids, turns and hashes stay.

        The text becomes ``[purged sha256:<content hash>]``, the units leave the search
        index, the index is merged so no segment keeps their words, and the WAL is
        checkpointed and truncated. Purging a purged unit again is a no-op.

        Returns:
            The ids purged by this call.

        Raises:
            NotFound: an id is unknown (nothing is purged).
            StoreError: the WAL could not be truncated (another reader holds it).
        """
        wanted = list(dict.fromkeys(ids))
        purged: list[str] = []
        with self._write("purge units") as conn:
            for unit_id in wanted:
                row = conn.execute(
                    "SELECT content_hash, purged FROM units WHERE id = ?", (unit_id,)
                ).fetchone()
                if row is None:
                    raise NotFound(f"no unit with id {unit_id!r}")
                if row[1]:
                    continue
                placeholder = f"[purged sha256:{row[0]}]"
                conn.execute(
                    "UPDATE units SET user = ?, assistant = ?, purged = ? WHERE id = ?",
                    (placeholder, placeholder, max(now_ms, 1), unit_id),
                )
                purged.append(unit_id)
        if purged:
            self._scrub()
        return purged

    def _scrub(self) -> None:
        """Merge the FTS index (dropping deleted entries) and truncate the WAL."""
        with self._write("optimize search index") as conn:
            conn.execute("INSERT INTO units_fts (units_fts) VALUES ('optimize')")
        self.checkpoint()

    def purged_ids(self) -> list[str]:
        """Ids of purged units, in turn order."""
        with self._read("list purged units") as conn:
            rows = conn.execute("SELECT id FROM units WHERE purged != 0 ORDER BY turn").fetchall()
        return [str(r[0]) for r in rows]

    def integrity_check(self) -> None:
        """Check the file and the search index; raises :class:`StoreError` on damage."""
        with self._write("integrity check") as conn:
            # rank 0: check the index itself; purged units are meant to differ from it.
            conn.execute("INSERT INTO units_fts (units_fts, rank) VALUES ('integrity-check', 0)")
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if result != "ok":
            raise StoreError(f"{str(self.path)!r} failed its integrity check: {result}")

