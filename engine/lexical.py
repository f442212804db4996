"""Identifier-aware tokens and an incremental BM25 index over memory text.

Developers ask about ``camelCase`` names, ``snake_case`` functions, ``src/payments/``
paths, ``pytest -x`` flags and ``3.12`` versions; the tokenizer keeps each identifier
whole *and* splits it into its parts, so both "payments" and "src/payments" match.

The BM25 index also folds inflection (``tokenize(text, fold=True)``): a plain prose word adds its
stem (:func:`engine.inflection.stem`) as a marked extra term, so "who runs the releases" reaches
"Release owner: ...". Every token made without folding is still made, with the same postings, and
identifiers, paths, versions and camelCase words are never folded.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from operator import itemgetter

import numpy as np

from engine.inflection import stem

_RAW = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+#-]*")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+(?:\.\d+)*")
_SPLIT = re.compile(r"[_/:@+#-]+|(?<!\d)\.|\.(?!\d)")
_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
#: Marks a stem term: no token has it (``_RAW``), so stems never mix with the words and
#: identifiers the index holds ("run" the word and "~run", the stem of "runs", "running", "run").
STEM_MARK = "~"
# A prose word: letters only, lower-case after an optional capital ("Releases", not "URLs" or "parseId").
_PROSE = re.compile(r"[A-Za-z][a-z]+")

STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i
    if in into is it its me my no not of on or our should so than that the their them then
    there these they this to us was we were what when where which who why will with would
    you your now also just any all about again please thanks ok okay yes use using used
    one get got let lets want need""".split()
)


def whole_words(text: str) -> set[str]:
    """The lower-cased identifiers of ``text`` whole, never their parts (``vuex-persist``, not ``vuex``)."""
    return {w for w in (m.group(0).lower().rstrip(".:-/") for m in _RAW.finditer(text)) if w}


def tokenize(text: str, *, fold: bool = False) -> list[str]:
    """Lower-cased tokens: whole identifiers plus their camelCase/snake_case/path parts.

    With ``fold``, the inflection stems of the prose words follow, marked (``"releases"`` adds
    ``"~releas"``, and so does ``"release"``): the tokens without ``fold`` come first, unchanged,
    so every match made without folding is still made.
    """
    plain, stems = tokenize_with_stems(text, fold)
    return plain + [folded for _, folded in stems]


def tokenize_with_stems(text: str, fold: bool) -> tuple[list[str], list[tuple[str, str]]]:
    """The tokens of ``text``, and with ``fold`` (word, stem term) for each prose word."""
    out: list[str] = []
    stems: list[tuple[str, str]] = []
    for match in _RAW.finditer(text):
        head, segments, labels, parts = _word(match.group(0))
        out.extend(head)
        for seg in segments:  # each path segment too: "src/payments/stripe_client.py" -> "stripe_client.py"
            if seg not in out:
                out.append(seg)
        out.extend(labels)  # counted like the parts: once per word that holds them
        out.extend(parts)
        if fold and (folded := _folded(match.group(0))):
            stems.append((head[0], folded))
    return out, stems


@lru_cache(maxsize=1 << 16)
def _word(matched: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The tokens of one raw word: itself, its path segments (deduplicated by the caller), the labels of a
    dotted name, its parts.

    Words recur across memories, so opening a store tokenizes each distinct word once.
    """
    raw = matched.rstrip(".:-/")
    if not raw:
        return (), (), (), ()
    low = raw.lower()
    head = () if low in STOPWORDS else (low,)
    pieces = [p for chunk in _SPLIT.split(raw) if chunk for p in _PARTS.findall(chunk)]
    if len(pieces) > 1 or (pieces and pieces[0].lower() != low):
        segments = tuple(seg for seg in low.split("/") if seg) if "/" in low else ()
        parts = tuple(p.lower() for p in pieces if p.lower() not in STOPWORDS)
        # The labels of a dotted name that its parts split further ("blobs.eu-north-9.example.org" holds
        # "eu-north-9"), each once; dots between digits (versions) join.
        labels = tuple(dict.fromkeys(label for seg in (segments or (low,)) for label in _DOT.split(seg)
                                     if label and label != seg and label not in parts and label not in STOPWORDS))
        return head, segments, labels, parts
    return head, (), (), ()


@lru_cache(maxsize=1 << 16)
def _folded(matched: str) -> str:
    """The stem term of one raw word when it is prose (``"Releases"`` -> ``"~releas"``), else "".

    Cached like :func:`_word`: a store's words recur. Identifiers keep only their exact tokens:
    a word with a digit, punctuation or a capital after its first letter (``users.py``,
    ``v1.20``, ``parseOrderId``, ``URLs``) is never folded, and neither is a stopword.
    """
    raw = matched.rstrip(".:-/")
    if not _PROSE.fullmatch(raw):
        return ""
    low = raw.lower()
    return "" if low in STOPWORDS else STEM_MARK + stem(low)


def _same_documents(a: _Postings, b: _Postings) -> bool:
    """Whether two terms are held by the same documents, each as often (equal postings, in C)."""
    return a.live == b.live and a.slots == b.slots and a.tfs == b.tfs


def _joined(words: Sequence[str]) -> np.ndarray:
    """Strings as one byte array, newline-separated (ids and tokens never hold a newline)."""
    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)


def _split(blob: np.ndarray) -> list[str]:
    text = blob.tobytes().decode("utf-8")
    return text.split("\n") if text else []


def bm25_normalise(scores: dict[str, float], ceiling: float, limit: int) -> dict[str, float]:
    """The best ``limit`` scores divided by ``ceiling``, ties broken by id (shared by every index)."""
    if ceiling <= 0:
        return {}
    # Best score first, ties by id: sorted by id, then (stable) by score descending, both keys in C.
    best = sorted(sorted(scores.items(), key=itemgetter(0)), key=itemgetter(1), reverse=True)[:limit]
    return {doc_id: min(1.0, s / ceiling) for doc_id, s in best}


class _Postings:
    """The documents of one term: slots and term frequencies in growable int32 arrays."""

    __slots__ = ("slots", "tfs", "live", "dead", "shortest")

    def __init__(self) -> None:
        self.slots = array("i")
        self.tfs = array("i")
        self.live = 0  # document frequency
        self.dead = 0  # entries whose slot was retired (dropped at the next compaction)
        # For each term frequency, the shortest document holding the term that often: the
        # term's largest BM25 part is reached at one of these pairs, so a query knows what the
        # term can add to any document at most (MaxScore). Kept over every entry ever added
        # (removals leave it: still a bound).
        self.shortest: dict[int, int] = {}


class BM25Index:
    """Incremental Okapi BM25 over short documents (memory sentences), held compactly.

    Postings are int32 arrays per term and document lengths one float64 array, so a
    query costs one vectorised pass over the postings of its terms (numpy), and a
    document costs a few bytes per token instead of one ``Counter`` object. Scores are
    the same numbers, in the same order of operations, as the textbook per-document loop
    (``eval/perf/bm25_reference.py`` keeps that loop as the oracle).

    Inflection (``fold``, on by default): a document also holds the stems of its prose words,
    and a query word with a stem scores a document by the better of its own term and its stem
    ("releases" reaches "release"). A word still counts once in the best score a query can reach
    and stems do not count in a document's length, so every document scores at least what it
    scores without folding, and the same when no stem adds to it (``fold=False``: the index as
    it was before stems).
    """

    #: Retired slots are dropped once they outnumber the live ones and pass this count.
    renumber_min = 1024
    #: A term in at least one slot in this many is read by slot rather than by binary search
    #: (:meth:`_scores`): at 100k memories (781 postings and up) a search's mean CPU about 0.65 -> 0.55 ms,
    #: the same at 1k and 10k (300 synthetic queries, eval.perf.synth; issue 15).
    dense_share = 128
    #: Bytes of those slot-indexed term frequencies kept between searches (the most recently read
    #: terms; a term's array is dropped when a document with the term is added or removed, all of
    #: them when the slots grow or are renumbered). A common term recurs across queries: at 100k
    #: memories building its array was most of the cost of reading it (issue 15).
    dense_cache_bytes = 16 << 20

    def __init__(self, k1: float = 1.2, b: float = 0.75, *, fold: bool = True) -> None:
        self.k1 = k1
        self.b = b
        self.fold = fold
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        # distinct terms of each slot (for removal); None: read from the arrays it was loaded from
        self._terms: list[tuple[str, ...] | None] = []
        self._loaded_terms: tuple[np.ndarray, np.ndarray, list[str]] | None = None
        self._lens = np.zeros(64, dtype=np.float64)
        self._alive = np.zeros(64, dtype=bool)
        self._postings: dict[str, _Postings] = {}
        self._total_len = 0
        self._dead_slots = 0
        self._dense: OrderedDict[str, np.ndarray] = OrderedDict()  # term -> tf by slot (_tfs_by_slot)
        self._dense_bytes = 0
        #: Documents the last :meth:`search` scored (with MaxScore, fewer than hold a query term).
        self.last_scored = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def add(self, doc_id: str, text: str) -> None:
        """Index (or re-index) one document."""
        plain, stems = tokenize_with_stems(text, self.fold)
        self.add_tokens(doc_id, plain + [folded for _, folded in stems], length=len(plain))

    def add_tokens(self, doc_id: str, tokens: Sequence[str], length: int | None = None) -> None:
        """Index one document given as its tokens; ``length``: how many of them count in its
        length (the tokens without stems, ``len(tokenize(text))``; default all)."""
        if doc_id in self._slot:
            self.remove(doc_id)
        terms = Counter(tokens)
        slot = len(self._ids)
        if slot >= self._lens.size:
            self._forget_dense()
            grow = max(64, self._lens.size)
            self._lens = np.concatenate([self._lens, np.zeros(grow, dtype=np.float64)])
            self._alive = np.concatenate([self._alive, np.zeros(grow, dtype=bool)])
        n = len(tokens) if length is None else length
        self._ids.append(doc_id)
        self._terms.append(tuple(terms))
        self._slot[doc_id] = slot
        self._lens[slot] = n
        self._alive[slot] = True
        self._total_len += n
        self._forget_dense(terms)
        for term, tf in terms.items():
            p = self._postings.get(term)
            if p is None:
                p = self._postings[term] = _Postings()
            p.slots.append(slot)
            p.tfs.append(tf)
            p.live += 1
            if n < p.shortest.get(tf, n + 1):
                p.shortest[tf] = n

    def add_many(self, docs: Sequence[tuple[str, str]]) -> None:
        """Index many documents (id, text) at once: the same index as ``add`` of each in turn.

        Opening a store of 100k memories fills the index here: the postings are grouped by
        term with numpy instead of appended one token at a time.
        """
        docs = list(docs)
        if self._slot or len({d for d, _ in docs}) != len(docs):
            for doc_id, text in docs:  # not a fresh index, or an id twice: the general path
                self.add(doc_id, text)
            return
        self._forget_dense()
        split = [tokenize_with_stems(text, self.fold) for _, text in docs]
        token_lists = [plain + [folded for _, folded in stems] for plain, stems in split]
        term_of: dict[str, int] = {}
        flat = np.fromiter((term_of.setdefault(t, len(term_of)) for tokens in token_lists for t in tokens),
                           dtype=np.int64)
        counts = np.fromiter((len(tokens) for tokens in token_lists), dtype=np.int64, count=len(docs))
        lens = np.fromiter((len(plain) for plain, _ in split), dtype=np.int64, count=len(docs))  # stems do not count
        slot_of_token = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
        # one (slot, term) pair per distinct term of a document, with its count: sorted by slot, then term
        pairs, tfs = np.unique(slot_of_token * max(1, len(term_of)) + flat, return_counts=True)
        slots, terms = np.divmod(pairs, max(1, len(term_of)))
        by_term = np.argsort(terms, kind="stable")  # each term's postings in slot order, as add() makes them
        t_sorted, s_sorted, f_sorted = terms[by_term], slots[by_term].astype(np.int32), tfs[by_term].astype(np.int32)
        starts: list[int] = []
        ends: list[int] = []
        if t_sorted.size:
            first = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
            starts, ends = first.tolist(), [*first[1:].tolist(), int(t_sorted.size)]
        names = list(term_of)
        for a, b in zip(starts, ends, strict=True):
            p = _Postings()
            p.slots = array("i", s_sorted[a:b].tobytes())
            p.tfs = array("i", f_sorted[a:b].tobytes())
            p.live = b - a
            self._postings[names[int(t_sorted[a])]] = p
        if t_sorted.size:  # the shortest document per (term, tf): sorted by term, tf, length; first of each pair
            doc_len = lens[s_sorted]
            by = np.lexsort((doc_len, f_sorted, t_sorted))
            t_by, f_by, l_by = t_sorted[by], f_sorted[by], doc_len[by]
            first = np.flatnonzero(np.r_[True, (t_by[1:] != t_by[:-1]) | (f_by[1:] != f_by[:-1])])
            for t, f, ln in zip(t_by[first].tolist(), f_by[first].tolist(), l_by[first].tolist(), strict=True):
                self._postings[names[t]].shortest[f] = ln
        # distinct terms of each slot (for removal), in first-occurrence order as Counter keeps them
        self._terms = [tuple(dict.fromkeys(tokens)) for tokens in token_lists]
        ids = [d for d, _ in docs]
        self._ids = list(ids)
        self._slot = {d: i for i, d in enumerate(ids)}
        size = max(64, len(docs))
        self._lens = np.zeros(size, dtype=np.float64)
        self._lens[: len(docs)] = lens
        self._alive = np.zeros(size, dtype=bool)
        self._alive[: len(docs)] = True
        self._total_len = int(lens.sum())

    def remove(self, doc_id: str) -> None:
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        self._alive[slot] = False
        self._ids[slot] = None
        self._total_len -= int(self._lens[slot])
        terms = self._terms_of(slot)
        self._forget_dense(terms)
        for term in terms:
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
        self._forget_dense()
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
        self._terms = [self._terms_of(s) for s in kept]
        self._loaded_terms = None
        size = max(64, 2 * len(kept))
        lens = np.zeros(size, dtype=np.float64)
        lens[: len(kept)] = self._lens[kept]
        self._lens = lens
        self._alive = np.zeros(size, dtype=bool)
        self._alive[: len(kept)] = True
        self._slot = {doc: i for i, doc in enumerate(self._ids) if doc is not None}
        self._dead_slots = 0

    def _terms_of(self, slot: int) -> tuple[str, ...]:
        terms = self._terms[slot]
        if terms is None:
            assert self._loaded_terms is not None  # None entries come only from from_arrays
            off, term_ids, vocab = self._loaded_terms
            terms = tuple(vocab[t] for t in term_ids[off[slot] : off[slot + 1]].tolist())
        return terms

    # -- snapshot (a store opens without tokenizing every memory again) ------------------

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The whole index as flat arrays (for ``np.savez``, no pickle); :meth:`from_arrays` reads them.

        Retired slots are dropped first (the answers do not depend on slot numbers).
        """
        if self._dead_slots:
            self._renumber()
        n = len(self._ids)
        vocab = list(self._postings)
        term_id = {t: i for i, t in enumerate(vocab)}
        plist = [self._postings[t] for t in vocab]
        off = np.zeros(len(vocab) + 1, dtype=np.int64)
        off[1:] = np.cumsum([len(p.slots) for p in plist])
        sh_off = np.zeros(len(vocab) + 1, dtype=np.int64)
        sh_off[1:] = np.cumsum([len(p.shortest) for p in plist])
        doc_terms = [self._terms_of(s) for s in range(n)]
        dt_off = np.zeros(n + 1, dtype=np.int64)
        dt_off[1:] = np.cumsum([len(t) for t in doc_terms])
        return {
            "params": np.array([self.k1, self.b], dtype=np.float64),
            "total_len": np.array([self._total_len], dtype=np.int64),
            "ids": _joined([str(i) for i in self._ids]),
            "lens": self._lens[:n].copy(),
            "vocab": _joined(vocab),
            "off": off,
            "slots": np.frombuffer(b"".join(p.slots.tobytes() for p in plist), dtype=np.int32),
            "tfs": np.frombuffer(b"".join(p.tfs.tobytes() for p in plist), dtype=np.int32),
            "dead": np.array([p.dead for p in plist], dtype=np.int32),
            "sh_off": sh_off,
            "sh_tf": np.array([tf for p in plist for tf in p.shortest], dtype=np.int32),
            "sh_len": np.array([ln for p in plist for ln in p.shortest.values()], dtype=np.int32),
            "dt_off": dt_off,
            "dt_ids": np.array([term_id[t] for terms in doc_terms for t in terms], dtype=np.int32),
        }

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> BM25Index:
        """The index :meth:`to_arrays` wrote: the same answers, without tokenizing any text."""
        k1, b = (float(x) for x in a["params"])
        idx = cls(k1=k1, b=b)
        ids = _split(a["ids"])
        vocab = _split(a["vocab"])
        n = len(ids)
        off, sh_off = a["off"].tolist(), a["sh_off"].tolist()
        slots, tfs = np.ascontiguousarray(a["slots"], dtype=np.int32), np.ascontiguousarray(a["tfs"], dtype=np.int32)
        sh_tf, sh_len, dead = a["sh_tf"].tolist(), a["sh_len"].tolist(), a["dead"].tolist()
        if len(a["lens"]) != n or len(off) != len(vocab) + 1 or off[-1] != slots.size or len(a["dt_off"]) != n + 1:
            raise ValueError("lexical snapshot arrays do not fit together")
        for i, term in enumerate(vocab):
            p = _Postings()
            lo, hi = off[i], off[i + 1]
            p.slots = array("i", slots[lo:hi].tobytes())
            p.tfs = array("i", tfs[lo:hi].tobytes())
            p.dead = dead[i]
            p.live = hi - lo - p.dead
            p.shortest = dict(zip(sh_tf[sh_off[i] : sh_off[i + 1]], sh_len[sh_off[i] : sh_off[i + 1]], strict=True))
            idx._postings[term] = p
        idx._ids = list(ids)
        idx._slot = {d: i for i, d in enumerate(ids)}
        size = max(64, n)
        idx._lens = np.zeros(size, dtype=np.float64)
        idx._lens[:n] = a["lens"]
        idx._alive = np.zeros(size, dtype=bool)
        idx._alive[:n] = True
        idx._total_len = int(a["total_len"][0])
        idx._terms = [None] * n
        idx._loaded_terms = (a["dt_off"], np.ascontiguousarray(a["dt_ids"]), vocab)
        return idx

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

        Top-k by MaxScore, so that common terms do not make a query walk the store: the
        terms with the highest bound on what they can add to a document (rare terms) are
        *essential*; only documents holding one of them are candidates, and every
        candidate gets its exact score (the other terms looked up by binary search in
        their slot-ordered postings). Once the ``limit``-th best candidate scores more
        than the non-essential terms could give any other document together, no other
        document can enter the top: the answer is the exhaustive one, same ids, same
        scores (``eval/perf/bm25_reference.py`` is the oracle).
        """
        plain, stems = tokenize_with_stems(query, self.fold)
        terms = list(dict.fromkeys(plain))
        stem_of = dict(stems)
        if not terms or not self._slot or limit < 1:
            return {}
        mask = self._alive
        if allowed is not None:
            mask = np.zeros_like(self._alive)
            mask[[self._slot[d] for d in set(allowed) if d in self._slot]] = True
        avg = self._total_len / max(1, len(self._slot))
        ceiling = 0.0
        # Each query word: (query position, [(term, idf, postings)] of the word and of its stem, those
        # indexed). The word's own idf alone makes the ceiling: its stem is another way to match it,
        # not another word. A stem held by exactly the documents that hold the word, as often, adds
        # nothing to it (the better of two equal parts): it is left out ("port" and "~port" alike).
        present: list[tuple[int, list[tuple[str, float, _Postings]]]] = []
        for pos, term in enumerate(terms):
            idf = self._idf(term)
            ceiling += idf
            members: list[tuple[str, float, _Postings]] = []
            own = self._postings.get(term)
            if own is not None and len(own.slots):
                members.append((term, idf, own))
            folded = stem_of.get(term, "")
            p = self._postings.get(folded) if folded else None
            if p is not None and len(p.slots) and not (own is not None and _same_documents(own, p)):
                members.append((folded, self._idf(folded), p))
            if members:
                present.append((pos, members))
        if ceiling <= 0 or not present:
            return {}

        # MaxScore over the terms (a word and its stem apart): a document holding none of the terms
        # taken so far gets from each query word at most the best bound of its terms not yet taken.
        terms_by_bound = sorted(((self._bound(p, idf, avg), len(p.slots), pos, k, p)
                                 for pos, members in present for k, (_, idf, p) in enumerate(members)),
                                key=lambda it: (-it[0], it[1], it[2], it[3]))
        # Slots stay int32, the postings' own type: a binary search of int64 candidates in int32
        # postings casts the whole postings list first (most of a search at 100k, issue 15).
        cand = np.zeros(0, dtype=np.int32)
        scores = np.zeros(0, dtype=np.float64)
        seen = np.zeros(mask.size, dtype=bool)  # the candidates so far, as a mask (a set difference sorts)
        for j in range(1, len(terms_by_bound) + 1):
            p = terms_by_bound[j - 1][4]
            slots = np.frombuffer(p.slots, dtype=np.int32)
            at = slots.astype(np.intp)  # numpy indexes by intp: an int32 index is cast again at every use
            fresh = mask[at] & ~seen[at]
            new = slots[fresh]
            if new.size:  # every candidate is scored once, on all the query's terms
                seen[at[fresh]] = True
                cand = np.concatenate([cand, new])
                scores = np.concatenate([scores, self._scores(new, present, avg)])
            if j == len(terms_by_bound):
                break
            left: dict[int, float] = {}
            for bound, _, pos, _, _ in terms_by_bound[j:]:
                left[pos] = max(left.get(pos, 0.0), bound)
            rest = sum(left.values())
            if cand.size >= limit:
                kth = np.partition(scores, cand.size - limit)[cand.size - limit]
                if kth > rest:
                    break  # no document outside the candidates can reach the top `limit`
        self.last_scored = int(cand.size)
        if cand.size == 0:
            return {}
        if cand.size > limit:
            kth = np.partition(scores, cand.size - limit)[cand.size - limit]
            keep = scores >= kth
            cand, scores = cand[keep], scores[keep]
        top: dict[str, float] = {}
        for slot, score in zip(cand.tolist(), scores.tolist(), strict=True):
            doc = self._ids[slot]
            if doc is not None and score != 0:
                top[doc] = score
        return bm25_normalise(top, ceiling, limit)

    def _bound(self, p: _Postings, idf: float, avg: float) -> float:
        """What one term adds to any document at most, a hair up against rounding (MaxScore):
        its largest BM25 part is reached at one of its (tf, shortest length) pairs."""
        k1, b = self.k1, self.b
        return idf * max(tf * (k1 + 1) / (tf + k1 * (1 - b + b * n / avg)) for tf, n in p.shortest.items()) * (1 + 1e-9)

    def _scores(self, cand: np.ndarray, present: Sequence[tuple[int, Sequence[tuple[str, float, _Postings]]]],
                avg: float) -> np.ndarray:
        """Exact BM25 of the candidate slots: each term's part found by binary search in its
        postings, a word's part the better of its own and its stem's, added in query order (the
        same additions, in the same order, as the loop).

        A term with many postings is read from a slot-indexed array of its term frequencies instead
        (:meth:`_tfs_by_slot`): the same numbers, without a binary search of thousands of candidates
        in tens of thousands of postings (issue 15).
        """
        k1, b = self.k1, self.b
        # The length part of the formula's denominator, per candidate: the same operations, in the
        # same order, as the per-document formula (k1 * (1 - b + b * len / avg)), done once.
        at_cand = cand.astype(np.intp)  # the candidates as an index (``cand`` stays int32 for the binary search)
        length_part = k1 * (1 - b + b * self._lens[at_cand] / avg)
        scores = np.zeros(cand.size, dtype=np.float64)
        for _, members in present:
            part = np.zeros(cand.size, dtype=np.float64)
            for term, idf, p in members:
                slots = np.frombuffer(p.slots, dtype=np.int32)
                if slots.size * self.dense_share >= self._lens.size:
                    # Every candidate at once, tf 0 where the term is absent: its part is then exactly
                    # 0.0 (0 * (k1 + 1) / (0 + a positive length part)), and the better of 0.0 and a
                    # part (never negative) is that part; no mask to gather and scatter.
                    tf = self._tfs_by_slot(term, p)[at_cand].astype(np.float64)
                    norm = tf * (k1 + 1)
                    norm /= tf + length_part
                    norm *= idf  # idf * norm: a product is the same either way round
                    np.maximum(part, norm, out=part)
                    continue
                at = np.searchsorted(slots, cand)
                at_ok = np.minimum(at, slots.size - 1)
                has = slots[at_ok] == cand
                if not has.any():
                    continue
                tf = np.frombuffer(p.tfs, dtype=np.int32)[at_ok[has]].astype(np.float64)
                # The same operations, in the same order, as the per-document formula.
                norm = tf * (k1 + 1) / (tf + length_part[has])
                part[has] = np.maximum(part[has], idf * norm)
            scores = scores + part  # + 0.0 where the word is absent: the loop's sum, bit for bit
        return scores

    def _tfs_by_slot(self, term: str, p: _Postings) -> np.ndarray:
        """The term frequency of ``term`` in every slot (0 where absent), kept for the next searches
        within ``dense_cache_bytes``, the most recently read first (``p``: the term's postings)."""
        by_slot = self._dense.get(term)
        if by_slot is not None:
            self._dense.move_to_end(term)
            return by_slot
        tfs = np.frombuffer(p.tfs, dtype=np.int32)
        # The smallest unsigned type that holds the term's counts (a byte, nearly always): the same numbers.
        by_slot = np.zeros(self._lens.size, dtype=np.min_scalar_type(int(tfs.max())))
        by_slot[np.frombuffer(p.slots, dtype=np.int32)] = tfs  # a slot is in a postings list once
        self._dense[term] = by_slot
        self._dense_bytes += by_slot.nbytes
        while self._dense_bytes > self.dense_cache_bytes and len(self._dense) > 1:
            self._dense_bytes -= self._dense.popitem(last=False)[1].nbytes
        return by_slot

    def _forget_dense(self, terms: Iterable[str] | None = None) -> None:
        """Drop the kept slot-indexed arrays of ``terms`` (their postings change), or all of them."""
        if terms is None:
            self._dense.clear()
            self._dense_bytes = 0
            return
        for term in terms:
            by_slot = self._dense.pop(term, None)
            if by_slot is not None:
                self._dense_bytes -= by_slot.nbytes
