"""MemoryTable: the in-memory view of one engine's memories, with its lookups.

The EngineActor loads it from ``memory.sqlite`` at start and applies every committed
``Effects`` to it, so lookups on the hot path never touch the disk.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import get_origin

from engine.effects import Effects
from engine.keys import normalize_belief, normalize_key
from engine.lexical import BM25Index
from engine.models import SERVABLE_STATES, Candidate, Memory, Tension, Tier


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


#: The fields of a memory record, in ``Memory``'s order (a record is a tuple of their values).
FIELDS: tuple[str, ...] = tuple(Memory.model_fields)
_FIELD_SET = frozenset(FIELDS)
_I_SCOPE, _I_FP, _I_KEY, _I_BELIEF = (FIELDS.index(f) for f in ("scope", "fingerprint", "key", "belief"))
_I_STATE, _I_TIER, _I_PURGED, _I_EXPIRES = (FIELDS.index(f) for f in ("state", "tier", "purged", "expires_at_ms"))
_I_ID, _I_TEXT, _I_VALID_FROM = (FIELDS.index(f) for f in ("id", "text", "valid_from_ms"))
_TUPLE_FIELDS = tuple(f for f, info in Memory.model_fields.items() if get_origin(info.annotation) is tuple)
_new = object.__new__
_set = object.__setattr__

# Every decoded memory shares one "fields set" (all fields): nothing adds to the set of a frozen
# model, and ``model_copy`` copies it before adding. A set of 30 names is a 1 KiB table: built per
# decode it was a sixth of a decode at 100k memories and 4 MiB of the decoded cache (issue 15).
_ALL_SET: set[str] = set(_FIELD_SET)

#: Memory objects kept decoded (the most recently used); every other memory is a compact record.
DECODED_CACHE = 4096


_values = itemgetter(*FIELDS)


def record_of(m: Memory) -> tuple[object, ...]:
    """A memory as a plain tuple of its field values (``FIELDS`` order): a fraction of the object's size."""
    rec: tuple[object, ...] = _values(m.__dict__)
    return rec


def from_record(rec: tuple[object, ...]) -> Memory:
    """The ``Memory`` of a record made by :func:`record_of` (or read from a store that validated it).

    Builds the frozen model without validating again (the values were validated when the
    memory was made), as ``model_construct`` would with every field set, in a fifth of its time.
    """
    m = _new(Memory)
    values = dict(zip(FIELDS, rec, strict=True))
    for name in _TUPLE_FIELDS:
        text = values[name]
        if isinstance(text, str):  # a stored record keeps its tuples as JSON text until used
            values[name] = tuple(json.loads(text))
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", _ALL_SET)
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


def _servable(rec: tuple[object, ...]) -> bool:
    return rec[_I_STATE] in SERVABLE_STATES


def _add(index: dict[tuple[str, str], tuple[str, ...]], key: tuple[str, str], mid: str) -> None:
    ids = index.get(key, ())
    if mid not in ids:
        index[key] = (*ids, mid)


def _discard(index: dict[tuple[str, str], tuple[str, ...]], key: tuple[str, str], mid: str) -> None:
    ids = index.get(key)
    if ids is not None and mid in ids:
        rest = tuple(i for i in ids if i != mid)
        if rest:
            index[key] = rest
        else:
            del index[key]


class MemoryTable:
    """Memories by id, fingerprint, key and belief, plus a BM25 index of servable text.

    Memories are held as compact records (tuples of their field values); ``get`` and
    iteration hand out ``Memory`` objects, decoded on demand and kept for the most
    recently used ``DECODED_CACHE`` ids, so a store of 100k memories costs records, not
    100k pydantic objects (eval/results/perf.md).
    """

    def __init__(self, memories: Iterable[Memory] = (), tensions: Iterable[Tension] = ()) -> None:
        self._rows: dict[str, tuple[object, ...]] = {}
        self._decoded: OrderedDict[str, Memory] = OrderedDict()
        self._by_fp: dict[tuple[str, str], tuple[str, ...]] = {}
        self._by_key: dict[tuple[str, str], tuple[str, ...]] = {}
        self._by_belief: dict[tuple[str, str], tuple[str, ...]] = {}
        self.lexical = BM25Index()
        self.tensions: dict[str, Tension] = {}  # open ones only; change them through put_tension
        self._tensions_of: dict[str, set[str]] = {}  # memory id -> ids of its open tensions
        self._tension_seq: dict[str, int] = {}  # open tension id -> its place in ``tensions``' order
        self._tension_count = itertools.count()
        self._always_on: set[str] = set()  # servable core/pinned memories (kept so recall never scans)
        self._expiring: set[str] = set()  # servable memories with a time to live
        for m in memories:
            self.put(m)
        for t in tensions:
            self.put_tension(t)

    @classmethod
    def from_records(cls, records: Iterable[tuple[object, ...]], tensions: Iterable[Tension] = (),
                     lexical: BM25Index | None = None) -> MemoryTable:
        """A table of many memories at once, given as records (``FIELDS`` order, typed values).

        The same table as ``MemoryTable([from_record(r) for r in records], tensions)``; the
        lexical index is filled in one pass (``BM25Index.add_many``), or is ``lexical`` when
        given and it holds exactly the servable texts' ids (a snapshot of the same content).
        """
        table = cls()
        texts: list[tuple[str, str]] = []
        for rec in records:
            mid = str(rec[_I_ID])
            if mid in table._rows:
                table._remove_record(mid, table._rows[mid])
                texts = [(i, t) for i, t in texts if i != mid]
            table._rows[mid] = rec
            table._index_record(mid, rec)
            if _servable(rec) and not rec[_I_PURGED]:
                texts.append((mid, str(rec[_I_TEXT])))
        if lexical is not None and len(lexical) == len(texts) and all(i in lexical for i, _ in texts):
            table.lexical = lexical
        else:
            table.lexical.add_many(texts)
        for t in tensions:
            table.put_tension(t)
        return table

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Memory]:
        """Every memory, in insertion order (a walk decodes them without filling the cache)."""
        for mid, rec in list(self._rows.items()):
            m = self._decoded.get(mid)
            yield m if m is not None else from_record(rec)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._rows

    def get(self, memory_id: str) -> Memory | None:
        m = self._decoded.get(memory_id)
        if m is not None:
            self._decoded.move_to_end(memory_id)
            return m
        rec = self._rows.get(memory_id)
        if rec is None:
            return None
        m = from_record(rec)
        self._remember(memory_id, m)
        return m

    def _remember(self, memory_id: str, m: Memory) -> None:
        self._decoded[memory_id] = m
        if len(self._decoded) > DECODED_CACHE:
            self._decoded.popitem(last=False)

    def put(self, m: Memory) -> None:
        old = self._rows.get(m.id)
        rec = record_of(m)
        if old is not None:
            self._unindex(m.id, old)
        self._rows[m.id] = rec
        self._remember(m.id, m)
        self._index_record(m.id, rec)
        if m.servable and not m.purged:
            if old is None or old[_I_TEXT] != m.text or m.id not in self.lexical:  # credit and moves keep the text
                self.lexical.add(m.id, m.text)
        else:
            self.lexical.remove(m.id)

    def _index_record(self, mid: str, rec: tuple[object, ...]) -> None:
        scope = str(rec[_I_SCOPE])
        _add(self._by_fp, (scope, str(rec[_I_FP])), mid)
        if rec[_I_KEY]:
            _add(self._by_key, (scope, normalize_key(str(rec[_I_KEY]))), mid)
        if rec[_I_BELIEF]:
            _add(self._by_belief, (scope, normalize_belief(str(rec[_I_BELIEF]))), mid)
        live = _servable(rec) and not rec[_I_PURGED]
        if live and rec[_I_TIER] in (Tier.CORE, Tier.PINNED):
            self._always_on.add(mid)
        else:
            self._always_on.discard(mid)
        if _servable(rec) and rec[_I_EXPIRES] is not None:
            self._expiring.add(mid)
        else:
            self._expiring.discard(mid)

    def _unindex(self, mid: str, rec: tuple[object, ...]) -> None:
        scope = str(rec[_I_SCOPE])
        _discard(self._by_fp, (scope, str(rec[_I_FP])), mid)
        if rec[_I_KEY]:
            _discard(self._by_key, (scope, normalize_key(str(rec[_I_KEY]))), mid)
        if rec[_I_BELIEF]:
            _discard(self._by_belief, (scope, normalize_belief(str(rec[_I_BELIEF]))), mid)

    def _remove_record(self, mid: str, rec: tuple[object, ...]) -> None:
        self._unindex(mid, rec)
        self._always_on.discard(mid)
        self._expiring.discard(mid)
        self._decoded.pop(mid, None)

    def put_tension(self, t: Tension) -> None:
        old = self.tensions.get(t.id)
        if old is not None and (t.status != "open" or (old.a_id, old.b_id) != (t.a_id, t.b_id)):
            for mid in (old.a_id, old.b_id):
                ids = self._tensions_of.get(mid)
                if ids is not None:
                    ids.discard(old.id)
                    if not ids:
                        del self._tensions_of[mid]
        if t.status == "open":
            self.tensions[t.id] = t  # an open one keeps its place in the order
            if t.id not in self._tension_seq:
                self._tension_seq[t.id] = next(self._tension_count)
            for mid in (t.a_id, t.b_id):
                self._tensions_of.setdefault(mid, set()).add(t.id)
        elif self.tensions.pop(t.id, None) is not None:
            del self._tension_seq[t.id]

    def apply(self, effects: Effects) -> None:
        """Mirror a committed ``Effects`` in memory."""
        for m in effects.memories:
            self.put(m)
        for t in effects.tensions:
            self.put_tension(t)

    def _memories(self, ids: Iterable[str]) -> list[Memory]:
        return [m for i in ids if (m := self.get(i)) is not None]

    def with_fingerprint(self, scope: str, fp: str) -> list[Memory]:
        return sorted(self._memories(self._by_fp.get((scope, fp), ())), key=lambda m: m.id)

    def with_key(self, scope: str, key: str) -> list[Memory]:
        ids = self._by_key.get((scope, normalize_key(key)), ())
        return sorted(self._memories(ids), key=lambda m: m.id)

    def with_belief(self, scope: str, belief: str) -> list[Memory]:
        ids = self._by_belief.get((scope, normalize_belief(belief)), ())
        return sorted(self._memories(ids), key=lambda m: m.id)

    def keys(self, scope: str) -> list[str]:
        """The normalised keys that memories of ``scope`` carry, sorted."""
        return sorted(k for (s, k) in self._by_key if s == scope)

    def always_on(self) -> list[Memory]:
        """Servable core and pinned memories (the always-on slots)."""
        return self._memories(sorted(self._always_on))

    def expiring(self) -> list[Memory]:
        """Servable memories that have a time to live (the only ones ``expire_due`` can retire), in insertion order."""
        if not self._expiring:
            return []
        return self._memories([i for i in self._rows if i in self._expiring])

    def raw_keys(self, scope: str) -> set[str]:
        """The keys (as stored) of the memories of ``scope`` that have one."""
        return {str(self._rows[i][_I_KEY]) for (s, _), ids in self._by_key.items() if s == scope for i in ids}

    def valid_from_at_or_before(self, ms: int) -> set[str]:
        """Ids of the memories whose validity starts at or before ``ms``."""
        return {i for i, r in self._rows.items() if int(r[_I_VALID_FROM]) <= ms}  # type: ignore[call-overload]

    def servable_ids(self, *, with_purged: bool = False) -> list[str]:
        """Ids of the servable memories (not purged ones, unless asked), in insertion order."""
        return [i for i, r in self._rows.items() if _servable(r) and (with_purged or not r[_I_PURGED])]

    def count_by(self, field: str, *, servable_only: bool = False) -> dict[str, int]:
        """How many memories have each value of ``field`` (an enum field: counted by its value)."""
        at = FIELDS.index(field)
        out: Counter[str] = Counter()
        for r in self._rows.values():
            if not servable_only or _servable(r):
                v = r[at]
                out[str(getattr(v, "value", v))] += 1
        return dict(out)

    def open_tensions_of(self, memory_id: str) -> list[Tension]:
        """The open tensions that ``memory_id`` is a side of, oldest first (an index: a recall
        asks this of each contested candidate, and a store may hold thousands of tensions)."""
        ids = self._tensions_of.get(memory_id)
        if not ids:
            return []
        return [self.tensions[i] for i in sorted(ids, key=self._tension_seq.__getitem__)]

    def versions_of(self, memory: Memory) -> list[Memory]:
        """Every memory with the same key (or belief, when keyless), oldest valid-from first."""
        if memory.key:
            same = self.with_key(memory.scope, memory.key)
        else:
            same = [memory]
        return sorted(same, key=lambda m: (m.valid_from_ms, m.recorded_at_ms, m.id))
