"""On-disk cache of model replies, keyed by the sha256 of the redacted request.

One file per reply (``<sha256>.json``, mode 0600, in a 0700 folder), written atomically.
Only replies that validated are stored, and only the reply: the request is represented
by its hash. The folder is bounded in size: past ``max_bytes`` the least recently used
files (by modification time; a hit touches its file) are evicted. :func:`purge_matching`
deletes every reply containing a text (for ``forget --purge``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import StoreError
from engine.redact import redact


def request_key(model: str, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any] | None) -> str:
    """sha256 of the (already redacted) request: model, messages and the reply schema."""
    body = json.dumps({"model": model, "messages": list(messages), "schema": schema},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class ResponseCache:
    """A size-bounded folder of cached replies."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.folder, 0o700)
        except OSError as exc:
            raise StoreError(f"cannot create the model cache {self.folder}: {exc.strerror}") from exc

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError("cache keys are sha256 hex digests")
        return self.folder / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The cached reply for ``key``, or None."""
        path = self._path(key)
        try:
            reply = json.loads(path.read_text(encoding="utf-8"))["reply"]
            os.utime(path)  # recently used: evicted last
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return reply if isinstance(reply, str) else None

    def put(self, key: str, reply: str) -> None:
        """Store a reply (redacted once more), then evict down to the size bound."""
        data = json.dumps({"reply": redact(reply)}, ensure_ascii=False).encode("utf-8")
        if len(data) > self.max_bytes:
            return
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")  # created 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self._path(key))
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return  # a cache that cannot write is only slower
        self.evict()

    def _entries(self) -> list[tuple[float, int, Path]]:
        out = []
        for path in self.folder.glob("*.json"):
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((st.st_mtime, st.st_size, path))
        return sorted(out)

    def size_bytes(self) -> int:
        return sum(size for _, size, _ in self._entries())

    def evict(self) -> int:
        """Delete the least recently used replies until the folder fits; returns how many."""
        entries = self._entries()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in entries:
            if total <= self.max_bytes:
                break
            try:
                path.unlink()
            except OSError:
                continue
            total -= size
            removed += 1
        return removed

    def purge_matching(self, text: str) -> int:
        """Delete every cached reply that contains ``text`` (case-insensitive); returns how many."""
        return purge_matching(self.folder, text)


def purge_matching(folder: Path, text: str) -> int:
    """Delete the cached replies under ``folder`` that contain ``text`` (case-insensitive)."""
    needle = text.casefold().strip()
    if not needle or not Path(folder).is_dir():
        return 0
    removed = 0
    for path in Path(folder).glob("*.json"):
        try:
            raw = path.read_text(encoding="utf-8")
            reply = json.loads(raw).get("reply", "")
        except (OSError, ValueError, AttributeError):
            continue
        if needle in str(reply).casefold() or needle in raw.casefold():
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed
