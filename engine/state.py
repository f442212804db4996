"""MemoryTable: the in-memory view of one engine's memories, with its lookups.

The EngineActor loads it from ``memory.sqlite`` at start and applies every committed
``Effects`` to it, so lookups on the hot path never touch the disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from engine.effects import Effects
from engine.keys import normalize_belief, normalize_key
from engine.lexical import BM25Index
from engine.models import Candidate, Memory, Tension, Tier


def stable_id(prefix: str, *parts: object) -> str:
    """A deterministic id from its parts (so replays and retries produce the same ids)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:16]
    return f"{prefix}_{digest}"


def memory_id_for(candidate: Candidate, fingerprint: str) -> str:
    return stable_id("m", candidate.scope, fingerprint, ",".join(sorted(candidate.source_unit_ids)),
                     candidate.valid_from_ms, candidate.origin.value)


def tension_id_for(a_id: str, b_id: str) -> str:
    lo, hi = sorted((a_id, b_id))
    return stable_id("t", lo, hi)


class MemoryTable:
    """Memories by id, fingerprint, key and belief, plus a BM25 index of servable text."""

    def __init__(self, memories: Iterable[Memory] = (), tensions: Iterable[Tension] = ()) -> None:
        self._by_id: dict[str, Memory] = {}
        self._by_fp: dict[tuple[str, str], set[str]] = {}
        self._by_key: dict[tuple[str, str], set[str]] = {}
        self._by_belief: dict[tuple[str, str], set[str]] = {}
        self.lexical = BM25Index()
        self.tensions: dict[str, Tension] = {}
        self._always_on: set[str] = set()  # servable core/pinned memories (kept so recall never scans)
        for m in memories:
            self.put(m)
        for t in tensions:
            self.put_tension(t)

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[Memory]:
        return iter(self._by_id.values())

    def get(self, memory_id: str) -> Memory | None:
        return self._by_id.get(memory_id)

    def put(self, m: Memory) -> None:
        old = self._by_id.get(m.id)
        if old is not None:
            self._unindex(old)
        self._by_id[m.id] = m
        self._by_fp.setdefault((m.scope, m.fingerprint), set()).add(m.id)
        if m.key:
            self._by_key.setdefault((m.scope, normalize_key(m.key)), set()).add(m.id)
        if m.belief:
            self._by_belief.setdefault((m.scope, normalize_belief(m.belief)), set()).add(m.id)
        if m.servable and not m.purged:
            if old is None or old.text != m.text or m.id not in self.lexical:  # credit and moves keep the text
                self.lexical.add(m.id, m.text)
        else:
            self.lexical.remove(m.id)
        if m.servable and not m.purged and m.tier in (Tier.CORE, Tier.PINNED):
            self._always_on.add(m.id)
        else:
            self._always_on.discard(m.id)

    def _unindex(self, m: Memory) -> None:
        self._by_fp.get((m.scope, m.fingerprint), set()).discard(m.id)
        if m.key:
            self._by_key.get((m.scope, normalize_key(m.key)), set()).discard(m.id)
        if m.belief:
            self._by_belief.get((m.scope, normalize_belief(m.belief)), set()).discard(m.id)

    def put_tension(self, t: Tension) -> None:
        if t.status == "open":
            self.tensions[t.id] = t
        else:
            self.tensions.pop(t.id, None)

    def apply(self, effects: Effects) -> None:
        """Mirror a committed ``Effects`` in memory."""
        for m in effects.memories:
            self.put(m)
        for t in effects.tensions:
            self.put_tension(t)

    def with_fingerprint(self, scope: str, fp: str) -> list[Memory]:
        return sorted((self._by_id[i] for i in self._by_fp.get((scope, fp), ())), key=lambda m: m.id)

    def with_key(self, scope: str, key: str) -> list[Memory]:
        ids = self._by_key.get((scope, normalize_key(key)), ())
        return sorted((self._by_id[i] for i in ids), key=lambda m: m.id)

    def with_belief(self, scope: str, belief: str) -> list[Memory]:
        ids = self._by_belief.get((scope, normalize_belief(belief)), ())
        return sorted((self._by_id[i] for i in ids), key=lambda m: m.id)

    def always_on(self) -> list[Memory]:
        """Servable core and pinned memories (the always-on slots)."""
        return [self._by_id[i] for i in sorted(self._always_on)]

    def open_tensions_of(self, memory_id: str) -> list[Tension]:
        return [t for t in self.tensions.values() if memory_id in (t.a_id, t.b_id)]

    def versions_of(self, memory: Memory) -> list[Memory]:
        """Every memory with the same key (or belief, when keyless), oldest valid-from first."""
        if memory.key:
            same = self.with_key(memory.scope, memory.key)
        else:
            same = [memory]
        return sorted(same, key=lambda m: (m.valid_from_ms, m.recorded_at_ms, m.id))
