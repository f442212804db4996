"""The openai model client against the scripted fake server (tests/fakes/openai_server.py).

Replays through the whole pipeline give exactly the memory states the scripted answers
dictate; outages make jobs wait, not die; every failure mode surfaces as a stable error
code; no secret reaches the endpoint or any file under the data directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from actors.llm.endpoint import Endpoint, EndpointRejected
from actors.llm.openai_client import OpenAIClient, load_prompt
from actors.llm.response_cache import DB_NAME, ResponseCache, purge_matching
from actors.launch import Runtime
from actors.pipeline import Pipeline
from engine.errors import ModelBadReply, ModelError, ModelTimeout, ModelUnavailable
from engine.models import Candidate, Kind, Memory, Sensitivity, TrustState, TurnIn, Unit, Verdict
from engine.settings import Settings
from fakes.openai_server import FakeOpenAI

T0 = 1_767_225_600_000
DAY = 86_400_000
EXTRACT = "distil a coding agent"  # in the extract prompt only
JUDGE = "compare two memories"  # in the judge prompt only
INVESTIGATE = "investigate a memory miss"  # in the investigate prompt only


def settings_for(base_url: str, *, embedder: str = "hash", **model: Any) -> Settings:
    base = Settings()
    m = {"client": "openai", "openai_base_url": base_url, "openai_model": "fake-model", "openai_api_key": "test-key",
         "timeout_s": 2.0, "max_retries": 2, "retry_base_s": 0.01, "retry_max_s": 0.1,
         "breaker_failures": 5, "breaker_cooldown_s": 0.2, **model}
    e = {"name": embedder, "openai_model": "fake-embed", "dim": 64}
    return base.model_copy(update={"model": base.model.model_copy(update=m),
                                   "embedder": base.embedder.model_copy(update=e),
                                   "runtime": base.runtime.model_copy(update={"extraction_workers": 1})})


def reply(*memories: dict[str, Any]) -> str:
    return json.dumps({"memories": [{"key": "", "value": "", "kind": "fact", "salience": 0.6, "negated": False,
                                     "source_unit_ids": [], **m} for m in memories]})


def unit(uid: str, user: str, assistant: str = "OK.", t: int = T0) -> Unit:
    return Unit(id=uid, project="p", session="s", turn=1, ts_ms=t, user=user, assistant=assistant, request_id=uid)


def mem(mid: str, text: str, **kw: Any) -> Memory:
    return Memory(id=mid, scope="project:p", text=text, fingerprint=mid, value=0.5, valid_from_ms=T0,
                  last_evidence_ms=T0, recorded_at_ms=T0, **kw)


def chat_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return fake.chat_requests()


def drain_until_done(pipe: Pipeline, project: str, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pipe.drain(project, max_rounds=50)
        if pipe.pending(project) == 0:
            return
    raise AssertionError("the pipeline did not drain in time")


@pytest.fixture
def runtime_for(tmp_path: Path) -> Iterator[Any]:
    made: list[Runtime] = []

    def build(settings: Settings, name: str = "data") -> tuple[Runtime, Pipeline]:
        rt = Runtime(tmp_path / name, settings, use_ray=False)
        made.append(rt)
        return rt, Pipeline(rt)

    yield build
    for rt in made:
        rt.shutdown()


# ---- a replay through the openai client ----------------------------------------------------
REPLAY = [
    ("the API listens on port 8080", reply({"text": "The API server listens on port 8080.", "key": "API server port",
                                             "value": "8080", "source_unit_ids": ["not-a-unit"]})),
    ("thanks!", reply()),
    ("moved the api to port 9090", reply({"text": "The API server listens on port 9090.", "key": "api_server port",
                                           "value": "9090"})),
    ("staging db is postgres 15", reply({"text": "The staging database runs Postgres 15."})),
    ("I asked memory_search about the port", reply({"text": "memory_search returned the API port 9090."})),
    ("staging got upgraded to 16", reply({"text": "The staging database runs Postgres 16."})),
]


def replay_script(*, failing: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = list(failing)
    script += [{"system_contains": EXTRACT, "user_contains": user, "text": text} for user, text in REPLAY]
    script.append({"system_contains": JUDGE, "text": json.dumps({"verdict": "update", "reason": "16 is later"})})
    script.append({"system_contains": INVESTIGATE, "text": json.dumps(
        {"action": "propose", "query": "", "around_turn": 0, "unit_id": "", "proposals": []})})
    return script


def observe_replay(pipe: Pipeline) -> None:
    acks = pipe.observe([TurnIn(project="shop", user=u, assistant="OK.", ts_ms=T0 + i * DAY, request_id=f"r{i}")
                         for i, (u, _) in enumerate(REPLAY)])
    assert len(acks) == len(REPLAY) and all(a.created for a in acks)


def states(pipe: Pipeline) -> dict[str, str]:
    return {m.text: m.state.value for m in pipe.memories("shop")}


EXPECTED = {
    "The API server listens on port 8080.": "superseded",
    "The API server listens on port 9090.": "active",
    "The staging database runs Postgres 15.": "superseded",
    "The staging database runs Postgres 16.": "active",
}


def test_a_replay_gives_exactly_the_memory_states_the_scripted_answers_dictate(runtime_for: Any) -> None:
    with FakeOpenAI(replay_script()) as fake:
        rt, pipe = runtime_for(settings_for(fake.base_url))
        observe_replay(pipe)
        report = pipe.drain("shop")
        assert states(pipe) == EXPECTED
        assert report.dead == 0 and report.adjudicated == 1
        mems = pipe.memories("shop")
        assert {m.prompt_version for m in mems} == {"extract-v1"}
        port = next(m for m in mems if "9090" in m.text)
        assert (port.key, port.belief) == ("api server port", "9090")  # normalised
        units = {u.id: u for u in pipe.log_timeline("shop", limit=50)}
        assert all(set(m.source_unit_ids) <= set(units) and len(m.source_unit_ids) == 1 for m in mems)
        pg16 = next(m for m in mems if "16" in m.text)
        verdict = [e for e in pipe.detail("shop", pg16.id).history if "verdict" in e.reason]
        assert verdict and "openai:fake-model@judge-v1" in verdict[0].reason
        # six extractions, one verdict and one repair investigation (the turn that names a memory
        # tool is a miss signal), nothing else (the embedder is local here)
        bodies = chat_bodies(fake)
        assert len(bodies) == len(REPLAY) + 2
        assert sum(INVESTIGATE in fake.system_of(b) for b in bodies) == 1
        assert bodies[0]["response_format"]["type"] == "json_schema"
        # replaying the same log again sends nothing new: the receipts hold, the cache answers
        pipe.observe([TurnIn(project="shop", user=u, assistant="OK.", ts_ms=T0 + i * DAY, request_id=f"r{i}")
                      for i, (u, _) in enumerate(REPLAY)])
        pipe.drain("shop")
        assert states(pipe) == EXPECTED and len(chat_bodies(fake)) == len(REPLAY) + 2


OUTAGES = {
    "fail_n_times_503": [{"system_contains": EXTRACT, "status": 503, "times": 9}],
    "http_500": [{"status": 500, "times": 12}],
    "http_429_retry_after": [{"status": 429, "retry_after": 0.05, "times": 8}],
    "hang_past_the_timeout": [{"system_contains": EXTRACT, "hang_s": 4.0, "times": 4}],
}


@pytest.mark.parametrize("mode", sorted(OUTAGES))
def test_an_outage_during_a_replay_makes_jobs_wait_then_the_replay_completes(runtime_for: Any, mode: str) -> None:
    with FakeOpenAI(replay_script(failing=OUTAGES[mode])) as fake:
        # timeout 1 s: a hang (4 s) passes it, a normal answer on a loaded machine does not
        s = settings_for(fake.base_url, max_retries=1, breaker_failures=3, breaker_cooldown_s=0.1, timeout_s=1.0)
        rt, pipe = runtime_for(s)
        observe_replay(pipe)
        pipe.pump("shop")  # the first batch meets the outage
        counts = rt.log("shop").job_counts()["extract"]
        assert counts.get("dead", 0) == 0 and counts.get("pending", 0) >= 1
        waiting = rt.log("shop").jobs("pending", "extract")
        assert waiting and all(j.attempts == 0 for j in waiting)  # deferred: no attempt spent
        assert any(code in waiting[0].last_error for code in ("unavailable", "did not answer", "rate limited"))
        # observe keeps acknowledging while the endpoint is down (it never calls the model)
        ack = pipe.observe([TurnIn(project="shop", user="thanks!", ts_ms=T0 + 99 * DAY, request_id="late")])
        assert ack[0].created
        drain_until_done(pipe, "shop")
        assert pipe.deferred >= 1
        assert states(pipe) == EXPECTED  # nothing lost, nothing twice
        counts = rt.log("shop").job_counts()["extract"]
        assert counts == {"done": len(REPLAY) + 1}
        assert len(pipe.memories("shop")) == len(EXPECTED)


def test_an_outage_of_the_judge_defers_the_adjudication(runtime_for: Any) -> None:
    script = replay_script(failing=[{"system_contains": JUDGE, "status": 502, "times": 6}])
    with FakeOpenAI(script) as fake:
        rt, pipe = runtime_for(settings_for(fake.base_url, max_retries=1, breaker_failures=2, breaker_cooldown_s=0.1))
        observe_replay(pipe)
        drain_until_done(pipe, "shop")
        assert states(pipe) == EXPECTED
        adj = rt.engine("shop").job_counts()["adjudicate"]
        assert adj == {"done": 1}


# ---- failure modes, as the user sees them ----------------------------------------------------
def client_for(fake: FakeOpenAI, tmp_path: Path | None = None, sleeps: list[float] | None = None,
               **model: Any) -> OpenAIClient:
    s = settings_for(fake.base_url, **model).model
    waits = sleeps if sleeps is not None else []
    endpoint = Endpoint(s, sleep=waits.append)
    return OpenAIClient(s, tmp_path, endpoint=endpoint)


U1 = unit("u1", "the API listens on port 8080")


def test_http_500_after_retries_is_model_unavailable(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 500}]) as fake:
        sleeps: list[float] = []
        client = client_for(fake, tmp_path, sleeps, max_retries=2)
        with pytest.raises(ModelUnavailable) as info:
            client.extract([U1], "project:p")
        assert info.value.code == "model_unavailable"
        assert "HTTP 500 after 3 attempts" in info.value.message
        assert len(fake.requests) == 3 and len(sleeps) == 2
        assert sleeps[1] > sleeps[0] * 1.0  # exponential (with jitter in [d/2, d])


def test_429_honours_retry_after_then_succeeds(tmp_path: Path) -> None:
    script = [{"status": 429, "retry_after": 0.7, "times": 1},
              {"text": reply({"text": "The API server listens on port 8080."})}]
    with FakeOpenAI(script) as fake:
        sleeps: list[float] = []
        client = client_for(fake, tmp_path, sleeps, retry_max_s=5.0)
        (cand,) = client.extract([U1], "project:p")
        assert cand.text == "The API server listens on port 8080."
        assert sleeps and sleeps[0] >= 0.7
        assert [r["path"] for r in fake.requests] == ["/v1/chat/completions"] * 2


def test_persistent_429_is_reported_as_rate_limited(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 429, "retry_after": 0.01}]) as fake:
        with pytest.raises(ModelUnavailable, match="rate limited"):
            client_for(fake, tmp_path, max_retries=1).judge(mem("a", "x"), mem("b", "y"))


def test_a_hang_is_a_model_timeout(tmp_path: Path) -> None:
    with FakeOpenAI([{"hang_s": 5}]) as fake:
        t0 = time.monotonic()
        with pytest.raises(ModelTimeout) as info:
            client_for(fake, tmp_path, timeout_s=0.2, max_retries=1).extract([U1], "project:p")
        assert info.value.code == "model_timeout" and "did not answer within 0.2s (2 attempts)" in info.value.message
        assert time.monotonic() - t0 < 4


def test_an_unreachable_endpoint_is_model_unavailable(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = settings_for(f"http://127.0.0.1:{port}/v1", max_retries=1).model
    client = OpenAIClient(s, tmp_path, endpoint=Endpoint(s, sleep=lambda _: None))
    with pytest.raises(ModelUnavailable, match="cannot reach the model endpoint"):
        client.extract([U1], "project:p")


@pytest.mark.parametrize("failure", [{"malformed": True}, {"wrong_shape": True}])
def test_a_body_that_is_not_an_openai_response_is_a_bad_reply(tmp_path: Path, failure: dict[str, Any]) -> None:
    with FakeOpenAI([{**failure, "times": 1}, {"text": reply()}]) as fake:
        client = client_for(fake, tmp_path)
        with pytest.raises(ModelBadReply) as info:
            client.extract([U1], "project:p")
        assert info.value.code == "model_bad_reply"
        assert client.extract([U1], "project:p") == []  # control: the next answer is fine


def test_an_invalid_reply_is_asked_once_more_with_the_error_shown(tmp_path: Path) -> None:
    script = [{"system_contains": EXTRACT, "times": 1, "text": json.dumps({"facts": ["port 8080"]})},
              {"system_contains": EXTRACT, "text": reply({"text": "The API server listens on port 8080."})}]
    with FakeOpenAI(script) as fake:
        (cand,) = client_for(fake, tmp_path).extract([U1], "project:p")
        assert cand.text.endswith("8080.")
        first, second = chat_bodies(fake)
        assert second["messages"][-2] == {"role": "assistant", "content": json.dumps({"facts": ["port 8080"]})}
        assert "not valid" in second["messages"][-1]["content"] and "memories" in second["messages"][-1]["content"]


def test_two_invalid_replies_raise_bad_reply_and_the_job_is_retried_not_dropped(runtime_for: Any) -> None:
    with FakeOpenAI([{"system_contains": EXTRACT, "text": '{"verdict": "maybe"}'}]) as fake:
        rt, pipe = runtime_for(settings_for(fake.base_url))
        pipe.observe([TurnIn(project="shop", user="the API listens on port 8080", request_id="r1")])
        assert pipe.pump("shop") == (0, 1)
        (job,) = rt.log("shop").jobs("pending")
        assert job.attempts == 1 and "did not validate twice" in job.last_error
        assert len(chat_bodies(fake)) == 2
        with pytest.raises(ModelBadReply):
            client_for(fake).judge(mem("a", "x"), mem("b", "y"))  # judge: enum checked too


def test_an_api_key_refusal_says_what_to_set_and_is_not_retried(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 401}]) as fake:
        with pytest.raises(EndpointRejected) as info:
            client_for(fake, tmp_path).extract([U1], "project:p")
        assert isinstance(info.value, ModelError) and info.value.code == "model_error"
        assert "DYNMEM_OPENAI_API_KEY" in info.value.message and len(fake.requests) == 1


def test_the_circuit_opens_after_consecutive_failures_and_probes_after_the_cooldown(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 503, "times": 3}, {"text": reply()}]) as fake:
        client = client_for(fake, tmp_path, max_retries=0, breaker_failures=3, breaker_cooldown_s=0.3)
        for _ in range(3):
            with pytest.raises(ModelUnavailable):
                client.extract([U1], "project:p")
        with pytest.raises(ModelUnavailable, match="circuit open"):
            client.extract([U1], "project:p")
        assert len(fake.requests) == 3  # the open circuit sent nothing
        time.sleep(0.35)
        assert client.extract([U1], "project:p") == []  # the probe succeeds and closes it
        assert client.endpoint.breaker.consecutive == 0


def test_auto_structured_falls_back_to_json_mode_on_a_400_and_remembers(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 400, "times": 1}, {"text": reply()}]) as fake:
        client = client_for(fake, tmp_path)
        client.extract([U1], "project:p")
        client.extract([unit("u2", "we use pnpm")], "project:p")
        kinds = [b["response_format"]["type"] for b in chat_bodies(fake)]
        assert kinds == ["json_schema", "json_object", "json_object"]
    with FakeOpenAI([{"status": 400}]) as fake:  # control: forced json_schema does not fall back
        with pytest.raises(EndpointRejected):
            client_for(fake, tmp_path / "b", structured="json_schema").extract([U1], "project:p")


def test_the_openai_package_does_not_retry_on_its_own(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 500}]) as fake:
        with pytest.raises(ModelUnavailable):
            client_for(fake, tmp_path, max_retries=0).extract([U1], "project:p")
        assert len(fake.requests) == 1


# ---- extraction rules -------------------------------------------------------------------------
def test_extraction_keeps_only_cited_units_drops_self_activity_and_normalises_keys(tmp_path: Path) -> None:
    units = [unit("u1", "the API listens on port 8080", t=T0), unit("u2", "we use pnpm now", t=T0 + DAY)]
    text = reply(
        {"text": "The project uses pnpm.", "key": "The Package-Manager", "value": "PNPM", "kind": "decision",
         "source_unit_ids": ["u2", "u9"]},
        {"text": "An invented memory.", "source_unit_ids": ["u7"]},
        {"text": "The agent called memory_search for the port.", "source_unit_ids": ["u1"]},
        {"text": "Injected <dynmem-memory> said port 8080.", "source_unit_ids": ["u1"]},
        {"text": "The API server listens on port 8080.", "kind": "weird", "salience": 7, "source_unit_ids": ["u1"]},
    )
    with FakeOpenAI([{"text": text}]) as fake:
        cands = client_for(fake, tmp_path).extract(units, "project:p")
    assert [c.text for c in cands] == ["The project uses pnpm.", "The API server listens on port 8080."]
    pnpm, port = cands
    assert pnpm.source_unit_ids == ("u2",) and pnpm.valid_from_ms == T0 + DAY
    assert (pnpm.key, pnpm.belief, pnpm.kind) == ("package manager", "pnpm", Kind.DECISION)
    assert port.kind is Kind.FACT and port.salience == 1.0 and port.prompt_version == "extract-v1"


def test_injected_memory_blocks_are_not_sent_to_the_model(tmp_path: Path) -> None:
    u = unit("u1", "<dynmem-memory>\n- The API listens on port 7070.\n</dynmem-memory>\nwhat port do we use?")
    with FakeOpenAI([{"text": reply()}]) as fake:
        client_for(fake, tmp_path).extract([u], "project:p")
        sent = json.dumps(chat_bodies(fake))
    assert "7070" not in sent and "what port do we use?" in sent


def test_prompts_are_versioned_files(tmp_path: Path) -> None:
    for task in ("extract", "judge", "classify", "recognize"):
        p = load_prompt(task)
        assert p.version == f"{task}-v1" and "memory_" in p.text or task == "recognize"


# ---- judge, classify, recognize --------------------------------------------------------------
def test_judge_returns_the_verdict_and_who_decided(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": json.dumps({"verdict": "contradiction", "reason": "both claim to be current"})}]) as fake:
        j = client_for(fake, tmp_path).judge(mem("a", "The API port is 8080."), mem("b", "The API port is 9090."))
    assert j.verdict is Verdict.CONTRADICTION and j.reason == "both claim to be current"
    assert j.decided_by == "openai:fake-model@judge-v1"


def test_local_only_memories_never_reach_the_model(tmp_path: Path) -> None:
    secret_note = mem("b", "The on-call phone code is 4471.", sensitivity=Sensitivity.LOCAL_ONLY)
    normal = mem("a", "The API port is 8080.")
    with FakeOpenAI([{"text": json.dumps({"used": ["M1", "M2", "M9"]})}]) as fake:
        client = client_for(fake, tmp_path)
        assert client.judge(normal, secret_note).decided_by == "rules"
        assert client.classify(Candidate(text="The on-call code is 5000.", scope="project:p", valid_from_ms=T0),
                               [secret_note]).action == "create"
        used = client.recognize("The API is on 8080 and the code is 4471.", [normal, secret_note])
        assert used == ["a"]  # M2 and M9 are not labels that were shown
        sent = json.dumps(chat_bodies(fake))
        assert "4471" not in sent.replace("The API is on 8080 and the code is 4471.", "")
        assert "8080" in sent  # control: the normal memory was sent
        assert len(chat_bodies(fake)) == 1


def test_adjudication_service_uses_the_rules_judge_for_local_only(tmp_path: Path) -> None:
    from actors.adjudication_actor import AdjudicationService

    with FakeOpenAI([{"text": json.dumps({"verdict": "same", "reason": "r"})}]) as fake:
        svc = AdjudicationService.with_client(client_for(fake, tmp_path))
        local = mem("b", "The vault path is /srv/x.", sensitivity=Sensitivity.LOCAL_ONLY)
        assert svc.judge(mem("a", "The vault path is /srv/y."), local).decided_by == "rules"
        assert fake.requests == []
        assert svc.judge(mem("a", "x"), mem("c", "y")).decided_by.startswith("openai:")  # control


def test_classify_maps_labels_back_to_memory_ids_and_rejects_unknown_ones(tmp_path: Path) -> None:
    cand = Candidate(text="The API port is 9090.", key="api port", belief="9090", scope="project:p", valid_from_ms=T0)
    script = [{"times": 1, "text": json.dumps({"action": "update", "target": "N7", "reason": "?"})},
              {"text": json.dumps({"action": "update", "target": "N2", "reason": "port moved"})}]
    with FakeOpenAI(script) as fake:
        d = client_for(fake, tmp_path).classify(cand, [mem("m1", "Deploys use Helm."), mem("m2", "The API port is 8080.")])
        assert (d.action, d.target_id, d.reason) == ("update", "m2", "port moved")
        assert "N7" in chat_bodies(fake)[1]["messages"][-1]["content"]  # the error was shown


# ---- cache --------------------------------------------------------------------------------------
def test_a_second_identical_request_is_served_from_the_cache_in_a_0600_file(tmp_path: Path) -> None:
    script = [{"user_contains": "pnpm", "text": reply({"text": "The project uses pnpm."})},
              {"text": reply({"text": "The API server listens on port 8080."})}]
    with FakeOpenAI(script) as fake:
        client = client_for(fake, tmp_path)
        first = client.extract([U1], "project:p")
        again = client_for(fake, tmp_path).extract([U1], "project:p")  # a new client, same data dir
        assert first == again and len(fake.requests) == 1
        other = client.extract([unit("u2", "we use pnpm")], "project:p")  # control: another request goes out
        assert len(fake.requests) == 2 and other
    cache = ResponseCache(tmp_path / "cache", max_bytes=1 << 20)
    assert cache.count() == 2
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in (tmp_path / "cache").glob(f"{DB_NAME}*"))
    assert purge_matching(tmp_path / "cache", "PORT 8080") == 1
    assert cache.count() == 1 and purge_matching(tmp_path / "cache", "PORT 8080") == 0


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", max_bytes=300)
    keys = [f"{i:064x}" for i in range(5)]
    for k in keys[:3]:
        cache.put(k, "x" * 100)
    assert cache.size_bytes() == 300 and cache.count() == 3  # exactly at the bound: nothing evicted
    assert cache.get(keys[0]) == "x" * 100  # a hit: keys[0] becomes the most recently used
    cache.put(keys[3], "y" * 100)  # over the bound: the least recently used (keys[1]) goes
    cache.put(keys[4], "z" * 100)  # then keys[2]
    assert [cache.get(k) is not None for k in keys] == [True, False, False, True, True]
    assert cache.size_bytes() == 300
    cache.put(keys[4], "z" * 50)  # replacing a reply keeps the running total exact
    assert cache.size_bytes() == 250 and cache.count() == 3


def test_a_put_costs_the_same_statements_at_any_size(tmp_path: Path) -> None:
    import sqlite3

    cache = ResponseCache(tmp_path / "c", max_bytes=1 << 30)
    traced: list[str] = []

    def statements_of_one_put(n: int) -> list[str]:
        key = f"{n:064x}"
        with cache._conn() as conn:
            conn.set_trace_callback(traced.append)
        traced.clear()
        cache.put(key, f"reply {n}")
        with cache._conn() as conn:
            conn.set_trace_callback(None)
        return [t.replace(key, "KEY").replace(str(n), "N") for t in traced]

    small = statements_of_one_put(10_000_000)
    with sqlite3.connect(cache.path) as conn:  # 5,000 more entries, written directly
        conn.executemany("INSERT INTO replies (key, reply, size, used) VALUES (?, ?, ?, ?)",
                         [(f"{i:064x}", "r" * 10, 10, i) for i in range(5000)])
        conn.execute("UPDATE totals SET bytes = bytes + 50000, clock = clock + 5000 WHERE id = 1")
    large = statements_of_one_put(10_000_001)
    assert large == small and any("INSERT OR REPLACE INTO replies" in s for s in large)  # same statements at 1 or 5,001
    assert not any(word in s.upper() for s in large for word in ("SUM(", "COUNT(", "GLOB"))  # no scan, no listing
    assert cache.count() == 5002  # positive control: the rows really are there


def test_old_one_file_per_reply_caches_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / f"{1:064x}.json").write_text('{"reply": "The API server listens on port 8080."}')
    (folder / "notes.json").write_text("{}")  # not ours: left alone
    ResponseCache(folder, max_bytes=1000)
    assert sorted(p.name for p in folder.glob("*.json")) == ["notes.json"]


def test_cache_max_mb_zero_disables_the_cache(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": reply()}]) as fake:
        client = client_for(fake, tmp_path, cache_max_mb=0)
        client.extract([U1], "project:p")
        client.extract([U1], "project:p")
        assert len(fake.requests) == 2 and not (tmp_path / "cache").exists()


# ---- embeddings ---------------------------------------------------------------------------------
def test_the_openai_embedder_embeds_through_the_endpoint_in_batches(tmp_path: Path) -> None:
    from actors.embedder import make_embedder

    with FakeOpenAI() as fake:
        s = settings_for(fake.base_url)
        emb = make_embedder("openai", 2, settings=s.embedder, model=s.model)
        vecs = emb.embed(["the api listens on port 9090", "we use pnpm", "the API listens on port 7070"])
        assert vecs.shape == (3, 64) and abs(float(vecs[0] @ vecs[0]) - 1) < 1e-5
        assert float(vecs[0] @ vecs[2]) > float(vecs[0] @ vecs[1])
        assert [len(r["body"]["input"]) for r in fake.requests] == [2, 1]  # batches
        assert {r["body"]["dimensions"] for r in fake.requests} == {64}
    with FakeOpenAI([{"endpoint": "embeddings", "status": 503}]) as down:
        s = settings_for(down.base_url, max_retries=0)
        with pytest.raises(ModelUnavailable):
            make_embedder("openai", 8, settings=s.embedder, model=s.model).embed(["x"])


def test_the_openai_embedder_refuses_vectors_of_another_width() -> None:
    from actors.llm.openai_embedder import OpenAIEmbedder
    from engine.errors import IndexError_

    class Narrow:
        def embeddings(self, model: str, texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
            return [[1.0, 0.0, 0.0] for _ in texts]  # a server that ignores `dimensions`

    s = settings_for("http://127.0.0.1:9/v1")
    emb = OpenAIEmbedder(s.embedder, s.model, endpoint=Narrow())  # type: ignore[arg-type]
    with pytest.raises(IndexError_, match="width"):
        emb.embed(["x"])


# ---- secrets ------------------------------------------------------------------------------------
def _secret_table() -> list[tuple[str, str, str]]:
    path = Path(__file__).resolve().parents[2] / "engine" / "test_redact.py"
    spec = importlib.util.spec_from_file_location("_redact_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.SECRETS)


SECRETS = _secret_table()


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_no_secret_reaches_the_endpoint_or_any_file_and_the_rest_is_remembered(tmp_path: Path) -> None:
    assert len({name for name, _, _ in SECRETS}) >= 20
    turns = [(f"the staging host {i:02d} is stage{i:02d}.example.net; also {text}", secret)
             for i, (_, text, secret) in enumerate(SECRETS)]
    script: list[dict[str, Any]] = [
        # a parroting model: its answer carries a secret it could only have invented
        {"system_contains": EXTRACT, "user_contains": "host 00 ",
         "text": reply({"text": f"Staging host 00 is stage00.example.net and {SECRETS[0][2]}."})}]
    script += [{"system_contains": EXTRACT, "user_contains": f"host {i:02d} ",
                "text": reply({"text": f"Staging host {i:02d} is stage{i:02d}.example.net."})}
               for i in range(1, len(turns))]
    with FakeOpenAI(script) as fake:
        data = tmp_path / "data"
        rt = Runtime(data, settings_for(fake.base_url, embedder="openai"), use_ray=False)
        try:
            pipe = Pipeline(rt)
            pipe.observe([TurnIn(project="vault", user=u, assistant=f"Noted: {u}", ts_ms=T0 + i, request_id=f"s{i}")
                          for i, (u, _) in enumerate(turns)])
            report = pipe.drain("vault")
            texts = " ".join(m.text for m in pipe.memories("vault"))
        finally:
            rt.shutdown()
        recorded = json.dumps(fake.requests)
    assert report.dead == 0
    for i in range(len(turns)):  # positive control: every turn's ordinary content is remembered
        assert f"stage{i:02d}.example.net" in texts
    assert any(r["path"].endswith("/embeddings") for r in fake.requests)
    blobs = {p: p.read_bytes() for p in _files(data)}
    assert any(p.name.endswith(".sqlite") for p in blobs) and any(p.parent.name == "cache" for p in blobs)
    for name, text, secret in SECRETS:
        assert secret in text  # the turn really carried it
        assert secret not in recorded, f"{name} reached the model endpoint"
        assert json.dumps(secret)[1:-1] not in recorded, f"{name} reached the model endpoint (escaped)"
        for path, blob in blobs.items():
            assert secret.encode() not in blob, f"{name} found in {path.relative_to(data)}"


LLAMA_CPP_REFUSAL = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                     "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")


def test_a_server_that_refuses_json_schema_with_a_500_gets_json_mode_at_once(tmp_path: Path) -> None:
    # llama-cpp-python 0.3.36's server answers response_format json_schema with this HTTP 500 (measured)
    script = [{"status": 500, "message": LLAMA_CPP_REFUSAL, "times": 1},
              {"text": reply({"text": "The API listens on port 8080."})}]
    with FakeOpenAI(script) as fake:
        sleeps: list[float] = []
        client = client_for(fake, tmp_path, sleeps)
        [cand] = client.extract([U1], "project:p")
        formats = [b["response_format"]["type"] for b in chat_bodies(fake)]
    assert cand.text == "The API listens on port 8080." and client.structured == "json_object"
    assert formats == ["json_schema", "json_object"] and sleeps == []  # no retry, no backoff
    assert all(b["max_tokens"] == 1024 for b in chat_bodies(fake))  # every reply is bounded


def test_an_explicit_json_schema_refused_by_the_server_is_a_rejection_not_an_outage(tmp_path: Path) -> None:
    with FakeOpenAI([{"status": 500, "message": LLAMA_CPP_REFUSAL}]) as fake:
        client = client_for(fake, tmp_path, structured="json_schema")
        with pytest.raises(EndpointRejected, match="response_format"):
            client.extract([U1], "project:p")
        assert len(chat_bodies(fake)) == 1 and client.endpoint.breaker.consecutive == 0
    with FakeOpenAI([{"status": 500}]) as fake:  # control: a plain 500 is an outage, retried
        with pytest.raises(ModelUnavailable):
            client_for(fake, tmp_path, structured="json_schema").extract([U1], "project:p")
        assert len(chat_bodies(fake)) == 3
