"""The upstream metric math (cioffiAI/opencode-memory bench/lib.ts) on hand-made rankings."""

from __future__ import annotations

import math

import pytest

from eval.peers.metrics import ScenarioResult, by_category, rank_first, recall_at, summarize, wilson95


def pos(sid: str, ranking: tuple[str, ...], expected: tuple[str, ...] = ("m0",), surfaced: tuple[str, ...] = (),
        core: tuple[str, ...] = (), category: str = "keyword") -> ScenarioResult:
    return ScenarioResult(id=sid, category=category, negative=False, expected=expected, ranking=ranking,
                          surfaced=surfaced, core=core)


def neg(sid: str, surfaced: tuple[str, ...] = (), core: tuple[str, ...] = (), category: str = "none") -> ScenarioResult:
    return ScenarioResult(id=sid, category=category, negative=True, expected=(), ranking=("m0", "m1"),
                          surfaced=surfaced, core=core)


def test_recall_at_k_counts_expected_memories_in_the_top_k_of_the_full_ranking() -> None:
    ranking = ("m3", "m1", "m0", "m4", "m5", "m2")
    assert recall_at(ranking, ("m0",), 5) == 1.0
    assert recall_at(ranking, ("m0", "m2"), 5) == 0.5  # m2 is sixth
    assert recall_at(ranking, ("m0", "m2"), 6) == 1.0
    assert recall_at(ranking, ("m0",), 1) == 0.0
    assert recall_at((), ("m0",), 5) == 0.0


def test_mrr_uses_the_rank_of_the_first_expected_memory() -> None:
    assert rank_first(("m1", "m2", "m0"), ("m0", "m2")) == 2
    assert rank_first(("m1",), ("m0",)) == 0
    s = summarize([pos("a", ("m0", "m1")), pos("b", ("m1", "m0")), pos("c", ("m1", "m2"))])
    assert s["mrr"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["recall_at_5"] == pytest.approx(2 / 3)


def test_recall_at_1_documented_versus_upstream_code() -> None:
    # Documented: the first ranked candidate is expected. Upstream's code compares the first
    # expected memory found in the top 5 with expected[0], so rank 2 also counts there.
    s = summarize([pos("a", ("m0", "m1")), pos("b", ("m1", "m0"))])
    assert s["recall_at_1"] == 0.5
    assert s["recall_at_1_upstream_code"] == 1.0


def test_wilson_interval_matches_the_closed_form() -> None:
    assert wilson95(0, 0) == (0.0, 0.0)
    z = 1.959963984540054
    lo, hi = wilson95(38, 38)  # p = 1: lower bound n / (n + z^2)
    assert lo == pytest.approx(38 / (38 + z * z)) and hi == pytest.approx(1.0)
    lo, hi = wilson95(12, 38)
    p, n = 12 / 38, 38
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (lo, hi) == pytest.approx((centre - half, centre + half))
    assert lo < p < hi


def test_core_slot_entries_are_never_false_positives() -> None:
    core_only = neg("core-only", core=("m0",))
    relevance = neg("leak", surfaced=("m1",), core=("m0",))  # positive control: a relevance-tier entry counts
    s = summarize([core_only, relevance, neg("clean")])
    assert s["fpr"] == pytest.approx(1 / 3)
    assert s["false_positive_scenarios"] == ["leak"]
    assert s["negative_outcomes"] == {"abstained": 1, "core_only": 1, "non_core_surfaced": 1}


def test_surface_precision_macro_micro_and_false_abstention() -> None:
    a = pos("a", ("m0", "m1"), surfaced=("m0", "m1"), core=("m2",))  # 1/2, core slot not counted
    b = pos("b", ("m0",), surfaced=("m0",))  # 1/1
    c = pos("c", ("m0",), surfaced=())  # empty tier: 0 in macro, false abstention
    s = summarize([a, b, c])
    assert s["precision_macro"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert s["precision_micro"] == pytest.approx(2 / 3)
    assert s["false_abstention"] == pytest.approx(1 / 3)
    assert s["false_abstention_scenarios"] == ["c"]


def test_by_category_splits_positive_sections_from_negative_categories() -> None:
    cats = by_category([pos("a", ("m0",), surfaced=("m0",), category="keyword"),
                        neg("n1", surfaced=("m0",), category="hard-negative"), neg("n2", category="hard-negative")])
    assert cats["keyword"]["polarity"] == "positive" and cats["keyword"]["recall_at_5"] == 1.0
    assert cats["hard-negative"]["fpr"] == 0.5 and cats["hard-negative"]["false_positive_scenarios"] == ["n1"]
