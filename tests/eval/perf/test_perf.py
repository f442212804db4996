"""Smoke tests of ``dynmem bench perf`` (eval/perf/run.py): tiny stores, the shape of the JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from eval.perf import run, synth
from eval.perf.measure import summarize_ms

LAT_KEYS = {"n", "p50_ms", "p95_ms", "p99_ms", "mean_ms", "max_ms"}


def _args(tmp_path: Path, parts: str, sizes: str = "20,60") -> argparse.Namespace:
    return argparse.Namespace(sizes=sizes, queries=12, replay_turns=0, parts=parts, parallel=1, out=str(tmp_path / "out"),
                              json=True, config=None, data_dir=str(tmp_path / "data"))


def _positive(row: dict, n: int) -> None:
    assert set(row) >= LAT_KEYS
    assert row["n"] == n
    for k in LAT_KEYS - {"n"}:
        assert isinstance(row[k], float) and row[k] > 0, (k, row)
    assert row["p50_ms"] <= row["p95_ms"] <= row["p99_ms"] <= row["max_ms"]


def test_synthetic_memories_are_distinct_nested_and_valid() -> None:
    small = synth.make_memories("p", 50)
    big = synth.make_memories("p", 120)
    assert [m.id for m in big[:50]] == [m.id for m in small]
    assert [m.id for m in synth.make_memories("p", 120, start=50)] == [m.id for m in big[50:]]
    assert len({m.text for m in big}) == len({m.id for m in big}) == 120
    assert all(m.scope == "project:p" and m.servable for m in big)
    qs = synth.queries(40)
    assert len(set(qs)) == 40


def test_repeated_history_has_fresh_request_ids(tmp_path: Path) -> None:
    from actors.replay import DEMO_HISTORY
    from engine.history import parse_history

    dest = tmp_path / "h.jsonl"
    assert synth.repeated_history(DEMO_HISTORY, dest, 400) == 400
    turns, problems = parse_history(dest.read_text(encoding="utf-8").splitlines())
    assert not problems and len(turns) == 400
    assert len({t.request_id for t in turns}) == 400
    assert turns[200].ts_ms is not None and turns[0].ts_ms is not None and turns[200].ts_ms > turns[0].ts_ms


def test_summarize_ms() -> None:
    s = summarize_ms([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["n"] == 5 and s["p50_ms"] == 3.0 and s["max_ms"] == 100.0 and s["p95_ms"] > s["p50_ms"]
    assert summarize_ms([])["n"] == 0


def test_in_process_run_prints_one_json_document_and_writes_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(_args(tmp_path, "inprocess")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"machine", "sizes", "build", "recall", "split", "observe", "ratios", "replay", "memory",
                        "command", "wall_seconds"}
    assert doc["sizes"] == [20, 60] and doc["machine"]["nproc"] >= 1
    rows = doc["recall"]["inprocess"]
    cached = "passive, cached query vector"
    assert [(r["size"], r["mode"]) for r in rows] == [(20, "live"), (20, "passive"), (20, cached),
                                                      (60, "live"), (60, "passive"), (60, cached)]
    for r in rows:
        _positive(r, 12)
    for r in doc["split"]:
        assert r["indexed"] == r["size"]
        assert r["embed_p50_ms"] > 0 and r["faiss_p50_ms"] > 0 and r["lexical_p50_ms"] > 0
        assert r["after_embed_p50_ms"] > 0 and r["disk_bytes_per_memory"] > 0
    _positive(doc["observe"]["in process"], 12)
    assert set(doc["ratios"]["in process, live"]) == {"p50 60 / 20", "p95 60 / 20"}
    assert [b["size"] for b in doc["build"]] == [20, 60] and [b["added"] for b in doc["build"]] == [20, 40]
    report = (tmp_path / "out" / "perf.md").read_text(encoding="utf-8")
    assert ".venv/bin/dynmem bench perf --sizes 20,60 --queries 12 --replay-turns 0 --parts inprocess" in report
    assert "| in process, live | 20 |" in report
    assert (tmp_path / "out" / "perf.png").stat().st_size > 0
    assert json.loads((tmp_path / "out" / "perf.json").read_text(encoding="utf-8"))["sizes"] == [20, 60]
    assert list((tmp_path / "data").iterdir()) == []  # the temporary stores are removed


@pytest.mark.ray
@pytest.mark.slow
def test_ray_run_measures_actors_and_leaves_the_shared_ray_running(
        ray_session: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import ray

    assert run.main(_args(tmp_path, "ray,replay", sizes="30")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert ray.is_initialized()  # the session's Ray belongs to the fixture
    (row,) = doc["recall"]["ray"]
    _positive(row, 12)
    _positive(doc["observe"]["Ray actors"], 12)
    assert [m["size"] for m in doc["memory"]] == [0, 30]
    assert all(m["index_rss_mb"] and m["index_rss_mb"] > 50 for m in doc["memory"]), doc["memory"]
    (rep,) = doc["replay"]
    assert rep["turns"] == 178 and rep["turns_per_s"] > 0 and rep["dead_jobs"] == 0, rep


def test_kept_stores_are_reused_by_a_later_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = tmp_path / "keep"
    first = argparse.Namespace(**{**vars(_args(tmp_path, "inprocess", sizes="20")), "stores": str(keep)})
    assert run.main(first) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(b["size"], b.get("reused", False)) for b in doc["build"]] == [(20, False)]
    assert (keep / "store-20" / "perf-build.json").exists()
    second = argparse.Namespace(**{**vars(first), "sizes": "20,60"})
    assert run.main(second) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(b["size"], b["added"], b.get("reused", False)) for b in doc["build"]] == [(20, 20, True), (60, 40, False)]
    assert "--stores" in doc["command"]
    for r in doc["split"]:
        assert r["indexed"] == r["size"]  # the reused store holds exactly its size


def test_the_import_part_exports_a_store_and_imports_it_with_its_vectors(tmp_path: Path) -> None:
    args = _args(tmp_path, "import", sizes="30")
    doc = run.run(args, tmp_path / "work")
    row = doc["import"]
    assert row["imported"] == 30 and row["reused_vectors"] == 30
    assert row["import_s"] > 0 and row["export_s"] > 0 and row["file_mb"] > 0
    assert "## Export and import of the largest store" in run.render({**doc, "wall_seconds": 1.0}, "cmd", "p.png")
