"""The whole actor graph on Ray with the openai client, against the scripted fake server.

Every model client and embedder is built inside its actor from plain settings (nothing live
crosses a process boundary); replay, serve + observe + recall, adjudication by the model and
a repair investigation answered by the model all run on Ray and agree with ``--in-process``.
The fake server's "model" (``fakes.brain``) answers dynmem's prompts with the rules client,
so the memories are real and reproducible.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.config import load_settings
from actors.clients import EngineClient, IndexClient
from actors.launch import Runtime, is_plain_data
from actors.pipeline import Pipeline
from actors.replay import DEMO_HISTORY, replay_file
from actors.wire import RecallRequest, RememberRequest
from engine.models import Origin, Sensitivity, TrustState, TurnIn
from engine.settings import Settings
from fakes import brain
from fakes.openai_server import FakeOpenAI

pytestmark = [pytest.mark.ray, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
T0 = 1_767_225_600_000
DAY = 86_400_000


def openai_settings(base_url: str, *, embedder: str = "openai", workers: int = 1) -> Settings:
    """The openai client (and embedder) on ``base_url``, with short waits for tests."""
    base = load_settings(environ={})
    m = {"client": "openai", "openai_base_url": base_url, "openai_model": "fake-model", "openai_api_key": "test-key",
         "timeout_s": 5.0, "max_retries": 2, "retry_base_s": 0.01, "retry_max_s": 0.1, "breaker_cooldown_s": 0.2}
    e = {"name": embedder, "openai_model": "fake-embed", "dim": 64, "local_name": "hash"}
    return base.model_copy(update={"model": base.model.model_copy(update=m),
                                   "embedder": base.embedder.model_copy(update=e),
                                   "runtime": base.runtime.model_copy(update={"extraction_workers": workers})})


def env_for(base_url: str, data: Path, embedder: str = "minilm") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYNMEM")}
    env.update({"DYNMEM_MODEL_CLIENT": "openai", "DYNMEM_OPENAI_BASE_URL": base_url,
                "DYNMEM_OPENAI_MODEL": "fake-model", "DYNMEM_OPENAI_API_KEY": "test-key", "DYNMEM_EMBEDDER": embedder,
                "DYNMEM_EMBEDDER_OPENAI_MODEL": "fake-embed", "DYNMEM_EMBEDDER_DIM": "64",
                "DYNMEM_HOME": str(data), "RAY_USAGE_STATS_ENABLED": "0"})
    return env


def ray_address() -> str:
    import ray

    return str(ray.get_runtime_context().gcs_address)


def states(pipe: Pipeline, project: str) -> list[tuple[str, str, str, str]]:
    return sorted((m.text, m.key, m.belief, m.state.value) for m in pipe.memories(project))


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=brain.answer) as server:
        yield server


# ---- constructors take plain data ---------------------------------------------------------
@pytest.mark.parametrize("client", ["rules", "openai"])
@pytest.mark.parametrize("embedder", ["hash", "openai"])
def test_every_actor_is_built_from_plain_data_and_answers(ray_session: None, fake: FakeOpenAI, tmp_path: Path,
                                                          client: str, embedder: str) -> None:
    s = openai_settings(fake.base_url, embedder=embedder)
    s = s.model_copy(update={"model": s.model.model_copy(update={"client": client})})
    rt = Runtime(tmp_path / "data", s, use_ray=True)
    try:
        rt.engine("p")
        rt.log("p")
        classes = {cls.__name__ for cls, _ in rt.spawned}
        assert classes == {"IndexService", "ExtractionService", "AdjudicationService", "InvestigatorService",
                           "EngineService", "LogService"}
        for cls, args in rt.spawned:
            assert all(is_plain_data(a) for a in args), (cls.__name__, args)
        assert rt.index.ping() == ("openai+hash" if embedder == "openai" else "hash")
        for ref in (*rt.extractors, rt.adjudicator, rt.investigator):
            assert ref.remote and ref.ping() == client
    finally:
        rt.shutdown()


def test_live_objects_are_not_plain_data(tmp_path: Path) -> None:
    import threading

    from actors.llm.openai_client import OpenAIClient

    s = openai_settings("http://127.0.0.1:9/v1")
    assert is_plain_data(s) and is_plain_data(tmp_path) and is_plain_data([1, "a", {"k": (None, 2.5)}])  # control
    assert not is_plain_data(OpenAIClient(s.model, tmp_path))
    assert not is_plain_data(threading.RLock())
    assert not is_plain_data({"client": OpenAIClient(s.model, tmp_path)})
    from actors.launch import Ref

    assert not is_plain_data(IndexClient(Ref(object(), remote=False)))  # an in-process port is live
    assert not is_plain_data(EngineClient(Ref(object(), remote=False)))


# ---- replay on Ray = replay in process -------------------------------------------------------
def test_replay_of_the_example_history_on_ray_gives_the_in_process_memory_states(
        ray_session: None, fake: FakeOpenAI, tmp_path: Path) -> None:
    s = openai_settings(fake.base_url, embedder="hash", workers=2)
    on_ray = Runtime(tmp_path / "ray", s, use_ray=True)
    try:
        pipe = Pipeline(on_ray)
        report = replay_file(pipe, DEMO_HISTORY)
        ray_states = states(pipe, "shop-api")
        decided = [m for m in pipe.memories("shop-api") if m.prompt_version.startswith("extract")]
    finally:
        on_ray.shutdown()
    sent = len(fake.chat_requests())
    local_rt = Runtime(tmp_path / "local", s, use_ray=False)
    try:
        local = Pipeline(local_rt)
        replay_file(local, DEMO_HISTORY)
        local_states = states(local, "shop-api")
    finally:
        local_rt.shutdown()
    assert report.turns == 178 and sent >= 178  # every turn went to the model endpoint
    assert len(ray_states) > 20 and decided  # memories came from the openai client's extraction
    assert ray_states == local_states


def test_dynmem_replay_cli_with_the_openai_client_on_ray(ray_session: None, fake: FakeOpenAI, tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = env_for(fake.base_url, data, embedder="hash")
    cmd = [str(VENV_BIN / "dynmem"), "replay", str(DEMO_HISTORY), "--json", "--data-dir", str(data)]
    on_ray = subprocess.run([*cmd, "--address", ray_address()], env=env, capture_output=True, text=True, timeout=600)
    assert on_ray.returncode == 0, on_ray.stderr[-2000:]
    local_data = tmp_path / "local"
    local = subprocess.run([*cmd[:-2], "--data-dir", str(local_data), "--in-process"], env=env, capture_output=True,
                           text=True, timeout=600)
    assert local.returncode == 0, local.stderr[-2000:]

    def listed(folder: Path) -> list[tuple[str, str]]:
        out = subprocess.run([str(VENV_BIN / "dynmem"), "memories", "list", "--project", "shop-api", "--json",
                              "--data-dir", str(folder), "--state", "active"], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return sorted((m["text"], m["state"]) for m in json.loads(out.stdout)["memories"])

    assert listed(data) == listed(local_data) and len(listed(data)) > 10
    assert any(brain.task_of(b) == "extract" for b in fake.chat_requests())


# ---- serve + observe + recall over HTTP --------------------------------------------------------
def _http(url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_dynmem_serve_with_the_openai_client_observes_and_recalls(ray_session: None, fake: FakeOpenAI,
                                                                   tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    env = env_for(fake.base_url, data, embedder="openai")
    proc = subprocess.Popen([str(VENV_BIN / "dynmem"), "serve", "--data-dir", str(data), "--address", ray_address()],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (data / "sidecar.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.2)
        info = json.loads((data / "sidecar.json").read_text())
        token = Path(info["token_file"]).read_text().strip()
        url = info["url"]
        _http(f"{url}/v1/observe", token, {"project": "shop", "session": "s1", "request_id": "o1",
                                           "user": "the API server listens on port 9090 now",
                                           "assistant": "Noted, the API server port is 9090."})
        found: dict[str, Any] = {}
        while time.monotonic() < deadline:
            found = _http(f"{url}/v1/recall", token, {"project": "shop", "query": "which port does the API use?",
                                                      "passive": True})
            if "9090" in found["context"]:
                break
            time.sleep(0.5)
        assert "9090" in found["context"] and not found["abstained"]
        tasks = [brain.task_of(b) for b in fake.chat_requests()]
        assert "extract" in tasks  # the sidecar's extraction used the model
        assert any(r["path"].endswith("/embeddings") for r in fake.requests)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert proc.returncode == 0


# ---- adjudication and repair answered by the model --------------------------------------------
LONG = "The staging database for the shop api runs Postgres {v} on the primary host in the eu region."


def test_a_contested_fact_is_judged_by_the_model_on_ray(ray_session: None, fake: FakeOpenAI, tmp_path: Path) -> None:
    results = {}
    for mode in ("ray", "local"):
        rt = Runtime(tmp_path / mode, openai_settings(fake.base_url), use_ray=mode == "ray")
        try:
            pipe = Pipeline(rt)
            pipe.remember(RememberRequest(project="shop", text=LONG.format(v=15), request_id="a"))
            rt.clock = rt.clock  # the second statement is later
            pipe.remember(RememberRequest(project="shop", text=LONG.format(v=16), request_id="b"))
            before = {m.text: m.state for m in pipe.memories("shop")}
            report = pipe.drain("shop")
            history = [e.reason for m in pipe.memories("shop") for e in pipe.detail("shop", m.id).history]
            results[mode] = (sorted((m.text, m.state.value) for m in pipe.memories("shop")), report.adjudicated)
        finally:
            rt.shutdown()
        assert set(before.values()) == {TrustState.CONTESTED}  # a tension was found and waited for the judge
        assert any("openai:fake-model@judge-v1" in r for r in history), history
    assert results["ray"] == results["local"] and results["ray"][1] == 1
    assert sum(brain.task_of(b) == "judge" for b in fake.chat_requests()) >= 1


def test_a_repair_job_is_answered_by_the_model_on_ray(ray_session: None, tmp_path: Path) -> None:
    # The extraction of the turn that states the fact comes back empty, so memory misses it.
    script = [{"system_contains": brain.PROMPT_MARKERS["extract"], "user_contains": "ops/rotations.yaml",
               "text": json.dumps({"memories": []})}]
    with FakeOpenAI(script, responder=brain.answer) as fake:
        rt = Runtime(tmp_path / "data", openai_settings(fake.base_url, embedder="hash"), use_ray=True)
        try:
            pipe = Pipeline(rt)
            turns = ["we use pnpm for the web app", "the pager rotation lives in ops/rotations.yaml",
                     "thanks, that is all for today"]
            pipe.observe([TurnIn(project="ops", user=u, assistant="Noted.", ts_ms=T0 + i * DAY, request_id=f"t{i}")
                          for i, u in enumerate(turns)])
            pipe.drain("ops")
            assert not any("rotations.yaml" in m.text for m in pipe.memories("ops"))  # the miss
            assert pipe.miss("ops", "where does the pager rotation live?", tool="log_search") is not None
            report = pipe.drain("ops")
            repaired = [m for m in pipe.memories("ops") if m.origin == Origin.REPAIR]
            [job] = pipe.repairs("ops")
        finally:
            rt.shutdown()
        bodies = [b for b in fake.chat_requests() if brain.task_of(b) == "investigate"]
    assert report.repaired == 1 and [m.text for m in repaired] and "rotations.yaml" in repaired[0].text
    assert repaired[0].prompt_version == "investigate-v1"
    assert job.calls_used == 1 and job.read[0].tool == "search"
    assert job.read[0].args["before_turn"] == 4  # the causal bound: only turns before the signal
    assert len(bodies) == 2  # one search, then the proposal
    assert "ops/rotations.yaml" in json.dumps(bodies[1])  # the model saw what it cites


# ---- privacy: secrets and local-only memories on the full Ray graph ---------------------------
CORPUS = json.loads((ROOT / "tests" / "fixtures" / "secrets_independent.json").read_text(encoding="utf-8"))


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def _occurs(secret: str, haystack: str | bytes) -> bool:
    """Whether the secret is in the haystack. A short one (a 4-digit PIN) must stand as a token of its own:
    inside a hex id or a packed float it is a coincidence, not a leak. A longer one counts anywhere."""
    needle: str | bytes = secret if isinstance(haystack, str) else secret.encode()
    if len(secret) > 6:
        return needle in haystack  # type: ignore[operator]
    if isinstance(haystack, bytes):
        return re.search(rb"(?<![0-9A-Za-z])" + re.escape(secret.encode()) + rb"(?![0-9A-Za-z])", haystack) is not None
    return re.search(r"(?<![0-9A-Za-z])" + re.escape(secret) + r"(?![0-9A-Za-z])", haystack) is not None


def test_no_independently_written_secret_reaches_a_request_or_a_file(ray_session: None, fake: FakeOpenAI,
                                                                     tmp_path: Path) -> None:
    secrets, controls = CORPUS["secrets"], CORPUS["controls"]
    assert len(secrets) >= 60 and len(controls) >= 20
    data = tmp_path / "data"
    rt = Runtime(data, openai_settings(fake.base_url, workers=2), use_ray=True)
    try:
        pipe = Pipeline(rt)
        cases = [*secrets, *controls]
        pipe.observe([TurnIn(project="vault", session="s", user=c["text"], assistant="Noted.", ts_ms=T0 + i,
                             request_id=c["id"]) for i, c in enumerate(cases)])
        report = pipe.drain("vault")
        dead = [(j.kind, j.last_error) for j in rt.log("vault").jobs("dead")]
        stored = {u.request_id: f"{u.user}\n{u.assistant}" for u in pipe.log_timeline("vault", around_turn=1,
                                                                                       limit=len(cases) + 5)}
        for c in secrets[:20]:  # the same texts said to memory directly, through the index and the engine
            pipe.remember(RememberRequest(project="vault", text=c["text"], request_id=f"r-{c['id']}"))
    finally:
        rt.shutdown()
    assert report.dead == 0 and report.jobs_done >= len(cases), dead
    kinds = {brain.task_of(b) for b in fake.chat_requests()}
    assert "extract" in kinds and any(r["path"].endswith("/embeddings") for r in fake.requests)
    recorded = json.dumps(fake.requests, ensure_ascii=False)
    blobs = {p: p.read_bytes() for p in _files(data)}
    assert any(p.name == "log.sqlite" for p in blobs) and any(p.parent.name == "cache" for p in blobs)
    leaks = []
    for c in secrets:
        assert _occurs(c["secret"], c["text"])  # positive control: the case carries its secret as a token
        escaped = json.dumps(c["secret"], ensure_ascii=False)[1:-1]
        if _occurs(c["secret"], recorded) or _occurs(escaped, recorded):
            leaks.append((c["id"], "request"))
        leaks += [(c["id"], str(p.relative_to(data))) for p, blob in blobs.items() if _occurs(c["secret"], blob)]
    assert leaks == []
    assert len(stored) == len(cases)
    lost = [(c["id"], k) for c in controls for k in c["keep"] if k not in stored[c["id"]]]
    assert lost == []  # what is not a secret is kept, word for word, in the log
    assert all(any(k in recorded for k in c["keep"]) for c in controls[:10])  # and it was sent on


LOCAL_ONLY = ["My therapist appointment is every Tuesday at 4pm with Dr Halvorsen.",
              "The incident postmortem draft blames the Kestrel migration on Ingrid."]


def test_local_only_memories_never_reach_an_endpoint_on_ray(ray_session: None, fake: FakeOpenAI,
                                                            tmp_path: Path) -> None:
    data = tmp_path / "data"
    rt = Runtime(data, openai_settings(fake.base_url), use_ray=True)
    try:
        pipe = Pipeline(rt)
        control = "The release train leaves every Thursday at noon from the main branch."
        pipe.remember(RememberRequest(project="p", text=control, request_id="c"))
        for i, text in enumerate(LOCAL_ONLY):
            pipe.remember(RememberRequest(project="p", text=text, request_id=f"l{i}",
                                          sensitivity=Sensitivity.LOCAL_ONLY))
        # a near duplicate of a local-only memory makes a tension: it is judged by the rules judge
        pipe.remember(RememberRequest(project="p", text=LOCAL_ONLY[0].replace("4pm", "5pm"), request_id="l2",
                                      sensitivity=Sensitivity.LOCAL_ONLY))
        report = pipe.drain("p")
        found = pipe.recall(RecallRequest(project="p", query="when is the therapist appointment?", passive=True,
                                          for_model=False))
        answer = pipe.recall(RecallRequest(project="p", query="when does the release train leave?"))
        pipe.feedback("p", answer.retrieval_id, "The release train leaves Thursday at noon; therapist at 4pm.")
    finally:
        rt.shutdown()
    recorded = json.dumps(fake.requests, ensure_ascii=False)
    assert control in recorded  # positive control: ordinary memories are embedded remotely
    for text in LOCAL_ONLY:
        for fragment in (text, text.split(" with ")[0], "Halvorsen", "Ingrid"):
            assert fragment not in recorded
    cache = b"".join(p.read_bytes() for p in _files(data / "cache")) if (data / "cache").exists() else b""
    assert b"Halvorsen" not in cache and b"Ingrid" not in cache
    assert any("Halvorsen" in m.text for m in found.memories)  # local-only memories are still recalled here
    assert report.adjudicated >= 1


# ---- doctor -------------------------------------------------------------------------------
def test_doctor_checks_the_endpoint_from_inside_actors(ray_session: None, fake: FakeOpenAI, tmp_path: Path) -> None:
    import socket

    from bridge.doctor import check

    checks = {c.name: c for c in check(openai_settings(fake.base_url), tmp_path, in_actor=True)}
    assert checks["model"].ok and "fake-model" in checks["model"].detail, checks["model"]
    assert checks["embedder"].ok and "openai+hash embeds 448-d" in checks["embedder"].detail, checks["embedder"]
    assert {r["path"] for r in fake.requests} >= {"/v1/models", "/v1/chat/completions", "/v1/embeddings"}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    s = openai_settings(dead)
    s = s.model_copy(update={"model": s.model.model_copy(update={"max_retries": 0})})
    checks = {c.name: c for c in check(s, tmp_path, in_actor=True)}
    assert not checks["model"].ok and "error[model_unavailable]" in checks["model"].detail
    assert checks["data_dir"].ok  # control: one broken piece does not hide the others


# ---- leases of jobs waiting in the extraction pool's queue ---------------------------------
@pytest.mark.parametrize("keeper", [True, False])
def test_jobs_waiting_in_the_pool_keep_their_lease_while_the_drain_waits(ray_session: None, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         keeper: bool) -> None:
    """One request in flight, 0.6 s per request, a 1 s lease, 8 jobs held (a batch of 4 and one
    leased ahead): the drain waits 2.4 s for the first batch. While it waits it renews what it
    holds, so a lease taken by anyone else past the first term finds nothing; the control (no
    renewal while waiting) shows that the waiting jobs would be handed out again."""
    import threading

    from actors import pipeline as pipeline_mod

    if not keeper:
        monkeypatch.setattr(pipeline_mod._LeaseKeeper, "renew", lambda self: None)
    with FakeOpenAI(responder=brain.answer, latency_s=0.6) as server:
        s = openai_settings(server.base_url, embedder="hash")
        s = s.model_copy(update={"model": s.model.model_copy(update={"max_concurrency": 1}),
                                 "runtime": s.runtime.model_copy(update={"lease_s": 1.0, "extraction_workers_max": 1})})
        rt = Runtime(tmp_path / "data", s, use_ray=True)
        try:
            pipe = Pipeline(rt, batch_jobs=4)
            assert pipe._lookahead() == 1
            pipe.observe([TurnIn(project="p", user=f"the build step {i} takes {i + 2} minutes", assistant="ok",
                                 ts_ms=T0 + i * 1000, request_id=f"w{i}") for i in range(8)])
            log = rt.log("p")
            done = threading.Thread(target=pipe.drain, args=("p",), daemon=True)
            done.start()
            deadline = time.monotonic() + 60
            while log.job_counts().get("extract", {}).get("running", 0) < 8 and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(1.4)  # past the first term of every lease, before the first batch (2.4 s) is extracted
            stolen = log.lease(["extract"], 100, 1000, f"{rt.run_id}:intruder")
            if keeper:
                assert stolen == []
            else:
                assert stolen  # the control: jobs still waiting for their turn were handed out again
                for job in stolen:
                    log.defer(job.id, 0, "given back by the test", f"{rt.run_id}:intruder")
            done.join(timeout=120)
            assert not done.is_alive()
            records = log.jobs(kind="extract", limit=100)
            assert len(records) == 8 and all(j.state.value == "done" for j in records)
            if keeper:
                assert {j.attempts for j in records} == {1}  # no job was leased twice
        finally:
            rt.shutdown()
