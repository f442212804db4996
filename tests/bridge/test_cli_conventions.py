"""CLI conventions: --version, reads that create nothing, JSON errors, --debug, completion, shown defaults."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from bridge.cli import build_parser, main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as exc:  # argparse's --version and usage errors without --json
        rc = int(exc.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def test_version_comes_from_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "--version")
    assert rc == 0 and out.strip() == f"dynmem {version('dynamics-memory')}"


def test_a_read_of_a_missing_data_dir_fails_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "never"
    for argv in (["memories", "list"], ["recall", "anything"], ["review", "list"], ["repairs", "list"]):
        rc, out, err = _run(capsys, *argv, "--project", "p", "--data-dir", str(folder))
        assert rc == 1 and "error[not_found]: no data directory" in err and out == "", argv
    assert not folder.exists()
    rc, _, _ = _run(capsys, "remember", "Releases are cut on Tuesdays.", "--project", "p", "--data-dir", str(folder))
    assert rc == 0 and folder.is_dir()  # positive control: a write creates it


def test_memories_of_an_unknown_project_exit_non_zero_like_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path / "d")
    assert _run(capsys, "remember", "Releases are cut on Tuesdays.", "--project", "shop", "--data-dir", data)[0] == 0
    rc, out, _ = _run(capsys, "memories", "list", "--project", "shop", "--data-dir", data, "--json")
    assert rc == 0 and len(json.loads(out)["memories"]) == 1
    rc, out, err = _run(capsys, "memories", "list", "--project", "typo", "--data-dir", data)
    assert rc == 1 and "no project named 'typo'" in err
    assert not (tmp_path / "d" / "projects" / "typo").exists()


def test_with_json_every_error_is_one_json_document_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(capsys, "memories", "show", "m_nope", "--project", "p", "--data-dir", str(tmp_path / "x"), "--json")
    assert rc == 1 and err == ""
    assert json.loads(out) == {"error": f"no data directory at {tmp_path / 'x'}: nothing has been stored there yet",
                               "code": "not_found"}
    rc, out, err = _run(capsys, "recall", "--json")  # a usage error
    assert rc == 2 and json.loads(out)["code"] == "usage" and "query" in json.loads(out)["error"]
    rc, out, err = _run(capsys, "recall")  # without --json: argparse's usage on stderr (control)
    assert rc == 2 and out == "" and "usage: dynmem recall" in err


def test_debug_shows_the_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("memories", "list", "--project", "p", "--data-dir", str(tmp_path / "none"))
    _, _, quiet = _run(capsys, *argv)
    _, _, loud = _run(capsys, *argv, "--debug")
    assert "Traceback" not in quiet and "Traceback (most recent call last)" in loud and "NotFound" in loud


def test_replay_workers_reaches_the_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import actors.launch

    seen: list[int] = []
    real = actors.launch.Runtime

    def spy(folder: Path, settings: Any, **kw: Any) -> Any:
        seen.append(settings.runtime.extraction_workers)
        return real(folder, settings, **kw)

    monkeypatch.setattr(actors.launch, "Runtime", spy)
    history = tmp_path / "h.jsonl"
    history.write_text('{"project": "p", "user": "the API runs on port 7070", "assistant": "ok"}\n')
    for workers in ("3", None):
        extra = ["--workers", workers] if workers else []
        rc, _, err = _run(capsys, "replay", str(history), "--in-process", "--data-dir", str(tmp_path / "d"), *extra)
        assert rc == 0, err
    assert seen == [3, 2]  # --workers 3, then the settings' default (configs/default.toml)
    rc, _, err = _run(capsys, "replay", str(history), "--in-process", "--data-dir", str(tmp_path / "d"), "--workers", "0")
    assert rc == 1 and "--workers must be at least 1" in err


def test_completion_scripts_know_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "completion", "bash")
    assert rc == 0 and "replay" in out and "memories" in out and "--budget-tokens" in out
    rc, out, _ = _run(capsys, "completion", "zsh")
    assert rc == 0 and out.startswith("#compdef dynmem")


def _help(*argv: str) -> str:
    parser = build_parser()
    for name in argv:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return " ".join(parser.format_help().split())


def test_help_shows_defaults_and_choices() -> None:
    assert "--limit LIMIT at most this many, newest first (default: 50)" in _help("repairs")
    assert "--seed SEED generator seed (default: 0)" in _help("bench", "tide")
    assert "--tier {core,normal,temporary,pinned}" in _help("remember")
    assert "(default: None)" not in _help("recall") and "(default: False)" not in _help("recall")
