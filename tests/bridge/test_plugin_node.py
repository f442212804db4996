"""Runs the opencode plugin's Node unit tests (tests/bridge/opencode/*.test.mjs) under pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_plugin_node_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to test the opencode plugin (bridge/opencode/dynmem.js)")
    proc = subprocess.run([node, "--test", "tests/bridge/opencode/"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout[-8000:]}\n{proc.stderr[-4000:]}"
    assert "# fail 0" in proc.stdout and "# pass 0" not in proc.stdout
