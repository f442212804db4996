from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from fakes.openai_server import FakeOpenAI, embed_text

ROOT = Path(__file__).resolve().parents[2]


def client_for(fake: FakeOpenAI, **kw: Any) -> openai.OpenAI:
    kw.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=fake.base_url, api_key="dummy", **kw)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def ask(client: openai.OpenAI, text: str, **kw: Any) -> Any:
    return client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": text}], **kw)


def test_default_answer_is_ok_and_the_request_is_recorded(fake: FakeOpenAI) -> None:
    reply = ask(client_for(fake), "hello")
    assert reply.choices[0].message.content == "OK."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens > 0
    (req,) = fake.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == "Bearer dummy"
    assert req["body"]["messages"][-1]["content"] == "hello"


def test_models_are_listed(fake: FakeOpenAI) -> None:
    assert [m.id for m in client_for(fake).models.list()] == ["fake-model"]


def test_rules_match_in_order_on_user_text_and_system_prompt() -> None:
    script = [
        {"system_contains": "MEMORY", "user_contains": "port", "text": "9090 from memory"},
        {"user_contains": "PORT", "text": "no idea"},
    ]
    with FakeOpenAI(script) as fake:
        client = client_for(fake)
        with_memory = client.chat.completions.create(model="m", messages=[
            {"role": "system", "content": "MEMORY: the API listens on port 9090"},
            {"role": "user", "content": "which port?"}])
        assert with_memory.choices[0].message.content == "9090 from memory"
        assert ask(client, "which port?").choices[0].message.content == "no idea"  # control: no system
        assert ask(client, "hello").choices[0].message.content == "OK."


def test_times_retires_a_rule() -> None:
    with FakeOpenAI([{"text": "first", "times": 1}, {"text": "later"}]) as fake:
        client = client_for(fake)
        assert [ask(client, "x").choices[0].message.content for _ in range(3)] == ["first", "later", "later"]


def test_json_mode_returns_parseable_json() -> None:
    with FakeOpenAI([{"user_contains": "extract", "text": '{"facts": ["port 9090"]}'}]) as fake:
        client = client_for(fake)
        scripted = ask(client, "extract facts", response_format={"type": "json_object"})
        assert json.loads(scripted.choices[0].message.content or "") == {"facts": ["port 9090"]}
        default = ask(client, "anything", response_format={"type": "json_object"})
        assert json.loads(default.choices[0].message.content or "") == {"text": "OK."}


TOOLS = [{"type": "function", "function": {"name": "memory_search", "description": "search",
                                           "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]
TOOL_SCRIPT = [
    {"tool_offered": "memory_search", "tool_result": False,
     "tool_call": {"name": "memory_search", "arguments": {"query": "api port"}}},
    {"tool_result": True, "text": "Found it."},
]


def test_tool_call_then_answer_after_the_tool_result() -> None:
    with FakeOpenAI(TOOL_SCRIPT) as fake:
        check_tool_round_trip(fake)


def check_tool_round_trip(fake: FakeOpenAI) -> None:
    client = client_for(fake)
    messages: list[Any] = [{"role": "user", "content": "what port?"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.function.name == "memory_search"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"query": "api port"}  # type: ignore[union-attr]
    messages += [choice.message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "[m1] port 9090"}]
    second = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    assert second.choices[0].message.content == "Found it."
    assert FakeOpenAI.tool_results_of(fake.chat_requests()[-1]) == ["[m1] port 9090"]
    # control: without the tool in the request, no tool call
    assert ask(client, "what port?").choices[0].message.tool_calls is None


def test_streaming_text_has_finish_reason_and_usage() -> None:
    with FakeOpenAI([{"text": "We use pnpm now."}]) as fake:
        stream = ask(client_for(fake), "pm?", stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "We use pnpm now."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_streaming_tool_call() -> None:
    with FakeOpenAI(TOOL_SCRIPT) as fake:
        stream = client_for(fake).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "port?"}], tools=TOOLS, stream=True)  # type: ignore[arg-type]
        chunks = list(stream)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    (call,) = calls
    assert call.function is not None and call.function.name == "memory_search"
    assert json.loads(call.function.arguments or "") == {"query": "api port"}


def test_title_requests_get_a_short_title(fake: FakeOpenAI) -> None:
    reply = client_for(fake).chat.completions.create(model="m", messages=[
        {"role": "system", "content": "You are a title generator. You output ONLY a thread title."},
        {"role": "user", "content": "the API listens on port 9090, remember that please"}])
    title = reply.choices[0].message.content or ""
    assert title and len(title.split()) <= 5 and title != "OK."


def test_embeddings_are_deterministic_unit_vectors_in_float_and_base64(fake: FakeOpenAI) -> None:
    client = client_for(fake)
    texts = ["the api listens on port 9090", "the API listens on port 7070", "we use pnpm"]
    got = client.embeddings.create(model="e", input=texts)  # the client asks for base64 by default
    vecs = [d.embedding for d in got.data]
    assert [len(v) for v in vecs] == [64, 64, 64]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vecs)
    assert vecs == [pytest.approx(embed_text(t)) for t in texts]
    floats = client.embeddings.create(model="e", input="we use pnpm", encoding_format="float", dimensions=16)
    assert floats.data[0].embedding == pytest.approx(embed_text("we use pnpm", 16))

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(vecs[0], vecs[1]) > cos(vecs[0], vecs[2])


def test_http_500_is_an_internal_server_error() -> None:
    with FakeOpenAI([{"status": 500}]) as fake, pytest.raises(openai.InternalServerError):
        ask(client_for(fake), "x")


def test_429_carries_retry_after_and_the_client_honours_it() -> None:
    with FakeOpenAI([{"status": 429, "retry_after": 0.2, "times": 1}, {"text": "after wait"}]) as fake:
        with pytest.raises(openai.RateLimitError) as info:
            ask(client_for(fake), "x")
        assert info.value.response.headers["Retry-After"] == "0.2"
        fake.rules[0].hits = 0  # re-arm: one 429, then the retrying client gets through
        t0 = time.monotonic()
        reply = ask(client_for(fake, max_retries=2), "x")
        assert reply.choices[0].message.content == "after wait"
        assert time.monotonic() - t0 >= 0.2


def test_a_hang_times_out_in_the_client_and_stop_wakes_it() -> None:
    with FakeOpenAI([{"hang_s": 30}]) as fake:
        t0 = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            ask(client_for(fake, timeout=0.5), "x")
        assert time.monotonic() - t0 < 5
    # __exit__ returned promptly although a handler was still sleeping


def test_malformed_json_body_fails_to_decode_in_the_client() -> None:
    with FakeOpenAI([{"malformed": True, "times": 1}]) as fake:
        client = client_for(fake)
        with pytest.raises(json.JSONDecodeError):
            ask(client, "x")
        assert ask(client, "x").choices[0].message.content == "OK."  # control


def test_wrong_shape_json_has_no_choices() -> None:
    with FakeOpenAI([{"wrong_shape": True, "times": 1}]) as fake:
        client = client_for(fake)
        reply = ask(client, "x")
        assert not getattr(reply, "choices", None)
        assert ask(client, "x").choices[0].message.content == "OK."  # control


def test_fail_first_then_succeed() -> None:
    with FakeOpenAI([{"fail_first": 2, "fail_status": 503, "text": "finally"}]) as fake:
        client = client_for(fake)
        for _ in range(2):
            with pytest.raises(openai.InternalServerError):
                ask(client, "x")
        assert ask(client, "x").choices[0].message.content == "finally"
        # the retrying client sees it as one slow success
        fake.rules[0].hits = 0
        assert ask(client_for(fake, max_retries=2), "x").choices[0].message.content == "finally"


def test_failure_modes_apply_to_embeddings() -> None:
    with FakeOpenAI([{"endpoint": "embeddings", "fail_first": 1}]) as fake:
        client = client_for(fake)
        with pytest.raises(openai.InternalServerError):
            client.embeddings.create(model="e", input="x")
        assert len(client.embeddings.create(model="e", input="x").data) == 1
        assert ask(client, "x").choices[0].message.content == "OK."  # chat unaffected


def test_requests_are_recorded_to_jsonl(tmp_path: Path) -> None:
    record = tmp_path / "req.jsonl"
    with FakeOpenAI(record_path=record) as fake:
        ask(client_for(fake), "one")
        ask(client_for(fake), "two")
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    assert [x["body"]["messages"][0]["content"] for x in lines] == ["one", "two"]


def test_unknown_rule_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown rule keys"):
        FakeOpenAI([{"user_contain": "typo"}])


def test_runs_as_a_standalone_process(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"user_contains": "ping", "text": "pong"}]))
    record = tmp_path / "req.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", "0", "--script", str(script),
         "--record", str(record)],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "ping"}]}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.load(resp)["choices"][0]["message"]["content"] == "pong"
        assert json.loads(record.read_text())["path"] == "/v1/chat/completions"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        if proc.stdout is not None:
            proc.stdout.close()
