"""Identifier-aware tokens and an incremental BM25 index over memory text.

Developers ask about ``camelCase`` names, ``snake_case`` functions, ``src/payments/``
paths, ``pytest -x`` flags and ``3.12`` versions; the tokenizer keeps each identifier
whole *and* splits it into its parts, so both "payments" and "src/payments" match.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

_RAW = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+#-]*")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+(?:\.\d+)*")
_SPLIT = re.compile(r"[_/:@+#-]+|(?<!\d)\.|\.(?!\d)")

STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i
    if in into is it its me my no not of on or our should so than that the their them then
    there these they this to us was we were what when where which who why will with would
    you your now also just any all about again please thanks ok okay yes use using used
    one get got let lets want need""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens: whole identifiers plus their camelCase/snake_case/path parts."""
    out: list[str] = []
    for match in _RAW.finditer(text):
        raw = match.group(0).rstrip(".:-/")
        if not raw:
            continue
        low = raw.lower()
        pieces = [p for chunk in _SPLIT.split(raw) if chunk for p in _PARTS.findall(chunk)]
        if len(pieces) > 1 or (pieces and pieces[0].lower() != low):
            if low not in STOPWORDS:
                out.append(low)
            if "/" in low:  # each path segment too: "src/payments/stripe_client.py" -> "stripe_client.py"
                out.extend(seg for seg in low.split("/") if seg and seg not in out)
            out.extend(p.lower() for p in pieces if p.lower() not in STOPWORDS)
        elif low not in STOPWORDS:
            out.append(low)
    return out


def bm25_normalise(scores: dict[str, float], ceiling: float, limit: int) -> dict[str, float]:
    """The best ``limit`` scores divided by ``ceiling``, ties broken by id (shared by every index)."""
    if ceiling <= 0:
        return {}
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return {doc_id: min(1.0, s / ceiling) for doc_id, s in best}


class _Postings:
    """The documents of one term: slots and term frequencies in growable int32 arrays."""

    __slots__ = ("slots", "tfs", "live", "dead")

    def __init__(self) -> None:
        self.slots = array("i")
        self.tfs = array("i")
        self.live = 0  # document frequency
        self.dead = 0  # entries whose slot was retired (dropped at the next compaction)


class BM25Index:
    """Incremental Okapi BM25 over short documents (memory sentences), held compactly.

    Postings are int32 arrays per term and document lengths one float64 array, so a
    query costs one vectorised pass over the postings of its terms (numpy), and a
    document costs a few bytes per token instead of one ``Counter`` object. Scores are
    the same numbers, in the same order of operations, as the textbook per-document loop
    (``eval/perf/bm25_reference.py`` keeps that loop as the oracle).
    """

    #: Retired slots are dropped once they outnumber the live ones and pass this count.
    renumber_min = 1024

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._terms: list[tuple[str, ...]] = []  # distinct terms of each slot (for removal)
        self._lens = np.zeros(64, dtype=np.float64)
        self._alive = np.zeros(64, dtype=bool)
        self._postings: dict[str, _Postings] = {}
        self._total_len = 0
        self._dead_slots = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def add(self, doc_id: str, text: str) -> None:
        """Index (or re-index) one document."""
        self.add_tokens(doc_id, tokenize(text))

    def add_tokens(self, doc_id: str, tokens: Sequence[str]) -> None:
        """Index one document given as its :func:`tokenize` tokens."""
        if doc_id in self._slot:
            self.remove(doc_id)
        terms = Counter(tokens)
        slot = len(self._ids)
        if slot >= self._lens.size:
            grow = max(64, self._lens.size)
            self._lens = np.concatenate([self._lens, np.zeros(grow, dtype=np.float64)])
            self._alive = np.concatenate([self._alive, np.zeros(grow, dtype=bool)])
        n = sum(terms.values())
        self._ids.append(doc_id)
        self._terms.append(tuple(terms))
        self._slot[doc_id] = slot
        self._lens[slot] = n
        self._alive[slot] = True
        self._total_len += n
        for term, tf in terms.items():
            p = self._postings.get(term)
            if p is None:
                p = self._postings[term] = _Postings()
            p.slots.append(slot)
            p.tfs.append(tf)
            p.live += 1

    def remove(self, doc_id: str) -> None:
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        self._alive[slot] = False
        self._ids[slot] = None
        self._total_len -= int(self._lens[slot])
        for term in self._terms[slot]:
            p = self._postings[term]
            p.live -= 1
            p.dead += 1
            if p.live == 0:
                del self._postings[term]
            elif p.dead > p.live:
                self._compact(p)
        self._terms[slot] = ()
        self._dead_slots += 1
        if self._dead_slots > max(self.renumber_min, len(self._slot)):
            self._renumber()

    def _compact(self, p: _Postings) -> None:
        slots = np.array(p.slots, dtype=np.int32)
        keep = self._alive[slots]
        p.slots = array("i", slots[keep].tobytes())
        p.tfs = array("i", np.array(p.tfs, dtype=np.int32)[keep].tobytes())
        p.dead = 0

    def _renumber(self) -> None:
        """Drop retired slots everywhere (amortised: runs when they outnumber the live ones)."""
        used = len(self._ids)
        alive = self._alive[:used]
        new_of = np.cumsum(alive, dtype=np.int64) - 1  # new slot of each live old slot
        for p in self._postings.values():
            slots = np.array(p.slots, dtype=np.int32)
            keep = alive[slots]
            p.slots = array("i", new_of[slots[keep]].astype(np.int32).tobytes())
            p.tfs = array("i", np.array(p.tfs, dtype=np.int32)[keep].tobytes())
            p.dead = 0
        kept = np.flatnonzero(alive).tolist()
        self._ids = [self._ids[s] for s in kept]
        self._terms = [self._terms[s] for s in kept]
        size = max(64, 2 * len(kept))
        lens = np.zeros(size, dtype=np.float64)
        lens[: len(kept)] = self._lens[kept]
        self._lens = lens
        self._alive = np.zeros(size, dtype=bool)
        self._alive[: len(kept)] = True
        self._slot = {doc: i for i, doc in enumerate(self._ids) if doc is not None}
        self._dead_slots = 0

    def docs_with(self, term: str) -> set[str]:
        """Ids of the documents containing ``term`` (a token as :func:`tokenize` makes it)."""
        p = self._postings.get(term)
        if p is None:
            return set()
        return {doc for slot in p.slots if (doc := self._ids[slot]) is not None}

    def _idf(self, term: str) -> float:
        n = len(self._slot)
        p = self._postings.get(term)
        df = p.live if p is not None else 0
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str, limit: int = 30, allowed: Iterable[str] | None = None) -> dict[str, float]:
        """Return up to ``limit`` doc ids with a normalised score in (0, 1].

        The score is BM25 divided by the best score any document could reach for this
        query (every term present once in a document of average length), so it is
        comparable across queries and bounded.
        """
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self._slot:
            return {}
        mask = self._alive
        if allowed is not None:
            mask = np.zeros_like(self._alive)
            mask[[self._slot[d] for d in set(allowed) if d in self._slot]] = True
        avg = self._total_len / max(1, len(self._slot))
        scores = np.zeros(self._lens.size, dtype=np.float64)
        ceiling = 0.0
        k1, b = self.k1, self.b
        for term in terms:
            idf = self._idf(term)
            ceiling += idf
            p = self._postings.get(term)
            if p is None:
                continue
            slots = np.array(p.slots, dtype=np.int32)
            tf = np.array(p.tfs, dtype=np.float64)
            keep = mask[slots]
            slots, tf = slots[keep], tf[keep]
            # The same operations, in the same order, as the per-document formula.
            norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * self._lens[slots] / avg))
            scores[slots] = scores[slots] + idf * norm
        if ceiling <= 0:
            return {}
        hit = np.flatnonzero(scores)
        if hit.size > limit:
            kth = np.partition(scores[hit], hit.size - limit)[hit.size - limit]
            hit = hit[scores[hit] >= kth]
        top: dict[str, float] = {}
        for slot in hit.tolist():
            doc = self._ids[slot]
            if doc is not None:
                top[doc] = float(scores[slot])
        return bm25_normalise(top, ceiling, limit)
