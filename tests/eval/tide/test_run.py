from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from eval.tide import run
from eval.tide.generator import generate
from eval.tide.run import evaluate, run_streams

GEN = {"distractors": 6, "probes_per_dim": 1}


def _ntu_and_harm(doc: dict, dim: str) -> tuple[float | None, float]:
    d = doc["by_dimension"][dim]
    return d["ntu"]["256"], d["harmful_rate"]["256"]


def test_broken_supersession_is_caught_by_revision_only() -> None:
    """Meta-check: the benchmark discriminates. Without supersession revision collapses,
    the other dimensions barely move."""
    streams = generate(0, 4, **GEN)
    full = evaluate(streams, run_streams(streams, "dynmem", "engine"), seed=0, n_boot=50)
    broken = evaluate(streams, run_streams(streams, "no-supersede", "engine"), seed=0, n_boot=50)
    f_rev, _ = _ntu_and_harm(full, "revision")
    b_rev, _ = _ntu_and_harm(broken, "revision")
    assert f_rev is not None and b_rev is not None
    assert f_rev - b_rev >= 0.3, (full["by_dimension"]["revision"], broken["by_dimension"]["revision"])
    for dim in full["by_dimension"]:
        if dim in ("revision", "propagation"):  # propagation also rests on a value change
            continue
        f, fh = _ntu_and_harm(full, dim)
        b, bh = _ntu_and_harm(broken, dim)
        drop = (f - b) if f is not None and b is not None else (bh - fh)
        assert drop <= 0.15, (dim, full["by_dimension"][dim], broken["by_dimension"][dim])


def test_references_score_zero_and_one() -> None:
    streams = [generate(1, 1, **GEN)[0]]
    assert evaluate(streams, run_streams(streams, "oracle", "engine"), seed=1, n_boot=20)["ntu"]["64"] == 1.0
    assert evaluate(streams, run_streams(streams, "none", "engine"), seed=1, n_boot=20)["ntu"]["64"] == 0.0


def test_main_prints_one_json_document_and_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(seed=0, level="pipeline", streams=1, system="bm25", parallel=1, out=str(tmp_path),
                              json=True, config=None, data_dir=None)
    assert run.main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"ntu", "harmful_rate", "by_dimension", "ci95", "system", "level", "seed", "streams"}
    assert set(doc["ntu"]) == {"64", "256"}
    report = (tmp_path / "tide-pipeline-bm25.md").read_text()
    assert "dynmem bench tide --seed 0 --level pipeline --streams 1 --system bm25" in report
    assert (tmp_path / "tide-pipeline-bm25.png").stat().st_size > 0


@pytest.mark.parametrize("variant", ["shipped", "heldout"])
def test_a_held_out_report_lists_no_individual_failure(tmp_path: Path, variant: str) -> None:
    streams = [generate(1, 1, **GEN)[0]]
    doc = {**evaluate(streams, run_streams(streams, "none", "engine"), seed=1, n_boot=20),
           "level": "engine", "system": "none", "seed": 1, "streams": 1, "variant": variant}
    fail = {"dimension": "revision", "stream": 0, "project": "p", "question": "which port does the quux relay use?",
            "gold": ["7312"], "harmful": [], "s": 0.0, "h": 0, "block": ""}
    text = run.write_report(doc, [fail], tmp_path, "dynmem bench tide").read_text()
    # the shipped variant lists it (positive control); the held-out one keeps its wording out of eval/results
    assert ("quux relay" in text) is (variant == "shipped")


def test_standings_place_every_gold_value_once() -> None:
    streams = generate(0, 1, **GEN)
    blocks = run_streams(streams, "dynmem", "pipeline")
    rows = run.standings(streams, blocks)
    gold = [(p, b) for s, per in zip(streams, blocks) for p, b in zip(s.probes, per)]
    assert sum(sum(r.values()) for r in rows.values()) == sum(len(p.gold) for p, _ in gold)
    served = sum(run.has_token(b[64], g) for p, b in gold for g in p.gold)
    assert sum(r["served"] for r in rows.values()) == served > 0  # positive control: the pipeline serves some


def test_standings_tell_a_retrieval_miss_from_an_extraction_miss(tmp_path: Path) -> None:
    streams = [generate(1, 1, **GEN)[0]]
    probe = next(p for p in streams[0].probes if p.gold)
    held = {64: "", 256: "", run.SERVABLE: "a note\nthe value " + probe.gold[0] + " is here"}
    blocks = [[held if p is probe else {64: "", 256: "", run.SERVABLE: ""} for p in streams[0].probes]]
    row = run.standings(streams, blocks)[probe.dimension]
    assert row["in memory, not injected"] == 1
    assert run.standings(streams, run_streams(streams, "oracle", "engine")) == {}  # a reference holds no memories
    report = run.write_report({**evaluate(streams, run_streams(streams, "none", "engine"), seed=1, n_boot=20),
                               "level": "pipeline", "system": "dynmem", "seed": 1, "streams": 1, "variant": "heldout"},
                              [], tmp_path, "dynmem bench tide", run.standings(streams, blocks))
    text = report.read_text()
    assert f"| {probe.dimension} | 0 | 0 | 1 | " in text  # the probe's row, with its retrieval miss


@pytest.mark.ray
def test_parallel_run_equals_serial_run(ray_session: None) -> None:
    streams = generate(2, 2, **GEN)
    serial = run_streams(streams, "dynmem", "pipeline")
    parallel = run_streams(streams, "dynmem", "pipeline", parallel=2)
    assert parallel == serial
    assert any(b[64] for per in serial for b in per)  # positive control: something was injected
