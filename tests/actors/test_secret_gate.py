"""Secrets in sessions, request ids, miss queries and feedback ids never reach storage
(issue 17, failure 3). The secrets below are shaped like real credentials; the test checks
the raw bytes of every SQLite file of the data directory, not what the API shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.models import TurnIn
from engine.settings import EmbedderSettings

GITHUB = "ghp_" + "Zq8Lm2Xv5Rt9Wk3Yp7Nb4Hc6Jd1Fg0Sa2QeR"
AWS_ID = "AKIA" + "QWERTYUIOPASDFGH"
OPENAI = "sk-proj-" + "Tm4Kq9Vx2Lp7Rz5Wc8Yb3Nd6Hf1Gj0Sa"


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Pipeline]:
    settings = load_settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    rt = Runtime(tmp_path / "data", settings, use_ray=False)
    yield Pipeline(rt)
    rt.shutdown()


def _stored_bytes(data: Path) -> bytes:
    out = b""
    for f in sorted(data.rglob("*")):
        if f.is_file() and (f.suffix in (".sqlite", ".json", ".jsonl") or f.name.endswith(("-wal", "-shm"))):
            out += f.read_bytes()
    return out


def test_secrets_in_ids_sessions_and_miss_queries_are_not_stored(pipe: Pipeline, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ack = pipe.observe([TurnIn(project="p", session=f"sess-{AWS_ID}", user="the API listens on port 8080",
                               request_id=f"req-{GITHUB}")])[0]
    again = pipe.observe([TurnIn(project="p", session=f"sess-{AWS_ID}", user="the API listens on port 8080",
                                 request_id=f"req-{GITHUB}")])[0]
    assert ack.created and not again.created  # still idempotent on the (hashed) request id
    other = pipe.observe([TurnIn(project="p", user="the API listens on port 8080", request_id=f"req-{GITHUB}x")])[0]
    assert other.created  # two ids that differ only in their secret stay two ids
    pipe.drain("p")
    pipe.miss("p", f"where is the deploy key {OPENAI} kept?", tool="log_search", session=f"s-{AWS_ID}")
    res = pipe.recall(RecallRequest(project="p", query="which port does the API use?"))
    pipe.feedback("p", res.retrieval_id, "It listens on port 8080.", request_id=f"fb-{GITHUB}")
    pipe.drain("p")
    stored = _stored_bytes(data)
    assert b"8080" in stored  # positive control: the stores were read and hold the turn
    for secret in (GITHUB, AWS_ID, OPENAI):
        assert secret.encode() not in stored, secret


def test_ordinary_ids_pass_the_gate_unchanged_and_secret_ones_become_stable_hashes() -> None:
    from engine.gate import stored_id

    for plain in ("req-42", "ses_01JABCDEF", "3f2b9c1e-8d7a-4c55-9e21-0b6f4a7d2c10", "t1", ""):
        assert stored_id(plain) == plain
    for secret in (f"req-{GITHUB}", f"sess:{AWS_ID}", f"x/{OPENAI}", GITHUB):
        hashed = stored_id(secret)
        assert hashed.startswith("redacted-") and hashed == stored_id(secret) and secret not in hashed
