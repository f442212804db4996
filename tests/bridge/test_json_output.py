"""``--json`` prints exactly one JSON document on standard output, whatever else writes to
file descriptor 1 while the command runs (Ray's core workers do; issue 17, failure 8)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import bridge.server
from bridge.cli import main


def test_json_stdout_holds_one_document_even_when_something_writes_to_fd_1(
        data_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def noisy_stop(folder: Path, timeout_s: float = 30.0) -> bool:
        os.write(1, b"[2026-12-01 03:08:03 E 1 1] core_worker.cc:2465: a Ray warning\n")
        return False

    monkeypatch.setattr(bridge.server, "stop_sidecar", noisy_stop)
    assert main(["stop", "--json", "--data-dir", str(data_dir)]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out) == {"stopped": False}  # one document, nothing before or after it
    assert "core_worker" in err  # the noise is kept, on stderr
    # positive control: without --json the same noise stays on stdout (people see it as before)
    assert main(["stop", "--data-dir", str(data_dir)]) == 0
    out, _ = capfd.readouterr()
    assert "core_worker" in out and "no sidecar was running" in out


def test_json_stdout_holds_one_document_even_when_something_prints_through_sys_stdout(
        data_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray's error listener prints "(raylet) A worker died ..." with print(), through sys.stdout."""
    import sys

    def noisy_stop(folder: Path, timeout_s: float = 30.0) -> bool:
        print("(raylet) A worker died or was killed while executing a task", file=sys.stdout, flush=True)
        return False

    monkeypatch.setattr(bridge.server, "stop_sidecar", noisy_stop)
    assert main(["stop", "--json", "--data-dir", str(data_dir)]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out) == {"stopped": False}
    assert "A worker died" in err
    # positive control: without --json the same line stays on stdout
    assert main(["stop", "--data-dir", str(data_dir)]) == 0
    out, _ = capfd.readouterr()
    assert "A worker died" in out
