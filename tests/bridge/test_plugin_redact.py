"""The plugin's outbox redaction agrees with engine/redact.py (issue 13: the outbox holds redacted turns only).

The secret and benign corpora of tests/engine/test_redact.py go through the plugin's
``redactSecrets`` under node and through ``engine.redact.redact``: nothing the engine removes
survives in the plugin's output. The checked-in detectors are those of engine/redact.py (regenerate with
``python -m bridge.plugin_redact --write``), and the plugin writes its outbox redacted.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.plugin_redact import PLUGIN, render_into
from engine.redact import redact
from tests.engine.test_redact import BENIGN, SECRETS

ROOT = Path(__file__).resolve().parents[2]
_SECRET_WORD = re.compile(r"pass|pw|pin|secret|token|key|auth|credential|code|phrase", re.I)


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


def test_the_plugin_redacts_every_secret_the_engine_does() -> None:
    """The outbox never holds a secret that engine/redact.py would catch.

    The plugin carries the engine's detectors, not its Python-only value checks (prose values
    that read as code, secret words near a credential-shaped token); the sidecar redacts every
    turn again before it is logged, so that stays authoritative. Where the two differ, the
    plugin may redact more, never less, and it leaves plain benign text alone.
    """
    secrets = [text for _, text, _ in SECRETS]
    texts = secrets + list(BENIGN)
    got = node_redact(texts)
    for text, js in zip(secrets, got[:len(secrets)], strict=True):
        want = redact(text)
        kept = [w for w in re.findall(r"[^\s\[\]]{8,}", js) if w not in want]
        assert not kept, (text, js, want)  # nothing survives in the outbox that the engine removes
        assert js != text  # control: every secret line changed
    plain = [(t, g) for t, g in zip(BENIGN, got[len(secrets):], strict=True) if not _SECRET_WORD.search(t)]
    assert plain and all(g == t for t, g in plain)  # benign text without a secret word is untouched
