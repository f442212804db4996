"""One writer per data directory, enforced: an exclusive ``flock`` on ``<data-dir>/writer.lock``.

Whoever opens the stores of a data directory for writing (a ``Runtime``: a CLI command, a
replay, the sidecar) takes the lock first. A second writer gets :class:`StoreLocked` naming
the holder (pid, command, since when) instead of opening the same SQLite files behind the
first one's back (which could bring a forgotten memory back from a stale in-memory table).
The kernel drops the lock when its process dies, so a ``kill -9`` never leaves a stale lock;
the holder's description in ``writer.json`` is only read while the lock is held.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import IO

from engine.errors import StoreLocked

LOCK_FILE = "writer.lock"
HOLDER_FILE = "writer.json"


class WriterLock:
    """The exclusive writer lock of one data directory, held until :meth:`release`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._fh: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def acquire(self) -> WriterLock:
        """Take the lock, or raise :class:`StoreLocked` naming who holds it."""
        if self._fh is not None:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fh = open(self.data_dir / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held open on purpose
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise StoreLocked(describe_holder(self.data_dir)) from None
        self._fh = fh
        holder = {"pid": os.getpid(), "command": " ".join(sys.argv)[:300], "since_ms": int(time.time() * 1000)}
        (self.data_dir / HOLDER_FILE).write_text(json.dumps(holder), encoding="utf-8")
        return self

    def release(self) -> None:
        if self._fh is None:
            return
        try:
            (self.data_dir / HOLDER_FILE).unlink(missing_ok=True)
        finally:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def describe_holder(data_dir: Path) -> str:
    """One line saying who writes ``data_dir`` and what to do about it."""
    try:
        holder = json.loads((Path(data_dir) / HOLDER_FILE).read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(holder["since_ms"] / 1000))
        who = f"pid {holder['pid']} ({holder['command'] or 'unknown command'}) since {since}"
    except (OSError, ValueError, KeyError, TypeError):
        who = "another process"
    return (f"the data directory {data_dir} is being written by {who}; one writer per store: wait for it "
            f"to finish, or run `dynmem serve` so that every command goes through one sidecar")
