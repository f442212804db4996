"""Evidence Recall@k over dialogue ids, by LoCoMo question category."""

from __future__ import annotations

from collections.abc import Sequence

from eval.locomo.data import CATEGORIES
from eval.locomo.runner import SYSTEMS, ConversationResult, QuestionResult

KS = (5, 10, 25)
SCORED = (1, 2, 3, 4)  # category 5 (adversarial) has no answer in the conversation: reported apart


def evidence_recall(ranking: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """Share of the evidence dialogue ids within the first ``k`` of ``ranking``."""
    if not evidence:
        return 0.0
    top = set(ranking[:k])
    return sum(1 for e in set(evidence) if e in top) / len(set(evidence))


def _table(questions: Sequence[QuestionResult]) -> dict[str, object]:
    row: dict[str, object] = {"n": len(questions)}
    for system in SYSTEMS:
        for k in KS:
            vals = [evidence_recall(q.rankings[system], q.evidence, k) for q in questions]
            row[f"{system}_r@{k}"] = sum(vals) / len(vals) if vals else 0.0
    return row


def summarize(results: Sequence[ConversationResult]) -> dict[str, object]:
    """Recall@5/10/25 per system: overall over categories 1-4, per category, category 5 apart."""
    qs = [q for r in results for q in r.questions if q.evidence]
    no_evidence = sum(1 for r in results for q in r.questions if not q.evidence)
    by_cat = {f"{c} {CATEGORIES[c]}": _table([q for q in qs if q.category == c]) for c in (*SCORED, 5)}
    turns = sum(r.turns for r in results)
    secs: dict[str, float] = {}
    for r in results:
        for key, v in r.seconds.items():
            secs[key] = secs.get(key, 0.0) + v
    n_q = sum(len(r.questions) for r in results)
    return {
        "conversations": len(results),
        "turns": turns,
        "questions": n_q,
        "questions_without_evidence": no_evidence,
        "overall_1_4": _table([q for q in qs if q.category in SCORED]),
        "by_category": by_cat,
        "memories": sum(r.memories for r in results),
        "servable_memories": sum(r.servable_memories for r in results),
        "turns_cited_by_memories": sum(r.cited_turns for r in results),
        "evidence_covered": _coverage(results),
        "seconds": {k: round(v, 2) for k, v in secs.items()},
        "recall_ms_mean": round(1000 * secs.get("recall", 0.0) / max(1, n_q), 2),
        "observe_turns_per_s": round(turns / secs["observe"], 1) if secs.get("observe") else None,
        "drain_turns_per_s": round(turns / secs["drain"], 1) if secs.get("drain") else None,
    }


def _coverage(results: Sequence[ConversationResult]) -> float:
    """Share of evidence ids (categories 1-4) cited by any memory at all: the ceiling of any recall."""
    hit = tot = 0
    for r in results:
        cited = set(r.cited)
        for q in r.questions:
            if q.category in SCORED:
                tot += len(set(q.evidence))
                hit += len(set(q.evidence) & cited)
    return hit / tot if tot else 0.0
