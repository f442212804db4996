"""The upstream metric definitions of the opencode-memory retrieval benchmark, in pure Python.

Source: cioffiAI/opencode-memory ``bench/lib.ts`` (``runScenario``, ``computeMetrics``,
``wilson95``, ``recallByTag``) at commit 872ad98e (the v1.6 harness; commit 6c1ca404,
from which dev.json was taken, has the same Recall@5, MRR, macro precision and FP rate).

- Recall@K: share of the expected memories found in the top K of the FULL ranking
  (before any relevance gate), averaged over positive scenarios.
- MRR: 1 / rank of the first expected memory in the full ranking (0 when absent).
- Recall@1: the comment upstream says "share of positives whose FIRST ranked candidate
  is expected"; that is ``recall_at_1``. The code upstream tests
  ``retrieved[0] == expected[0]``, where ``retrieved`` is the expected memories found in
  the top 5 in rank order, so a single-expected positive at rank 2-5 also counts; that
  literal reading is reported as ``recall_at_1_upstream_code``.
- Surface precision (positives only): expected / all entries of the RELEVANCE tier; the
  always-on core slot is excluded from both sides. Macro: mean per positive scenario,
  an empty tier counting 0. Micro: pooled entries.
- False abstention: positives whose relevance tier surfaced none of the expected memories.
- FP rate: negatives (no expected memory) whose relevance tier surfaced anything; core-slot
  entries never count as false positives.
- Overhead: mean tokens (chars / 4) of what is injected, over all scenarios.
- Wilson 95% score intervals (z = 1.959963984540054) for Recall@5 (positives with every
  expected memory in the top 5), micro precision, FP rate and abstention rate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

Z95 = 1.959963984540054


class ScenarioResult(BaseModel):
    """What one scenario produced: the full ranking and the injected block."""

    model_config = ConfigDict(frozen=True)
    id: str
    category: str
    section: str = ""
    tags: tuple[str, ...] = ()
    negative: bool
    expected: tuple[str, ...]
    ranking: tuple[str, ...]
    surfaced: tuple[str, ...] = ()
    core: tuple[str, ...] = ()
    contested_marked: tuple[str, ...] = ()
    overhead_tokens: float = 0.0
    memory_chars: int = 0
    query: str = ""
    texts: dict[str, str] = {}
    terms: dict[str, dict[str, float]] = {}  # score terms of each ranked memory (cos, lex, gate, score)


def wilson95(successes: int, n: int) -> tuple[float, float]:
    """Wilson score interval at 95%; (0, 0) for an empty sample, as upstream."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + Z95 * Z95 / n
    center = (p + Z95 * Z95 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / denom
    return (max(0.0, center - half), min(1.0, center + half))


def recall_at(ranking: Sequence[str], expected: Sequence[str], k: int) -> float:
    """Share of ``expected`` within the first ``k`` of ``ranking``."""
    if not expected:
        return 0.0
    top = set(ranking[:k])
    return len([e for e in dict.fromkeys(expected) if e in top]) / len(set(expected))


def rank_first(ranking: Sequence[str], expected: Sequence[str]) -> int:
    """1-based rank of the first expected memory in the full ranking; 0 when absent."""
    for i, mid in enumerate(ranking):
        if mid in expected:
            return i + 1
    return 0


def _mean(xs: Iterable[float]) -> float:
    vals = list(xs)
    return sum(vals) / len(vals) if vals else 0.0


def _good(r: ScenarioResult) -> int:
    return len([i for i in r.surfaced if i in r.expected])


def _falsely_surfaced(r: ScenarioResult) -> list[str]:
    return [i for i in r.surfaced if i not in r.expected]


def summarize(results: Sequence[ScenarioResult]) -> dict[str, object]:
    """The headline metrics of a set of scenario results (rates as fractions)."""
    pos = [r for r in results if not r.negative]
    neg = [r for r in results if r.negative]
    r5 = [recall_at(r.ranking, r.expected, 5) for r in pos]
    first = [rank_first(r.ranking, r.expected) for r in pos]

    def code_r1(r: ScenarioResult) -> bool:
        retrieved = [i for i in dict.fromkeys(r.ranking[:5]) if i in r.expected]
        return bool(retrieved) and retrieved[0] == r.expected[0]

    numer = sum(_good(r) for r in pos)
    denom = sum(len(r.surfaced) for r in pos)
    false_abst = [r.id for r in pos if _good(r) == 0]
    fp = [r.id for r in neg if _falsely_surfaced(r)]
    full_r5 = sum(1 for r in pos if recall_at(r.ranking, r.expected, 5) == 1.0)
    core_only = sum(1 for r in neg if not _falsely_surfaced(r) and r.core)
    return {
        "recall_at_1": len([f for f in first if f == 1]) / len(pos) if pos else 0.0,
        "recall_at_5": _mean(r5),
        "mrr": _mean(1 / f if f else 0.0 for f in first),
        "precision_macro": _mean(_good(r) / max(1, len(r.surfaced)) for r in pos),
        "precision_micro": numer / denom if denom else 0.0,
        "fpr": len(fp) / len(neg) if neg else 0.0,
        "false_abstention": len(false_abst) / len(pos) if pos else 0.0,
        "overhead_tokens": _mean(r.overhead_tokens for r in results),
        "n_positive": len(pos),
        "n_negative": len(neg),
        "ci95": {
            "recall_at_5": wilson95(full_r5, len(pos)),
            "precision_micro": wilson95(numer, denom),
            "fpr": wilson95(len(fp), len(neg)),
            "abstention": wilson95(len(neg) - len(fp), len(neg)),
        },
        "recall_at_1_upstream_code": sum(1 for r in pos if code_r1(r)) / len(pos) if pos else 0.0,
        "recall_at_1_ranking": _mean(recall_at(r.ranking, r.expected, 1) for r in pos),
        "precision_counts": {"numer": numer, "denom": denom},
        "false_abstention_scenarios": false_abst,
        "false_positive_scenarios": fp,
        "memory_level_false_positives": sum(len(_falsely_surfaced(r)) for r in neg),
        "negative_outcomes": {"abstained": len(neg) - len(fp) - core_only, "core_only": core_only,
                              "non_core_surfaced": len(fp)},
        "overhead_tokens_memory_text": _mean(r.memory_chars / 4 for r in results),
        "avg_relevance_tier": _mean(len(r.surfaced) for r in results),
        "avg_surfaced": _mean(len(r.surfaced) + len(r.core) for r in results),
    }


def by_category(results: Sequence[ScenarioResult]) -> dict[str, dict[str, object]]:
    """Per category: negatives by ``negative_category``, positives by upstream section."""
    groups: dict[str, list[ScenarioResult]] = {}
    for r in results:
        groups.setdefault(r.category, []).append(r)
    out: dict[str, dict[str, object]] = {}
    for cat, rows in groups.items():
        if rows[0].negative:
            fp = sum(1 for r in rows if _falsely_surfaced(r))
            out[cat] = {"polarity": "negative", "n": len(rows), "fpr": fp / len(rows),
                        "fpr_ci95": wilson95(fp, len(rows)),
                        "false_positive_scenarios": [r.id for r in rows if _falsely_surfaced(r)]}
        else:
            s = summarize(rows)
            out[cat] = {"polarity": "positive", "n": len(rows), "recall_at_1": s["recall_at_1"],
                        "recall_at_5": s["recall_at_5"], "mrr": s["mrr"], "precision_macro": s["precision_macro"],
                        "false_abstention": s["false_abstention"],
                        "false_abstention_scenarios": s["false_abstention_scenarios"]}
    return dict(sorted(out.items(), key=lambda kv: (kv[1]["polarity"] == "negative", kv[0])))


def recall_by_tag(results: Sequence[ScenarioResult]) -> dict[str, float]:
    """Recall@5 per scenario tag, positives only (upstream ``recallByTag``)."""
    tags = sorted({t for r in results for t in r.tags})
    out = {}
    for tag in tags:
        rows = [r for r in results if tag in r.tags and not r.negative]
        if rows:
            out[tag] = _mean(recall_at(r.ranking, r.expected, 5) for r in rows)
    return out
