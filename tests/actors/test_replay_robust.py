"""A bad history line is reported with its number and skipped (or fatal with --strict), for any
reason; a file is never left half logged with pending jobs (issue 17, failure 6)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import replay_file
from bridge.cli import main
from engine.errors import MalformedHistory
from engine.history import parse_history
from engine.limits import MAX_LINE_BYTES, MAX_USER_CHARS
from engine.settings import EmbedderSettings


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Pipeline]:
    settings = load_settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    rt = Runtime(tmp_path / "data", settings, use_ray=False)
    yield Pipeline(rt)
    rt.shutdown()


def _line(i: int, project: str = "shop", **extra: object) -> bytes:
    doc = {"project": project, "session": "s", "user": f"note {i}: the build takes {i} seconds", "assistant": "ok",
           "request_id": f"r{i}", **extra}
    return json.dumps(doc).encode() + b"\n"


def _history(path: Path, n: int, bad: dict[int, bytes]) -> Path:
    with path.open("wb") as fh:
        for i in range(1, n + 1):
            fh.write(bad.get(i, _line(i)))
    return path


def _logged(pipe: Pipeline, project: str) -> int:
    return int(pipe.rt.log(project).last_turn()) if pipe.rt.has_project(project) else 0


def test_a_bad_project_name_deep_in_a_file_is_skipped_with_its_line_number(pipe: Pipeline, tmp_path: Path) -> None:
    bad = {261: _line(261, project=" shop"), 262: _line(262, project="p" * 600)}  # after a full batch of 256
    path = _history(tmp_path / "h.jsonl", 300, bad)
    report = replay_file(pipe, path)
    assert [(p.line, p.code) for p in report.problems] == [(261, "invalid_input"), (262, "invalid_input")]
    assert all(p.message.startswith(f"line {p.line}:") for p in report.problems)
    assert report.turns == report.new_turns == 298 and _logged(pipe, "shop") == 298
    assert pipe.pending("shop") == 0  # drained: no job left pending


def test_strict_replay_stops_at_the_bad_line_before_logging_anything(pipe: Pipeline, tmp_path: Path) -> None:
    path = _history(tmp_path / "h.jsonl", 300, {261: _line(261, project=" shop")})
    with pytest.raises(MalformedHistory, match="^line 261: "):
        replay_file(pipe, path, strict=True)
    assert not pipe.rt.has_project("shop")  # nothing logged, no stores created
    # positive control: the same file without its bad line replays whole under --strict
    path = _history(tmp_path / "ok.jsonl", 300, {})
    assert replay_file(pipe, path, strict=True).new_turns == 300


def test_an_invalid_utf8_byte_rejects_only_its_line(pipe: Pipeline, tmp_path: Path) -> None:
    broken = _line(3).replace(b"note 3", b"note \xff3")
    path = _history(tmp_path / "h.jsonl", 5, {3: broken})
    report = replay_file(pipe, path)
    assert [(p.line, p.code) for p in report.problems] == [(3, "invalid_encoding")]
    assert report.new_turns == 4 and _logged(pipe, "shop") == 4


@pytest.mark.timeout(120)
def test_cli_and_http_share_the_size_limits_and_a_huge_line_is_skipped_fast(pipe: Pipeline, tmp_path: Path) -> None:
    at_limit = json.dumps({"project": "shop", "user": "x" * MAX_USER_CHARS}).encode()
    over = json.dumps({"project": "shop", "user": "x" * (MAX_USER_CHARS + 1)}).encode() + b"\n"
    huge = b'{"project": "shop", "user": "' + b"y" * (MAX_LINE_BYTES + 10) + b'"}\n'
    # exactly at the limit is a turn (not replayed here: the rules extractor is slow on 200,000 'x')
    assert parse_history([at_limit])[0][0].user == "x" * MAX_USER_CHARS
    path = _history(tmp_path / "h.jsonl", 5, {3: over, 4: huge})
    report = replay_file(pipe, path)  # skipped without being parsed whole: the test's timeout guards a hang
    assert [(p.line, p.code) for p in report.problems] == [(3, "payload_too_large"), (4, "payload_too_large")]
    assert report.new_turns == 3  # lines 1, 2 and 5
    from bridge.wire import ObserveBody

    # the HTTP body model has the same limit (tested over HTTP in tests/bridge/test_app.py)
    assert any(getattr(m, "max_length", None) == MAX_USER_CHARS for m in ObserveBody.model_fields["user"].metadata)


def test_cli_replay_prints_skipped_lines_and_one_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _history(tmp_path / "h.jsonl", 6, {2: b"{not json\n", 4: _line(4, project="\tbad")})
    rc = main(["replay", str(path), "--in-process", "--json", "--data-dir", str(tmp_path / "d")])
    out, err = capsys.readouterr()
    assert rc == 0
    doc = json.loads(out)
    assert doc["new_turns"] == 4 and [p["line"] for p in doc["problems"]] == [2, 4]
    assert "line 2:" in err and "line 4:" in err
    rc = main(["replay", str(path), "--in-process", "--strict", "--data-dir", str(tmp_path / "d2")])
    assert rc != 0 and "line 2:" in capsys.readouterr().err
