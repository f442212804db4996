"""Consistent snapshots of a whole data directory while it is in use (``dynmem backup``)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from engine.errors import DataDirError, StoreError


def backup_data_dir(data_dir: Path, dest: Path) -> list[Path]:
    """Copy every store with SQLite's online backup API (a consistent snapshot even while a
    writer is active) plus each project's ``project.json``; tokens are not copied."""
    src = Path(data_dir)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise DataDirError(f"backup folder {dest} is not empty")
    written: list[Path] = []
    for db in sorted(src.rglob("*.sqlite")):
        target = dest / db.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                copy = sqlite3.connect(target)
                try:
                    source.backup(copy)
                finally:
                    copy.close()
            finally:
                source.close()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot back up {db}: {exc}") from exc
        os.chmod(target, 0o600)
        written.append(target)
    for marker in sorted(src.rglob("project.json")):
        target = dest / marker.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(marker, target)
        written.append(target)
    return written
