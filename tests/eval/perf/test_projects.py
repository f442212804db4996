"""``dynmem bench perf --projects N`` (eval/perf/projects.py): the option, the data directory it
builds, and the shape of what it measures, at a tiny size (no timed assertions)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bridge.cli import build_parser
from eval.perf import projects, run


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")


def _args(tmp_path: Path, parts: str, n_projects: int, sizes: str = "50") -> argparse.Namespace:
    return argparse.Namespace(sizes=sizes, queries=8, replay_turns=0, parts=parts, parallel=1, out=str(tmp_path / "out"),
                              json=True, config=None, data_dir=str(tmp_path / "data"), stores=str(tmp_path / "keep"),
                              projects=n_projects)


def test_the_perf_command_measures_one_project_unless_asked() -> None:
    default = build_parser().parse_args(["bench", "perf"])
    assert default.projects == 1
    assert run._projects(default, run._parts(default.parts)) == 1
    assert "--projects" not in run._command(default)
    asked = build_parser().parse_args(["bench", "perf", "--sizes", "1000,100000", "--projects", "10",
                                       "--parts", "inprocess,ray"])
    assert asked.projects == 10
    assert run._projects(asked, run._parts(asked.parts)) == 10
    assert "--sizes 1000,100000 --parts inprocess,ray --projects 10" in run._command(asked)


def test_projects_needs_at_least_one_and_a_part_that_measures_them(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--projects must be >= 1"):
        run._projects(_args(tmp_path, "inprocess", 0), ["inprocess"])
    with pytest.raises(SystemExit, match="choose at least one in --parts"):
        run._projects(_args(tmp_path, "replay", 3), ["replay"])
    assert run._projects(_args(tmp_path, "ray", 3), ["ray"]) == 3  # positive control
    assert run._projects(_args(tmp_path, "replay", 1), ["replay"]) == 1


def test_project_zero_is_the_single_project_store_and_the_others_are_numbered() -> None:
    assert projects.project_names(3) == [run.PROJECT, f"{run.PROJECT}-1", f"{run.PROJECT}-2"]
    assert projects.project_names(1) == [run.PROJECT]


def test_the_data_directory_holds_every_project_with_its_own_memories(tmp_path: Path) -> None:
    from actors.config import load_settings
    from actors.launch import Runtime

    settings = load_settings(None)
    snaps, _ = run.build_stores(tmp_path / "work", settings, [40])
    names = projects.project_names(3)
    dest, rows = projects.build_data_dir(tmp_path / "work", settings, names, 40, snaps[40])
    assert [r["project"] for r in rows] == names
    assert [r.get("reused", False) for r in rows] == [True, False, False]
    rt = Runtime(dest, settings, use_ray=False)
    try:
        assert rt.projects_on_disk() == sorted(names)
        texts = [{m.text for m in rt.engine(name).target.table} for name in names]
    finally:
        rt.shutdown()
    assert [len(t) for t in texts] == [40, 40, 40]
    assert texts[0] != texts[1] and texts[1] != texts[2]  # other seeds, other memories
    facts = projects.disk_facts(dest, 120)
    assert facts["memories"] == 120 and facts["disk_bytes_per_memory"] > 0 and facts["data_dir_mib"] > 0
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == sorted(["store-40", dest.name])  # builds removed


def test_three_projects_in_process_are_measured_reported_and_kept_for_the_next_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(_args(tmp_path, "inprocess", 3)) == 0
    doc = json.loads(capsys.readouterr().out)
    many = doc["projects"]
    assert many["size"] == 50 and many["projects"] == projects.project_names(3)
    assert many["disk"]["memories"] == 150
    part = many["inprocess"]
    assert part["indexed"] == [50, 50, 50] and len(part["open_each_s"]) == 3
    assert [r["mode"] for r in part["recall"]] == ["live", "passive", "passive, cached query vector", projects.TURN_MODE]
    assert all(r["n"] == 8 for r in part["recall"])
    slowest = part["recall"][-1]["slowest"]
    assert len(slowest) == 3 and {x["project"] for x in slowest} <= set(many["projects"])
    assert "Slowest of the recalls in turn" in run.render({**doc, "wall_seconds": 1.0}, "cmd", "p.png", "q.png")
    assert part["rss_mb"] and part["rss_mb"] > 0
    measures = {c["measure"] for c in many["compare"]}
    assert {"in process, live, recall p99 (ms)", "in process, cold open of one project (s)",
            "memory.sqlite bytes per memory"} <= measures
    assert "ray" not in many
    assert "--projects 3" in doc["command"]
    report = (tmp_path / "out" / "perf.md").read_text(encoding="utf-8")
    assert "## 3 projects of 50 memories in one data directory (150 memories)" in report
    assert "![3 projects](perf-projects.png)" in report
    assert (tmp_path / "out" / "perf-projects.png").stat().st_size > 0
    assert json.loads((tmp_path / "out" / "perf.json").read_text(encoding="utf-8"))["projects"]["size"] == 50
    assert list((tmp_path / "data").iterdir()) == []  # the temporary data directories are removed
    assert sorted(p.name for p in (tmp_path / "keep").iterdir()) == ["project-1-50", "project-2-50", "store-50"]

    assert run.main(_args(tmp_path, "inprocess", 3)) == 0
    again = json.loads(capsys.readouterr().out)["projects"]
    assert [r.get("reused", False) for r in again["build"]] == [True, True, True]
    assert again["inprocess"]["indexed"] == [50, 50, 50]


def test_the_default_run_has_no_projects_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(_args(tmp_path, "inprocess", 1, sizes="20")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["projects"] is None
    assert "projects of" not in (tmp_path / "out" / "perf.md").read_text(encoding="utf-8")
    assert not (tmp_path / "out" / "perf-projects.png").exists()
    assert (tmp_path / "out" / "perf.png").exists()  # positive control: the report was written


@pytest.mark.ray
@pytest.mark.slow
def test_every_project_engine_is_open_on_ray_with_its_resident_memory(
        ray_session: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(_args(tmp_path, "ray", 2, sizes="30")) == 0
    many = json.loads(capsys.readouterr().out)["projects"]
    part = many["ray"]
    assert part["opened"] == projects.project_names(2) and part["skipped_for_memory"] == []
    assert set(part["engine_rss_mb"]) == set(part["opened"])
    assert all(v and v > 50 for v in part["engine_rss_mb"].values()), part["engine_rss_mb"]
    assert part["index_rss_mb"] and part["index_rss_mb"] > 50
    assert [r["mode"] for r in part["recall"]] == ["live", projects.TURN_MODE]
    assert "Ray, engine actor RSS of project 0 (MiB)" in {c["measure"] for c in many["compare"]}
