"""``dynmem replay a.jsonl b.jsonl DIR/``: several histories at once, one summary at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.cli import main


def write(path: Path, project: str, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"project": project, "session": "s", "user": u, "assistant": "ok"}) + "\n"
                            for u in lines), encoding="utf-8")
    return path


def test_batch_replay_of_files_and_a_folder_gives_each_project_what_a_single_replay_gives(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    a = write(tmp_path / "a.jsonl", "alpha", ["the dev server runs on port 8080", "we deploy with docker compose"])
    b = write(tmp_path / "b.jsonl", "beta", ["from now on we use pnpm, not npm"])
    folder = tmp_path / "more"
    write(folder / "c.jsonl", "gamma", ["the staging database is postgres 16"])
    (folder / "notes.txt").write_text("not a history", encoding="utf-8")  # only *.jsonl files of a folder
    rc = main(["replay", str(a), str(b), str(folder), "--in-process", "--json", "--data-dir", str(tmp_path / "d")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["failed"] == 0
    assert [Path(f["file"]).name for f in doc["files"]] == ["a.jsonl", "b.jsonl", "c.jsonl"]
    batch = {p: s for f in doc["files"] for p, s in f["report"]["projects"].items()}
    assert set(batch) == {"alpha", "beta", "gamma"} and all(sum(s.values()) > 0 for s in batch.values())
    # Each project holds exactly what a replay of its file alone makes.
    for path in (a, b, folder / "c.jsonl"):
        rc = main(["replay", str(path), "--in-process", "--json", "--data-dir", str(tmp_path / f"alone-{path.stem}")])
        alone = json.loads(capsys.readouterr().out)
        assert rc == 0
        for project, states in alone["projects"].items():
            assert batch[project] == states


def test_batch_replay_reports_a_bad_file_in_its_table_and_replays_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    good = write(tmp_path / "good.jsonl", "alpha", ["the dev server runs on port 8080"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    rc = main(["replay", str(good), str(bad), "--in-process", "--data-dir", str(tmp_path / "d")])
    out, err = capsys.readouterr()
    assert rc == 1 and "error[batch_incomplete]: 1 file(s) failed" in err
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "error[malformed_history]" in rows["bad.jsonl"] and rows["good.jsonl"].split()[1] == "alpha"
    assert rows["2"].split()[:4] == ["2", "files", "1", "failed"]


def test_batch_replay_refuses_an_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    rc = main(["replay", str(tmp_path / "empty"), "--in-process", "--json", "--data-dir", str(tmp_path / "d")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["code"] == "invalid_input" and "no *.jsonl" in doc["error"]


@pytest.mark.ray
def test_batch_replay_on_the_ray_graph_gives_what_in_process_gives(
        ray_session: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    a = write(tmp_path / "a.jsonl", "alpha", ["the dev server runs on port 8080", "we deploy with docker compose"])
    b = write(tmp_path / "b.jsonl", "beta", ["from now on we use pnpm, not npm"])
    runs = {}
    for mode in ("ray", "in-process"):
        extra = ["--in-process"] if mode == "in-process" else []
        rc = main(["replay", str(a), str(b), *extra, "--json", "--data-dir", str(tmp_path / mode)])
        doc = json.loads(capsys.readouterr().out)
        assert rc == 0 and doc["failed"] == 0, doc
        runs[mode] = {p: s for f in doc["files"] for p, s in f["report"]["projects"].items()}
    assert runs["ray"] == runs["in-process"] and set(runs["ray"]) == {"alpha", "beta"}
