"""Snapshots of what opening a store would rebuild: the BM25 index of its memories' text
(here) and the FAISS index of its vectors (``actors/index.py``, ``VectorIndex.save``).

Opening a store of 100k memories tokenized every text again (about 2.5 s of a cold open,
eval/results/perf-scale/). The engine writes the index to ``lexical.npz`` next to
``memory.sqlite`` when it closes, tagged with the store's content token
(:meth:`MemoryStore.content_token`, renewed by every change of a text, of the servable set or
of a vector), and the next open reads it back when the token is still the store's. A stale,
foreign or damaged file is never used: the index is rebuilt from the memories instead.

The file is written by the EngineActor that owns the store (one writer), through a temporary
file and an atomic rename; ``np.savez`` without pickle. A purge deletes it (it holds the
tokens of the memories' text), see ``EngineService._commit``.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from engine.lexical import BM25Index

LEXICAL_FILE = "lexical.npz"
#: The FAISS index of the store's scope, written by the IndexActor (``VectorIndex.save``) at the
#: engine's request, with ``vectors.faiss.npz`` beside it (token and ids).
VECTORS_FILE = "vectors.faiss"
#: Bumped when the arrays change shape or meaning: an older file is then rebuilt, not misread.
FORMAT = 3  # 2: the index holds inflection stems too (engine/inflection.py); 3: a dotted name adds its labels
# (engine/lexical.py). An older file is rebuilt.


def save_lexical(path: Path, token: str, index: BM25Index) -> None:
    """Write ``index`` with the content token it matches (atomically: a reader sees the old file or the new)."""
    arrays = index.to_arrays()
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        arrays["token"] = np.frombuffer(token.encode("utf-8"), dtype=np.uint8)
        arrays["format"] = np.array([FORMAT], dtype=np.int64)
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as savez's own flags
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def load_lexical(path: Path, token: str) -> BM25Index | None:
    """The index saved for ``token``, or None (no file, another token or format, or a damaged file)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if int(z["format"][0]) != FORMAT or z["token"].tobytes().decode("utf-8") != token:
                return None
            return BM25Index.from_arrays({k: z[k] for k in z.files if k not in ("token", "format")})
    except FileNotFoundError:
        return None
    except (OSError, KeyError, ValueError, IndexError, UnicodeDecodeError, zipfile.BadZipFile):
        return None  # damaged or foreign: rebuilt from the memories, and rewritten at the next close


def drop(*paths: Path) -> None:
    """Delete snapshot files (after a purge, so that no file keeps what was purged)."""
    for p in paths:
        for f in (p, p.with_name(p.name + ".tmp")):
            try:
                f.unlink()
            except FileNotFoundError:
                pass
