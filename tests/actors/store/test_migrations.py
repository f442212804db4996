"""Tests for actors.store.migrations: pragmas, named ordered migrations, error translation."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.store.migrations import (
    Migration,
    SqliteFile,
    applied_migrations,
    connect,
    migrate,
    split_sql,
    transaction,
)
from engine.errors import DataDirError, StoreError


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = connect(tmp_path / "t.sqlite")
    yield c
    c.close()


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_connect_sets_durability_and_privacy_pragmas(conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_new_database_file_is_private(tmp_path: Path) -> None:
    c = connect(tmp_path / "p.sqlite")
    c.close()
    assert stat.S_IMODE(os.stat(tmp_path / "p.sqlite").st_mode) == 0o600


def test_missing_directory_is_a_data_dir_error(tmp_path: Path) -> None:
    with pytest.raises(DataDirError, match="does not exist"):
        connect(tmp_path / "nope" / "t.sqlite")
    c = connect(tmp_path / "t.sqlite")  # positive control
    c.close()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_directory_is_a_data_dir_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(DataDirError, match="not writable"):
            connect(locked / "t.sqlite")
    finally:
        locked.chmod(0o700)


def test_file_that_is_not_a_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError):
        connect(path)


def test_migrations_apply_in_order_once(conn: sqlite3.Connection) -> None:
    migrations = [
        Migration.sql("0001_a", "CREATE TABLE a (x INTEGER);"),
        Migration.sql("0002_b", "CREATE TABLE b (y INTEGER); INSERT INTO b VALUES (1);"),
    ]
    assert migrate(conn, migrations, now_ms=5) == ["0001_a", "0002_b"]
    assert migrate(conn, migrations, now_ms=6) == []
    assert applied_migrations(conn) == ["0001_a", "0002_b"]
    assert conn.execute("SELECT COUNT(*) FROM b").fetchone()[0] == 1
    stamps = conn.execute("SELECT applied_at FROM schema_migrations").fetchall()
    assert stamps == [(5,), (5,)]


def test_new_migration_is_applied_on_top(conn: sqlite3.Connection) -> None:
    first = [Migration.sql("0001_a", "CREATE TABLE a (x INTEGER);")]
    migrate(conn, first)
    more = first + [Migration.sql("0002_add", "ALTER TABLE a ADD COLUMN y TEXT;")]
    assert migrate(conn, more) == ["0002_add"]
    columns = [r[1] for r in conn.execute("PRAGMA table_info(a)")]
    assert columns == ["x", "y"]


def test_failing_migration_rolls_back_and_is_not_recorded(conn: sqlite3.Connection) -> None:
    migrations = [
        Migration.sql("0001_ok", "CREATE TABLE ok (x INTEGER);"),
        Migration.sql("0002_bad", "CREATE TABLE half (x INTEGER); INSERT INTO missing VALUES (1);"),
    ]
    with pytest.raises(StoreError, match="0002_bad"):
        migrate(conn, migrations)
    assert applied_migrations(conn) == ["0001_ok"]
    assert "ok" in _tables(conn) and "half" not in _tables(conn)


def test_database_from_a_newer_version_is_refused(conn: sqlite3.Connection) -> None:
    migrate(conn, [Migration.sql("0001_a", "CREATE TABLE a (x);"), Migration.sql("0002_b", "SELECT 1;")])
    with pytest.raises(StoreError, match="newer"):
        migrate(conn, [Migration.sql("0001_a", "CREATE TABLE a (x);")])


def test_duplicate_names_are_refused(conn: sqlite3.Connection) -> None:
    with pytest.raises(StoreError, match="duplicate"):
        migrate(conn, [Migration.sql("x", "SELECT 1;"), Migration.sql("x", "SELECT 2;")])


def test_split_sql_keeps_trigger_bodies_whole() -> None:
    script = """
    CREATE TABLE t (x);
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
        INSERT INTO t VALUES (1);
        INSERT INTO t VALUES (2);
    END;
    """
    statements = split_sql(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")


def test_transaction_rolls_back_on_error(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE t (x)")
    with transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")  # positive control: committed
    with pytest.raises(RuntimeError), transaction(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("boom")
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert not conn.in_transaction


class _Thing(SqliteFile):
    MIGRATIONS = (Migration.sql("0001_t", "CREATE TABLE t (x INTEGER);"),)


def test_closed_file_raises_store_error(tmp_path: Path) -> None:
    thing = _Thing(tmp_path / "thing.sqlite")
    with thing._read("read") as conn:
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    thing.close()
    thing.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        with thing._read("read"):
            pass


def test_sqlite_errors_do_not_escape(tmp_path: Path) -> None:
    with _Thing(tmp_path / "thing.sqlite") as thing:
        with pytest.raises(StoreError, match="no such table") as info:
            with thing._write("bad write") as conn:
                conn.execute("INSERT INTO nope VALUES (1)")
        assert isinstance(info.value.__cause__, sqlite3.Error)


def test_checkpoint_truncates_the_wal(tmp_path: Path) -> None:
    with _Thing(tmp_path / "thing.sqlite") as thing:
        with thing._write("fill") as conn:
            conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1000)])
        wal = tmp_path / "thing.sqlite-wal"
        assert wal.stat().st_size > 0  # positive control
        thing.checkpoint()
        assert wal.stat().st_size == 0


def test_failed_commit_is_rolled_back(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute(
        "CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
    )
    with pytest.raises(sqlite3.IntegrityError), transaction(conn):
        conn.execute("INSERT INTO child VALUES (1)")  # fails only at COMMIT
    assert not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM child").fetchone()[0] == 0
    with transaction(conn):  # positive control: the connection is usable again
        conn.execute("INSERT INTO parent VALUES (1)")
        conn.execute("INSERT INTO child VALUES (1)")
    assert conn.execute("SELECT COUNT(*) FROM child").fetchone()[0] == 1


def _count(thing: SqliteFile) -> int:
    with thing._read("count") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM t").fetchone()[0])


def test_a_write_behind_is_seen_by_every_later_read(tmp_path: Path) -> None:
    import threading

    with _Thing(tmp_path / "thing.sqlite") as thing:
        gate = threading.Event()

        def slow_insert() -> None:
            gate.wait(5)  # still running when the caller reads: the read must wait for it
            with thing._write("insert") as conn:
                conn.execute("INSERT INTO t VALUES (1)")

        thing.write_behind(slow_insert, "test insert")
        threading.Timer(0.05, gate.set).start()
        assert _count(thing) == 1
        assert thing.behind_errors() == []


def test_write_behind_keeps_the_order_of_writes(tmp_path: Path) -> None:
    with _Thing(tmp_path / "thing.sqlite") as thing:
        def insert(i: int) -> None:
            with thing._write("insert") as conn:
                conn.execute("INSERT INTO t VALUES (?)", (i,))

        for i in range(20):
            thing.write_behind(lambda i=i: insert(i), "insert")
        insert(20)  # an inline write after them lands after them
        with thing._read("order") as conn:
            assert [r[0] for r in conn.execute("SELECT x FROM t ORDER BY rowid")] == list(range(21))


def test_a_failed_write_behind_is_kept_for_its_owner_not_raised_to_a_later_caller(tmp_path: Path) -> None:
    with _Thing(tmp_path / "thing.sqlite") as thing:
        def bad() -> None:
            with thing._write("bad") as conn:
                conn.execute("INSERT INTO nope VALUES (1)")

        thing.write_behind(bad, "bad insert")
        assert _count(thing) == 0  # a later read works: the failure is not its error
        errors = thing.behind_errors()
        assert len(errors) == 1 and isinstance(errors[0], StoreError)
        assert thing.behind_errors() == []  # handed over once

        def good() -> None:  # positive control: the file takes deferred writes again
            with thing._write("good") as conn:
                conn.execute("INSERT INTO t VALUES (2)")

        thing.write_behind(good, "good insert")
        assert _count(thing) == 1


def test_close_waits_for_the_writes_behind(tmp_path: Path) -> None:
    path = tmp_path / "thing.sqlite"
    thing = _Thing(path)

    def insert() -> None:
        import time

        time.sleep(0.05)
        with thing._write("insert") as conn:
            conn.execute("INSERT INTO t VALUES (3)")

    thing.write_behind(insert, "insert")
    thing.close()
    with _Thing(path) as again:
        assert _count(again) == 1
