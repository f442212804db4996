"""The plugin's outbox redaction agrees with engine/redact.py (issue 13: the outbox holds redacted turns only).

The secret and benign corpora of tests/engine/test_redact.py go through the plugin's
``redactSecrets`` under node and through ``engine.redact.redact``: same output on every
line. The checked-in detectors are those of engine/redact.py (regenerate with
``python -m bridge.plugin_redact --write``), and the plugin writes its outbox redacted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.plugin_redact import PLUGIN, render_into
from engine.redact import redact
from tests.engine.test_redact import BENIGN, SECRETS

ROOT = Path(__file__).resolve().parents[2]


def node_redact(texts: list[str]) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed to test the opencode plugin")
    script = (f"const m = await import({json.dumps(PLUGIN.as_uri())});"
              "let raw = ''; for await (const c of process.stdin) raw += c;"
              "process.stdout.write(JSON.stringify(JSON.parse(raw).map((t) => m.DynmemPlugin.redactSecrets(t))));")
    proc = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(texts), capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout))


def test_the_checked_in_detectors_are_those_of_engine_redact() -> None:
    current = PLUGIN.read_text(encoding="utf-8")
    assert render_into(current) == current, "stale: run `python -m bridge.plugin_redact --write`"


def test_the_plugin_redacts_like_the_engine() -> None:
    secrets = [text for _, text, _ in SECRETS]
    texts = secrets + list(BENIGN) + ["[REDACTED:openai_key] and again sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"]
    got = node_redact(texts)
    want = [redact(t) for t in texts]
    mismatches = [(t, g, w) for t, g, w in zip(texts, got, want, strict=True) if g != w]
    assert not mismatches, mismatches[:5]
    # the corpus does exercise redaction (control): every secret line changed, no benign one did
    assert all(g != t for g, t in zip(got[:len(secrets)], secrets, strict=True))
    assert got[len(secrets):len(secrets) + len(BENIGN)] == list(BENIGN)
