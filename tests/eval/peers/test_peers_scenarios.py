"""Scenario fields mapped onto our memory model, checked through the real pipeline."""

from __future__ import annotations

import argparse
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from actors.config import load_settings
from engine.models import GLOBAL_SCOPE, Tier, TrustState
from eval.peers import run
from eval.peers.runner import NOW_MS, run_scenario, run_scenarios
from eval.peers.scenarios import Scenario, parse_scenario, to_memory

DEV = run.DEFAULT_FILE
needs_dev = pytest.mark.skipif(not DEV.exists(), reason="the opencode-memory dev set is not checked out")


def mem(i: int, text: str, **eff: Any) -> dict[str, Any]:
    category = eff.pop("category", "status")
    base = {"category": category, "tier": "core" if category == "preferences" else "archival", "weight": 2,
            "scope": "global", "projectID": None, "status": "ACTIVE", "lastSeenAgoDays": 0}
    return {"id": f"m{i}", "text": text, "effective": {**base, **eff}}


def scenario(memories: list[dict[str, Any]], query: str, expected: list[str] | str, directory: str | None = None) -> Scenario:
    return parse_scenario({"id": "t", "section": "test", "tags": ["test"], "memories": memories, "query": query,
                           "directory": directory, "expected": expected,
                           "polarity": "negative" if expected == "none" else "positive",
                           "negative_category": "test-negative" if expected == "none" else None})


def test_fields_map_to_scope_tier_state_and_times() -> None:
    s = load_settings()
    core = to_memory(parse_scenario({"id": "x", "memories": [mem(0, "a", category="preferences", lastSeenAgoDays=3)],
                                     "query": "q", "expected": ["m0"]}).memories[0], now_ms=NOW_MS, settings=s)
    assert core.tier == Tier.CORE and core.scope == GLOBAL_SCOPE and core.kind.value == "preference"
    assert core.last_evidence_ms == core.valid_from_ms == NOW_MS - 3 * 86_400_000
    other = scenario([mem(0, "b", scope="project", projectID="/a", status="CONFLICTED", pinned=True, helpfulCount=2,
                          irrelevantCount=1)], "q", ["m0"]).memories[0]
    m = to_memory(other, now_ms=NOW_MS, settings=s)
    assert (m.scope, m.state, m.tier) == ("project:/a", TrustState.CONTESTED, Tier.PINNED)
    assert (m.conf_for, m.conf_against) == (3.0, 2.0)
    gone = to_memory(scenario([mem(0, "c", status="SUPERSEDED")], "q", ["m0"]).memories[0], now_ms=NOW_MS, settings=s)
    assert gone.state == TrustState.SUPERSEDED and gone.valid_to_ms == NOW_MS


def test_superseded_memory_never_surfaces() -> None:
    sc = scenario([mem(0, "The user now uses Bun as package manager.", lastSeenAgoDays=1),
                   mem(1, "The user uses npm as the package manager.", status="SUPERSEDED")],
                  "which package manager does the user use?", ["m0"])
    r = run_scenario(sc, load_settings())
    assert "m0" in r.surfaced and r.ranking[0] == "m0"  # positive control: the current value is served
    assert "m1" not in r.ranking and "m1" not in r.surfaced and "m1" not in r.core


def test_conflicted_memory_surfaces_marked_as_contested() -> None:
    sc = scenario([mem(0, "The user always commits with npm.", status="CONFLICTED"),
                   mem(1, "The user writes commit messages in English.")],
                  "how does the user commit changes with npm?", ["m0"])
    r = run_scenario(sc, load_settings())
    assert "m0" in r.surfaced and r.contested_marked == ("m0",)
    assert "m1" not in r.contested_marked  # control: an active memory is not marked


def test_memory_of_another_project_never_surfaces() -> None:
    sc = scenario([mem(0, "The database is PostgreSQL via Docker.", scope="project", projectID="/shop"),
                   mem(1, "The database is SQLite, no containers.", scope="project", projectID="/notes")],
                  "which database does the project use?", ["m0"], directory="/shop")
    r = run_scenario(sc, load_settings())
    assert "m0" in r.surfaced  # positive control: the own project's memory is served
    assert "m1" not in r.ranking and "m1" not in r.surfaced and "m1" not in r.core
    flipped = run_scenario(sc.model_copy(update={"directory": "/notes", "expected": ("m1",)}), load_settings())
    assert "m1" in flipped.surfaced and "m0" not in flipped.ranking


@needs_dev
def test_two_scenario_smoke_run_prints_the_json_document(tmp_path: Path) -> None:
    doc = json.loads(DEV.read_text(encoding="utf-8"))
    picked = [s for s in doc["scenarios"] if s["id"] in ("kw-01", "pi-01")]
    small = tmp_path / "two.json"
    small.write_text(json.dumps({"meta": doc["meta"], "scenarios": picked}), encoding="utf-8")
    args = argparse.Namespace(file=str(small), config=None, data_dir=None, parallel=1, out=str(tmp_path / "out"), json=True)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert run.main(args) == 0
    out = json.loads(buf.getvalue())
    assert list(out)[:12] == ["recall_at_1", "recall_at_5", "mrr", "precision_macro", "precision_micro", "fpr",
                              "false_abstention", "overhead_tokens", "n_positive", "n_negative", "by_category", "scenarios"]
    assert (out["n_positive"], out["n_negative"]) == (1, 1)
    assert out["recall_at_5"] == 1.0 and out["fpr"] == 0.0  # pi-01: another project's memory stays out
    assert (tmp_path / "out" / "peers-two.md").exists() and (tmp_path / "out" / "peers-two.png").exists()


@needs_dev
@pytest.mark.ray
def test_parallel_results_equal_serial(ray_session: None) -> None:
    from eval.peers.scenarios import load_scenarios

    picked = [s for s in load_scenarios(DEV) if s.id in ("kw-01", "is-01", "cf-01", "hn-06")]
    settings = load_settings()
    assert run_scenarios(picked, settings, parallel=2) == run_scenarios(picked, settings, parallel=1)


@needs_dev
def test_a_plain_text_run_without_out_prints_the_summary_and_writes_nothing(tmp_path: Path) -> None:
    doc = json.loads(DEV.read_text(encoding="utf-8"))
    small = tmp_path / "two.json"
    small.write_text(json.dumps({"meta": doc["meta"], "scenarios": [s for s in doc["scenarios"] if s["id"] == "kw-01"]}),
                     encoding="utf-8")
    args = argparse.Namespace(file=str(small), config=None, data_dir=None, parallel=1, out=None, json=False)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert run.main(args) == 0
    assert "recall_at_5" in buf.getvalue() and "no report written" in buf.getvalue()


def test_a_missing_or_malformed_scenario_file_is_a_clear_error(tmp_path: Path) -> None:
    from engine.errors import InvalidInput, NotFound
    from eval.peers.scenarios import load_scenarios

    with pytest.raises(NotFound, match="--file"):
        load_scenarios(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput):
        load_scenarios(bad)
    bad.write_text('{"meta": {}}', encoding="utf-8")
    with pytest.raises(InvalidInput, match="no list of scenarios"):
        load_scenarios(bad)
    good = tmp_path / "good.json"
    good.write_text("[]", encoding="utf-8")
    assert load_scenarios(good) == []  # control
