"""engine/, actors/ and bridge/ type-check under mypy --strict (STYLE: typed packages)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_packages_pass_mypy_strict() -> None:
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "engine", "actors", "bridge"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "no issues found" in run.stdout  # positive control: mypy really checked the files
