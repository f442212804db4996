"""Identifier-aware tokens and an incremental BM25 index over memory text.

Developers ask about ``camelCase`` names, ``snake_case`` functions, ``src/payments/``
paths, ``pytest -x`` flags and ``3.12`` versions; the tokenizer keeps each identifier
whole *and* splits it into its parts, so both "payments" and "src/payments" match.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

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


class BM25Index:
    """Incremental Okapi BM25 over short documents (memory sentences)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
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
        terms = Counter(tokenize(text))
        self._docs[doc_id] = terms
        n = sum(terms.values())
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
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self._docs:
            return {}
        allow = set(allowed) if allowed is not None else None
        avg = self._total_len / max(1, len(self._docs))
        scores: dict[str, float] = {}
        ceiling = 0.0
        for term in terms:
            idf = self._idf(term)
            ceiling += idf
            for doc_id in self._postings.get(term, ()):
                if allow is not None and doc_id not in allow:
                    continue
                tf = self._docs[doc_id][term]
                norm = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * self._len[doc_id] / avg))
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * norm
        if ceiling <= 0:
            return {}
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        return {doc_id: min(1.0, s / ceiling) for doc_id, s in best}
