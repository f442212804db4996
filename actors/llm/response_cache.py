"""On-disk cache of model replies, keyed by the sha256 of the redacted request.

One SQLite file (``<folder>/replies.sqlite``, mode 0600, in a 0700 folder) shared by every
extraction worker (WAL, a busy timeout). Only replies that validated are stored, and only
the reply: the request is represented by its hash. The cache is bounded in size: a put
adds its row and the running total in one transaction, then evicts the least recently used
rows (a hit moves its row to the front) through an index until the total fits, so a put
costs O(1) amortised, whatever the number of entries (the previous one-file-per-reply
folder stat'ed every file on every put). :func:`purge_matching` deletes every reply
containing a text (for ``forget --purge``). A cache that cannot read or write is only
slower: its errors are never raised to the caller.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import StoreError
from engine.redact import redact

DB_NAME = "replies.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key   TEXT PRIMARY KEY,            -- sha256 of the redacted request
    reply TEXT NOT NULL,               -- redacted reply text
    size  INTEGER NOT NULL,            -- bytes of reply (UTF-8), what the bound counts
    used  INTEGER NOT NULL             -- recency: larger is more recent
);
CREATE INDEX IF NOT EXISTS replies_by_use ON replies(used);
CREATE TABLE IF NOT EXISTS totals (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    bytes INTEGER NOT NULL,            -- sum(size): kept in step with every insert and delete
    clock INTEGER NOT NULL             -- last recency stamp handed out
);
INSERT OR IGNORE INTO totals (id, bytes, clock) VALUES (1, 0, 0);
"""


def request_key(model: str, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any] | None) -> str:
    """sha256 of the (already redacted) request: model, messages and the reply schema."""
    body = json.dumps({"model": model, "messages": list(messages), "schema": schema},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _check_key(key: str) -> str:
    if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
        raise ValueError("cache keys are sha256 hex digests")
    return key


class ResponseCache:
    """A size-bounded SQLite table of cached replies."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.path = self.folder / DB_NAME
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.folder, 0o700)
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)  # created 0600 before SQLite opens it
            os.close(fd)
            os.chmod(self.path, 0o600)
            with self._conn() as conn:
                conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the model cache {self.path}: {exc}") from exc
        _drop_legacy_files(self.folder)

    @contextlib.contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """The cache's one connection (opened on first use, shared by threads under a lock)."""
        with self._lock:
            if self._db is None:
                self._db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")  # a cache: losing the last put on power loss is fine
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def get(self, key: str) -> str | None:
        """The cached reply for ``key``, or None; a hit becomes the most recently used."""
        _check_key(key)
        try:
            with self._conn() as conn:
                conn.execute("BEGIN IMMEDIATE")
                row = conn.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    conn.execute("UPDATE totals SET clock = clock + 1 WHERE id = 1")
                    conn.execute("UPDATE replies SET used = (SELECT clock FROM totals WHERE id = 1) WHERE key = ?", (key,))
                conn.execute("COMMIT")
        except sqlite3.Error:
            return None
        return str(row[0]) if row is not None else None

    def put(self, key: str, reply: str) -> None:
        """Store a reply (redacted once more), then evict down to the size bound."""
        _check_key(key)
        text = redact(reply)
        size = len(text.encode("utf-8"))
        if size > self.max_bytes:
            return
        try:
            with self._conn() as conn:
                conn.execute("BEGIN IMMEDIATE")
                old = conn.execute("SELECT size FROM replies WHERE key = ?", (key,)).fetchone()
                conn.execute("UPDATE totals SET clock = clock + 1, bytes = bytes + ? - ? WHERE id = 1",
                             (size, old[0] if old else 0))
                conn.execute("INSERT OR REPLACE INTO replies (key, reply, size, used) "
                             "VALUES (?, ?, ?, (SELECT clock FROM totals WHERE id = 1))", (key, text, size))
                self._evict(conn)
                conn.execute("COMMIT")
        except sqlite3.Error:
            return  # a cache that cannot write is only slower

    def _evict(self, conn: sqlite3.Connection) -> int:
        """Delete least recently used rows until the total fits (each row is evicted once: amortised O(1))."""
        removed = 0
        while True:
            (total,) = conn.execute("SELECT bytes FROM totals WHERE id = 1").fetchone()
            if total <= self.max_bytes:
                return removed
            row = conn.execute("SELECT key, size FROM replies ORDER BY used LIMIT 1").fetchone()
            if row is None:
                conn.execute("UPDATE totals SET bytes = 0 WHERE id = 1")
                return removed
            conn.execute("DELETE FROM replies WHERE key = ?", (row[0],))
            conn.execute("UPDATE totals SET bytes = bytes - ? WHERE id = 1", (row[1],))
            removed += 1

    def evict(self) -> int:
        """Evict down to the bound now; returns how many replies were deleted."""
        try:
            with self._conn() as conn:
                conn.execute("BEGIN IMMEDIATE")
                removed = self._evict(conn)
                conn.execute("COMMIT")
        except sqlite3.Error:
            return 0
        return removed

    def size_bytes(self) -> int:
        """Bytes of cached replies (the running total that the bound is checked against)."""
        with self._conn() as conn:
            return int(conn.execute("SELECT bytes FROM totals WHERE id = 1").fetchone()[0])

    def count(self) -> int:
        with self._conn() as conn:
            return int(conn.execute("SELECT count(*) FROM replies").fetchone()[0])

    def purge_matching(self, text: str) -> int:
        """Delete every cached reply that contains ``text`` (case-insensitive); returns how many."""
        return purge_matching(self.folder, text)


def purge_matching(folder: Path, text: str) -> int:
    """Delete the cached replies under ``folder`` that contain ``text`` (case-insensitive).

    A full scan, on purpose: purges are rare and must not miss a reply.
    """
    needle = text.casefold().strip()
    path = Path(folder) / DB_NAME
    removed = _drop_legacy_files(Path(folder), needle) if needle else 0
    if not needle or not path.exists():
        return removed
    try:
        conn = sqlite3.connect(path, timeout=5.0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            doomed = [(k, s) for k, r, s in conn.execute("SELECT key, reply, size FROM replies") if needle in r.casefold()]
            for key, size in doomed:
                conn.execute("DELETE FROM replies WHERE key = ?", (key,))
                conn.execute("UPDATE totals SET bytes = bytes - ? WHERE id = 1", (size,))
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        # Unlike a put, a purge that fails must be seen: the text would survive in the cache.
        raise StoreError(f"cannot purge the model cache {path}: {exc}") from exc
    return removed + len(doomed)


def _drop_legacy_files(folder: Path, needle: str | None = None) -> int:
    """Replies of the old one-file-per-reply cache (``<sha256>.json``): all of them are deleted
    when a cache opens (their text would escape later purges), or those containing ``needle``."""
    removed = 0
    for path in folder.glob("*.json"):
        if len(path.stem) != 64:
            continue
        try:
            if needle is not None and needle not in path.read_text(encoding="utf-8").casefold():
                continue
            path.unlink()
            removed += 1
        except OSError:
            continue
    return removed


def purge_client_cache(client: object, texts: Sequence[str]) -> int:
    """Delete the replies containing any of ``texts`` from the cache of ``client`` (if it keeps
    one); each model service answers this on its own node, where its cache lives (issue 12)."""
    cache = getattr(client, "cache", None)
    if not isinstance(cache, ResponseCache):
        return 0
    return sum(cache.purge_matching(t) for t in texts)

