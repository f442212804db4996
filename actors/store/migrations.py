"""Opening SQLite files and evolving their schema with named, ordered migrations.

Every store file (``log.sqlite``, ``memory.sqlite``) is opened with :func:`connect`, which
sets the durability and privacy pragmas the design asks for, and brought up to date with
:func:`migrate`, which records each applied migration by name in ``schema_migrations``
(the sqlite-utils pattern). :class:`SqliteFile` is the small base the stores share: one
connection, one lock, explicit ``BEGIN IMMEDIATE`` transactions, and translation of every
``sqlite3`` exception into the project's error tree at this edge.

Connections run in autocommit mode (``isolation_level=None``): a transaction exists only
where :func:`transaction` opens one, so nothing is committed implicitly behind our back.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from engine.errors import DataDirError, StoreError

log = logging.getLogger("dynmem.store")

#: Milliseconds a writer waits for a lock held by another connection before failing.
BUSY_TIMEOUT_MS = 5_000

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY,
    applied_at INTEGER NOT NULL
)
"""


@dataclass(frozen=True)
class Migration:
    """One named schema change; ``apply`` runs inside the migration's transaction."""

    name: str
    apply: Callable[[sqlite3.Connection], None]

    @classmethod
    def sql(cls, name: str, script: str) -> Migration:
        """Build a migration from a SQL script (several statements, triggers allowed)."""
        statements = split_sql(script)

        def run(conn: sqlite3.Connection) -> None:
            for statement in statements:
                conn.execute(statement)

        return cls(name, run)


def split_sql(script: str) -> list[str]:
    """Split a script into complete statements (``executescript`` would COMMIT)."""
    statements: list[str] = []
    buffer = ""
    for part in script.split(";"):
        buffer += part + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip().strip(";").strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip().rstrip(";").strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]!r}")
    return statements


@contextmanager
def translate_errors(what: str) -> Iterator[None]:
    """Re-raise ``sqlite3`` errors as :class:`StoreError` naming the failed operation."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(f"{what} failed: {exc}") from exc


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open (creating if needed) a SQLite file with WAL, full sync and secure delete.

    ``synchronous=FULL`` in WAL mode fsyncs the WAL on every commit, so an acknowledged
    write survives ``kill -9`` and power loss; ``secure_delete`` zeroes freed content so
    purged text does not linger in free pages. A new file is made private (0600).

    Raises:
        DataDirError: the directory is missing or not writable, or the file can't be opened.
    """
    file = Path(path)
    directory = file.parent
    if not directory.is_dir():
        raise DataDirError(f"data directory {str(directory)!r} does not exist; create it first")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise DataDirError(f"data directory {str(directory)!r} is not writable")
    if file.exists() and not os.access(file, os.R_OK | os.W_OK):
        raise DataDirError(f"database file {str(file)!r} is not readable and writable")
    created = not file.exists()
    try:
        conn = sqlite3.connect(file, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise DataDirError(f"cannot open database {str(file)!r}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise DataDirError(f"cannot enable WAL on {str(file)!r} (journal_mode={mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
        if created:
            os.chmod(file, 0o600)
    except sqlite3.Error as exc:
        conn.close()
        raise DataDirError(f"cannot initialise database {str(file)!r}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a block in one ``BEGIN IMMEDIATE`` transaction: commit on success, else roll back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        # A failed COMMIT (deferred foreign keys, disk full) leaves the transaction
        # open; it is rolled back below like any other failure.
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations already applied, in the order they were applied."""
    with translate_errors("reading schema_migrations"):
        conn.execute(_MIGRATIONS_TABLE)
        rows = conn.execute("SELECT name FROM schema_migrations ORDER BY rowid").fetchall()
    return [str(name) for (name,) in rows]


def migrate(
    conn: sqlite3.Connection, migrations: Sequence[Migration], now_ms: int | None = None
) -> list[str]:
    """Apply the migrations not yet recorded, in order, each in its own transaction.

    Returns:
        The names applied by this call (empty when the schema was current).

    Raises:
        StoreError: a migration failed (its transaction is rolled back), names repeat, or
            the file records migrations this code does not know (written by a newer version).
    """
    names = [m.name for m in migrations]
    if len(set(names)) != len(names):
        raise StoreError(f"duplicate migration names: {names}")
    done = applied_migrations(conn)
    unknown = [name for name in done if name not in names]
    if unknown:
        raise StoreError(
            f"database has migrations this version does not know ({', '.join(unknown)}); "
            "it was written by a newer dynamics-memory"
        )
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        stamp = now_ms if now_ms is not None else int(time.time() * 1000)
        with translate_errors(f"migration {migration.name!r}"), transaction(conn):
            migration.apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, stamp),
            )
        applied.append(migration.name)
    return applied


class SqliteFile:
    """One SQLite file with a single connection, a lock and its migrations applied.

    Subclasses set ``MIGRATIONS``. Reads and writes go through :meth:`_read` and
    :meth:`_write`, which serialise access (a Ray actor may call from several threads)
    and translate ``sqlite3`` errors.

    A write nobody waits for (a live recall's shadow credit) can be handed to :meth:`write_behind`:
    it runs on the file's own thread after the caller has replied, and every later read, write or
    close of the file waits for it first, so that no caller ever sees the file without it.
    """

    MIGRATIONS: Sequence[Migration] = ()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        # Writes left to the file's own thread (write_behind), in order; each later access waits for them.
        self._behind: list[concurrent.futures.Future[None]] = []
        self._behind_lock = threading.Lock()
        self._behind_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._behind_thread = threading.local()  # .active on the file's own thread; .depth: accesses held
        self._behind_errors: list[BaseException] = []
        self._conn: sqlite3.Connection | None = connect(self.path)
        try:
            migrate(self._conn, self.MIGRATIONS)
        except BaseException:
            self.close()
            raise

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection; raises :class:`StoreError` once closed."""
        if self._conn is None:
            raise StoreError(f"store {str(self.path)!r} is closed")
        return self._conn

    def write_behind(self, write: Callable[[], object], what: str) -> None:
        """Run ``write`` (a write of this file) on its own thread, after the caller returns.

        For writes that nobody is waiting for: the caller has already acknowledged nothing that
        depends on them. Every later :meth:`_read`, :meth:`_write` and :meth:`close` of this file
        first waits until the writes handed over before it are committed, so the order of writes
        and what any reader sees are as if ``write`` had run inline. A failure is logged and kept
        for :meth:`behind_errors`; it is never raised to an unrelated later caller.
        """
        def run() -> None:
            self._behind_thread.active = True
            try:
                write()
            except Exception as exc:  # logged and kept: the caller replied long ago
                log.warning("a deferred write (%s) of %s failed: %s", what, self.path, exc)
                with self._behind_lock:
                    self._behind_errors.append(exc)
            finally:
                self._behind_thread.active = False

        with self._behind_lock:
            if self._behind_pool is None:
                self._behind_pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix=f"dynmem-{self.path.stem}-behind")
            self._behind = [f for f in self._behind if not f.done()]
            self._behind.append(self._behind_pool.submit(run))

    def settle(self) -> None:
        """Wait until every write handed to :meth:`write_behind` so far is committed (or failed)."""
        if getattr(self._behind_thread, "active", False) or getattr(self._behind_thread, "depth", 0):
            # The deferred write itself reads and writes through _read and _write; an access nested in
            # another settled when the outer one began (waiting here, holding the lock, would deadlock).
            return
        with self._behind_lock:
            pending, self._behind = self._behind, []
        for fut in pending:
            fut.result()  # run() catches everything: this only waits

    def behind_errors(self) -> list[BaseException]:
        """The failures of deferred writes finished since the last call (cleared), without waiting."""
        with self._behind_lock:
            errors, self._behind_errors = self._behind_errors, []
        return errors

    @contextmanager
    def _held(self) -> Iterator[None]:
        """The lock of the file, after the deferred writes handed over before this access."""
        self.settle()
        with self._lock:
            local = self._behind_thread
            local.depth = getattr(local, "depth", 0) + 1
            try:
                yield
            finally:
                local.depth -= 1

    @contextmanager
    def _read(self, what: str) -> Iterator[sqlite3.Connection]:
        with self._held(), translate_errors(what):
            yield self.conn

    @contextmanager
    def _write(self, what: str, fsync: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction. ``fsync=False`` commits it with ``synchronous=NORMAL``: in WAL
        mode the commit then survives a crash of the process (``kill -9``) but not of the machine,
        until the next ``fsync`` commit of this file (WAL frames are synced in order, so it also
        makes every earlier commit durable)."""
        with self._held(), translate_errors(what):
            conn = self.conn
            if not fsync:
                conn.execute("PRAGMA synchronous = NORMAL")
            try:
                with transaction(conn):
                    yield conn
            finally:
                if not fsync:
                    conn.execute("PRAGMA synchronous = FULL")

    def checkpoint(self) -> None:
        """Copy the WAL into the main file and truncate the WAL to zero bytes.

        Raises:
            StoreError: another connection kept the checkpoint from completing.
        """
        with self._read("checkpoint") as conn:
            busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise StoreError(f"checkpoint of {str(self.path)!r} blocked by another reader")

    def close(self) -> None:
        """Close the connection (idempotent), after the deferred writes."""
        self.settle()
        with self._behind_lock:
            pool, self._behind_pool = self._behind_pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
