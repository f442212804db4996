"""The textbook per-document BM25 loop that ``engine.lexical.BM25Index`` replaced: the oracle.

Kept verbatim (dict of ``Counter`` per document, postings as sets) so tests can check the
compact index returns the same ids with the same scores; since inflection folding it indexes the
same terms (stems too) and scores a query word by the better of the word and its stem, as the index does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from engine.lexical import tokenize_with_stems


class ReferenceBM25:
    """Incremental Okapi BM25 over short documents (memory sentences)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, *, fold: bool = True) -> None:
        self.k1 = k1
        self.b = b
        self.fold = fold  # inflection stems, as BM25Index indexes and scores them
        self._docs: dict[str, Counter[str]] = {}
        self._len: dict[str, int] = {}
        self._postings: dict[str, set[str]] = {}
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def add(self, doc_id: str, text: str) -> None:
        """Index (or re-index) one document."""
        if doc_id in self._docs:
            self.remove(doc_id)
        plain, stems = tokenize_with_stems(text, self.fold)
        terms = Counter(plain + [folded for _, folded in stems])
        self._docs[doc_id] = terms
        n = len(plain)  # stems do not count in a document's length
        self._len[doc_id] = n
        self._total_len += n
        for term in terms:
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: str) -> None:
        terms = self._docs.pop(doc_id, None)
        if terms is None:
            return
        self._total_len -= self._len.pop(doc_id)
        for term in terms:
            ids = self._postings.get(term)
            if ids is not None:
                ids.discard(doc_id)
                if not ids:
                    del self._postings[term]

    def docs_with(self, term: str) -> set[str]:
        """Ids of the documents containing ``term`` (a token as :func:`tokenize` makes it)."""
        return set(self._postings.get(term, ()))

    def _idf(self, term: str) -> float:
        n = len(self._docs)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str, limit: int = 30, allowed: Iterable[str] | None = None) -> dict[str, float]:
        """Return up to ``limit`` doc ids with a normalised score in (0, 1].

        The score is BM25 divided by the best score any document could reach for this
        query (every term present once in a document of average length), so it is
        comparable across queries and bounded.
        """
        plain, stems = tokenize_with_stems(query, self.fold)
        terms = list(dict.fromkeys(plain))
        stem_of = dict(stems)
        if not terms or not self._docs:
            return {}
        allow = set(allowed) if allowed is not None else None
        avg = self._total_len / max(1, len(self._docs))
        scores: dict[str, float] = {}
        ceiling = 0.0
        for term in terms:
            idf = self._idf(term)
            ceiling += idf  # a word counts once; its stem is another way to match it
            parts: dict[str, float] = {}
            for t in (term, stem_of.get(term, "")):
                for doc_id in self._postings.get(t, ()) if t else ():
                    if allow is not None and doc_id not in allow:
                        continue
                    tf = self._docs[doc_id][t]
                    norm = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self._len[doc_id] / avg))
                    part = (idf if t == term else self._idf(t)) * norm
                    parts[doc_id] = max(parts.get(doc_id, 0.0), part)  # the better of the word and its stem
            for doc_id, part in parts.items():
                scores[doc_id] = scores.get(doc_id, 0.0) + part
        if ceiling <= 0:
            return {}
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return {doc_id: min(1.0, s / ceiling) for doc_id, s in best}
