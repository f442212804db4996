"""eval/peers/heldout.json: loads through the peers loader, right counts, ids and format, nothing from dev."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from eval.peers import run
from eval.peers.build_heldout import build
from eval.peers.scenarios import load_scenarios

HELDOUT = Path(__file__).resolve().parents[3] / "eval" / "peers" / "heldout.json"
DEV = run.DEFAULT_FILE
needs_dev = pytest.mark.skipif(not DEV.exists(), reason="the opencode-memory dev set is not checked out")


def test_heldout_loads_with_the_right_counts_and_ids() -> None:
    scenarios = load_scenarios(HELDOUT)
    assert 100 <= len(scenarios) <= 120
    assert [s.id for s in scenarios] == [f"ho-{i:03d}" for i in range(1, len(scenarios) + 1)]
    neg = [s for s in scenarios if s.negative]
    assert 0.28 <= len(neg) / len(scenarios) <= 0.40
    cats = Counter(s.negative_category for s in neg)
    assert set(cats) >= {"hard-negative", "none", "semantic-distractor", "other-person", "xl-negative",
                         "isolation-negative", "core-only"}
    assert sum(len(s.expected) >= 2 for s in scenarios) >= 3  # multi-expected
    for s in scenarios:
        ids = [m.id for m in s.memories]
        assert ids == [f"m{i}" for i in range(len(ids))], s.id
        assert set(s.expected) <= set(ids), s.id
        assert s.polarity == ("negative" if s.negative else "positive"), s.id
        assert (s.negative_category is None) != s.negative, s.id
        for m in s.memories:
            if m.effective["scope"] == "project":
                assert m.effective["projectID"], s.id
    doc = json.loads(HELDOUT.read_text(encoding="utf-8"))
    assert doc["meta"]["set"] == "heldout"
    assert doc["meta"]["source"] == "written for dynamics-memory without reading the code"
    assert doc["meta"]["count"] == len(scenarios) and doc["meta"]["negatives"] == len(neg)
    assert {s["set"] for s in doc["scenarios"]} == {"heldout"}


def test_file_is_in_sync_with_its_source() -> None:
    assert json.loads(HELDOUT.read_text(encoding="utf-8")) == build()


@needs_dev
def test_same_format_as_dev_and_no_copied_sentence() -> None:
    dev = json.loads(DEV.read_text(encoding="utf-8"))
    held = json.loads(HELDOUT.read_text(encoding="utf-8"))
    dev_keys = {tuple(sorted(s)) for s in dev["scenarios"]}
    assert {tuple(sorted(s)) for s in held["scenarios"]} == dev_keys
    dev_eff = {tuple(sorted(m["effective"])) for s in dev["scenarios"] for m in s["memories"]}
    assert {tuple(sorted(m["effective"])) for s in held["scenarios"] for m in s["memories"]} == dev_eff
    dev_text = {m["text"].lower() for s in dev["scenarios"] for m in s["memories"]}
    dev_query = {s["query"].lower() for s in dev["scenarios"]}
    assert not [m["text"] for s in held["scenarios"] for m in s["memories"] if m["text"].lower() in dev_text]
    assert not [s["query"] for s in held["scenarios"] if s["query"].lower() in dev_query]
