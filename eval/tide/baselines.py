"""Reference systems that read a stream's raw history directly (not through dynmem).

- ``none``: the empty block (lower reference of NTU).
- ``oracle``: exactly the gold sentence(s) (upper reference of NTU).
- ``recency``: the user text of the most recent turns of the probe's project that fit the
  budget, newest first.
- ``bm25``: Okapi BM25 over the user text of the project's turns; the best-scoring turns
  that fit the budget.

Both raw-log baselines honour ``forget`` the way a log-only system would: turns containing
the forgotten value are dropped from then on. ``no-supersede`` (our engine with supersession
broken) lives in :mod:`eval.tide.systems`, since it runs the real engine.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from eval.tide.generator import Probe, Stream

_WORD = re.compile(r"[a-z0-9][a-z0-9_./:-]*")
_STOP = frozenset("a an and are as at be by do does for from how i in is it of on or our the this to we what "
                  "where which who why with you your".split())


def estimate_tokens(text: str) -> int:
    """Same heuristic as the engine's budgets: about four characters a token."""
    return max(1, math.ceil(len(text) / 4))


def _fit(texts: list[str], budget_tokens: int) -> str:
    """Greedily keep texts, in the order given, while the block stays within the budget."""
    kept: list[str] = []
    used = 0
    for t in texts:
        cost = estimate_tokens(t) + 1
        if used + cost <= budget_tokens:
            kept.append(t)
            used += cost
    return "\n".join(kept)


def history(stream: Stream, project: str) -> list[str]:
    """User text of a project's turns, in order, minus what was forgotten before the end."""
    turns: list[str] = []
    for ev in stream.events:
        if ev.project != project:
            continue
        if ev.kind == "forget":
            turns = [t for t in turns if ev.match.casefold() not in t.casefold()]
        else:
            turns.append(ev.user)
    return turns


def recency_block(stream: Stream, probe: Probe, budget_tokens: int) -> str:
    return _fit(list(reversed(history(stream, probe.project))), budget_tokens)


def _terms(text: str) -> list[str]:
    return [w.strip(".:/-") for w in _WORD.findall(text.casefold()) if w not in _STOP]


def bm25_block(stream: Stream, probe: Probe, budget_tokens: int, k1: float = 1.2, b: float = 0.75) -> str:
    docs = history(stream, probe.project)
    toks = [Counter(_terms(d)) for d in docs]
    n = len(docs)
    avg = sum(sum(t.values()) for t in toks) / n if n else 1.0
    df = Counter(w for t in toks for w in t)
    query = set(_terms(probe.question))

    def score(i: int) -> float:
        tf, length = toks[i], sum(toks[i].values())
        s = 0.0
        for w in query & set(tf):
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            s += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * length / avg))
        return s

    ranked = sorted((i for i in range(n) if score(i) > 0), key=lambda i: (-score(i), -i))
    return _fit([docs[i] for i in ranked], budget_tokens)


def oracle_block(probe: Probe) -> str:
    return probe.oracle


RAW_SYSTEMS = {"recency": recency_block, "bm25": bm25_block}
