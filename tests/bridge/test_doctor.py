"""``dynmem doctor``: every check reports, a broken endpoint fails only its own check."""

from __future__ import annotations

import argparse
import json
import socket
from pathlib import Path

import pytest

from bridge.doctor import add_doctor_parser, check
from engine.settings import Settings
from fakes.openai_server import FakeOpenAI


def openai_settings(base_url: str) -> Settings:
    s = Settings()
    model = s.model.model_copy(update={"client": "openai", "openai_base_url": base_url, "openai_model": "fake-model",
                                       "max_retries": 0, "timeout_s": 2.0})
    return s.model_copy(update={"model": model, "embedder": s.embedder.model_copy(update={"name": "hash"})})


def test_doctor_passes_against_a_working_endpoint(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        checks = {c.name: c for c in check(openai_settings(fake.base_url), tmp_path)}
        assert [r["path"] for r in fake.requests] == ["/v1/models", "/v1/chat/completions"]
    assert all(c.ok for c in checks.values()), checks
    assert "fake-model" in checks["model"].detail and "hash" in checks["embedder"].detail
    assert "no sidecar" in checks["sidecar"].detail


def test_doctor_reports_an_unreachable_endpoint_without_hiding_the_rest(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    checks = {c.name: c for c in check(openai_settings(f"http://127.0.0.1:{port}/v1"), tmp_path)}
    assert not checks["model"].ok and "error[model_unavailable]" in checks["model"].detail
    assert checks["data_dir"].ok and checks["embedder"].ok  # control


def test_doctor_reports_an_unwritable_data_dir(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "deeper"
    checks = {c.name: c for c in check(Settings().model_copy(update={"embedder": Settings().embedder.model_copy(
        update={"name": "hash"})}), missing)}
    assert not checks["data_dir"].ok and checks["model"].ok


def test_doctor_subcommand_prints_one_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNMEM_EMBEDDER", "hash")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir")
    common.add_argument("--config")
    common.add_argument("--json", action="store_true")
    parser = argparse.ArgumentParser(prog="dynmem")
    add_doctor_parser(parser.add_subparsers(dest="command"), common)
    args = parser.parse_args(["doctor", "--data-dir", str(tmp_path), "--json"])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and {c["name"] for c in doc["checks"]} == {"data_dir", "embedder", "model", "sidecar", "packages"}
