"""The independent-history benchmark: its data folders are well formed and its scoring counts right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.independent.run import DATA, Probe, load_probes, score, summarise

FOLDERS = sorted(p for p in DATA.iterdir() if (p / "probes.json").exists())


def test_there_are_development_and_held_out_folders() -> None:
    assert {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "iota", "kappa", "lambda", "mu"} <= {f.name for f in FOLDERS}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_every_probe_names_a_project_of_its_history_and_every_gold_value_was_said(folder: Path) -> None:
    turns = [json.loads(line) for line in (folder / "history.jsonl").read_text(encoding="utf-8").splitlines() if line]
    said: dict[str, str] = {}
    for t in turns:
        said[t["project"]] = said.get(t["project"], "") + "\n" + t["user"] + "\n" + t["assistant"]
    probes = load_probes(folder)
    assert len(probes) >= 60 and len({p.id for p in probes}) == len(probes)
    for p in probes:
        assert p.project in said, p.id
        assert all(tok.lower() in said[p.project].lower() for tok in p.expect), p.id


def test_score_counts_gold_and_stale_tokens_case_insensitively() -> None:
    probe = Probe(id="q", project="p", question="which port?", expect=("9090",), stale=("8081",), kind="current")
    assert score(probe, "- The API listens on port 9090.").served == ("9090",)
    wrong = score(probe, "- the api moved from 8081 to 9090")
    assert wrong.served == ("9090",) and wrong.wrong == ("8081",)
    doc = summarise([score(probe, ""), wrong])
    assert (doc["gold_tokens"], doc["gold_served"], doc["questions_wrong"]) == (2, 1, 1)


def test_a_held_out_report_gives_aggregates_only() -> None:
    from eval.independent.run import HELD_OUT, render

    probe = Probe(id="q-secret-id", project="p", question="which port?", expect=("9090",), kind="current")
    results = [score(probe, "")]
    for folder, shown in (("gamma", False), ("alpha", True)):
        doc = {**summarise(results), "folder": folder, "replay_s": 1.0, "active_memories": {}, "path": "in-process"}
        assert ("q-secret-id" in render(doc, results, "cmd")) is shown
    assert {"gamma", "delta", "epsilon", "zeta", "kappa", "mu", "xi", "pi", "sigma", "upsilon"} <= HELD_OUT
    assert not {"iota", "lambda", "nu", "omicron", "rho", "tau"} & HELD_OUT
