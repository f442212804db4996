"""A scripted OpenAI-compatible server on loopback, for tests and for the opencode e2e run.

It answers ``GET /v1/models``, ``POST /v1/chat/completions`` (plain JSON, or SSE chunks when
the body has ``"stream": true``, in the format the OpenAI SDKs and the Vercel AI SDK's
``@ai-sdk/openai-compatible`` provider parse) and ``POST /v1/embeddings`` (deterministic
bag-of-words vectors, float or base64). Every request is recorded (path, headers with lowercase names, JSON body),
in memory and optionally as JSON Lines.

A script is a list of rules tried in order; the first rule whose conditions all hold answers.
A rule is a dict (so a script can live in a JSON file) or a :class:`Rule`::

    {"user_contains": "port",            # substring of the last user message (case-insensitive)
     "tool_offered": "memory_search",    # the request offers a tool of that name
     "tool_result": False,               # a tool result follows the last user message (or not)
     "system_contains": "9090",          # the system prompt (all system messages) has the text
     "endpoint": "chat",                 # "chat" (default), "embeddings" or "any"
     "times": 1,                         # the rule retires after answering this many times
     # one answer:
     "text": "Noted.",                                       # assistant text
     "tool_call": {"name": "memory_search", "arguments": {"query": "port"}},
     "status": 500,                                          # an HTTP error (with "retry_after": s,
                                                             #  "message": its error message)
     "hang_s": 5,                                            # sleep, then answer normally
     "malformed": True,                                      # a body that is not JSON
     "wrong_shape": True,                                    # JSON without the expected fields
     "fail_first": 2, "fail_status": 500}                    # fail N times, then answer

Requests whose first system message starts with "You are a title generator" get a short
title before any rule is tried; when no rule matches, a ``responder`` (a callable given the
request body, returning the answer text or None) is asked, for example
:func:`fakes.brain.answer`, which answers dynmem's own prompts; otherwise the answer is "OK.".

Use it from pytest (``with FakeOpenAI(script=[...]) as fake: fake.base_url``) or as a process:
``python -m tests.fakes.openai_server --port 0 --script rules.json --record requests.jsonl``
prints the port on its first line and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TITLE_PREFIX = "You are a title generator"
DEFAULT_TEXT = "OK."
DEFAULT_MODEL = "fake-model"
EMBEDDING_DIM = 64

_RULE_KEYS = {
    "user_contains", "tool_offered", "tool_result", "system_contains", "endpoint", "times",
    "text", "tool_call", "status", "retry_after", "hang_s", "malformed", "wrong_shape",
    "fail_first", "fail_status", "name", "message",
}


@dataclass
class Rule:
    """One scripted answer and the conditions under which it is given."""

    user_contains: str | None = None
    tool_offered: str | None = None
    tool_result: bool | None = None
    system_contains: str | None = None
    endpoint: str = "chat"
    times: int | None = None
    text: str | None = None
    tool_call: dict[str, Any] | None = None
    status: int | None = None
    retry_after: float | None = None
    hang_s: float | None = None
    malformed: bool = False
    wrong_shape: bool = False
    fail_first: int = 0
    fail_status: int = 500
    name: str | None = None
    message: str | None = None
    hits: int = field(default=0, compare=False)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Rule:
        unknown = set(raw) - _RULE_KEYS
        if unknown:
            raise ValueError(f"unknown rule keys: {sorted(unknown)}")
        rule = cls(**dict(raw))
        if rule.endpoint not in ("chat", "embeddings", "any"):
            raise ValueError(f"endpoint must be chat, embeddings or any, not {rule.endpoint!r}")
        return rule

    def matches(self, endpoint: str, req: ChatView) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.endpoint != "any" and self.endpoint != endpoint:
            return False
        if self.user_contains is not None and self.user_contains.lower() not in req.last_user.lower():
            return False
        if self.tool_offered is not None and self.tool_offered not in req.tool_names:
            return False
        if self.tool_result is not None and self.tool_result != req.has_tool_result:
            return False
        if self.system_contains is not None and self.system_contains not in req.system:
            return False
        return True


def _text_of(content: Any) -> str:
    """Text of an OpenAI message content: a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


@dataclass(frozen=True)
class ChatView:
    """The parts of a chat request that rules look at."""

    system: str
    first_system: str
    last_user: str
    tool_names: frozenset[str]
    has_tool_result: bool

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> ChatView:
        messages = body.get("messages") or []
        systems = [_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
        last_user_at = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        last_user = _text_of(messages[last_user_at].get("content")) if last_user_at >= 0 else ""
        tools = frozenset(
            t.get("function", {}).get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)
        )
        has_result = any(m.get("role") == "tool" for m in messages[last_user_at + 1 :])
        return cls("\n".join(systems), systems[0] if systems else "", last_user, tools, has_result)


def embed_text(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector: hashed bag of lowercase words (shared words -> similar vectors)."""
    vec = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = hashlib.sha256(word.encode()).digest()
        vec[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        return [1.0] + [0.0] * (dim - 1)
    return [x / norm for x in vec]


def _title_of(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text)[:5]
    return " ".join(words).capitalize() or "Untitled"


class FakeOpenAI:
    """A scripted OpenAI-compatible HTTP server running in a background thread.

    Args:
        script: rules (dicts or :class:`Rule`), tried in order.
        record_path: if given, each request is also appended to this JSONL file.
        port: 0 picks a free port.
        model: the model id listed by ``/v1/models`` and echoed in answers.
    """

    def __init__(
        self,
        script: Iterable[Mapping[str, Any] | Rule] = (),
        *,
        record_path: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = DEFAULT_MODEL,
        responder: Callable[[Mapping[str, Any]], str | None] | None = None,
        latency_s: float = 0.0,
    ) -> None:
        self.rules = [r if isinstance(r, Rule) else Rule.from_dict(r) for r in script]
        self.latency_s = latency_s  # every POST answers after this long (a latency-bound endpoint)
        self.responder = responder
        self.record_path = Path(record_path) if record_path else None
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._counter = 0
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        """Serve in a daemon thread; returns the base URL (ending in ``/v1``)."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving; wakes hanging handlers."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inspection ------------------------------------------------------------------------
    def chat_requests(self) -> list[dict[str, Any]]:
        """Recorded chat-completion bodies, oldest first."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    @staticmethod
    def system_of(body: Mapping[str, Any]) -> str:
        return ChatView.of(body).system

    @staticmethod
    def tool_results_of(body: Mapping[str, Any]) -> list[str]:
        return [_text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "tool"]

    # -- request handling (called from handler threads) -------------------------------------
    def _record(self, method: str, path: str, headers: Mapping[str, str], body: Any) -> None:
        entry = {"ts": time.time(), "method": method, "path": path, "headers": {k.lower(): v for k, v in headers.items()}, "body": body}
        with self._lock:
            self.requests.append(entry)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry) + "\n")

    def _pick(self, endpoint: str, view: ChatView) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(endpoint, view):
                    rule.hits += 1
                    return rule
        return None

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def handle(self) -> None:
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout under test): nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        # -- plumbing ------------------------------------------------------------------
        def _send(self, status: int, payload: bytes, content_type: str = "application/json",
                  extra: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            try:
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout under test): nothing to answer

        def _json(self, status: int, obj: Any, extra: Mapping[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), extra=extra)

        def _error(self, status: int, message: str, retry_after: float | None = None) -> None:
            extra = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            self._json(status, {"error": {"message": message, "type": kind, "code": kind}}, extra)

        def _read_body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return {"_raw": raw.decode("utf-8", "replace")}

        # -- routes --------------------------------------------------------------------
        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            fake._record("GET", self.path, self.headers, None)
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}]})
            else:
                self._error(404, f"no route GET {self.path}")

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            body = self._read_body()
            fake._record("POST", self.path, self.headers, body)
            path = self.path.split("?")[0].rstrip("/")
            if fake.latency_s > 0:
                fake._stopping.wait(fake.latency_s)
            if not isinstance(body, dict):
                self._error(400, "body must be a JSON object")
            elif path.endswith("/chat/completions"):
                self._chat(body)
            elif path.endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._error(404, f"no route POST {self.path}")

        def _failure(self, rule: Rule) -> bool:
            """Carry out the rule's failure mode, if any; True when the answer was sent."""
            if rule.hang_s:
                fake._stopping.wait(rule.hang_s)
            if rule.fail_first and rule.hits <= rule.fail_first:
                self._error(rule.fail_status, f"scripted failure {rule.hits}/{rule.fail_first}", rule.retry_after)
                return True
            if rule.status is not None:
                self._error(rule.status, rule.message or f"scripted HTTP {rule.status}", rule.retry_after)
                return True
            if rule.malformed:
                self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ')
                return True
            if rule.wrong_shape:
                self._json(200, {"unexpected": True, "data": "not an OpenAI response"})
                return True
            return False

        def _chat(self, body: dict[str, Any]) -> None:
            view = ChatView.of(body)
            if view.first_system.startswith(TITLE_PREFIX):
                rule: Rule | None = Rule(text=_title_of(view.last_user))
            else:
                rule = fake._pick("chat", view)
            if rule is None and fake.responder is not None:
                text = fake.responder(body)
                rule = Rule(text=text) if text is not None else None
            rule = rule or Rule(text=DEFAULT_TEXT)
            if self._failure(rule):
                return
            n = fake._next_id()
            text = rule.text if rule.text is not None else (None if rule.tool_call else DEFAULT_TEXT)
            tool_calls = None
            if rule.tool_call is not None:
                args = rule.tool_call.get("arguments", {})
                tool_calls = [{"id": f"call_{n}", "type": "function", "function": {
                    "name": rule.tool_call["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args)}}]
            finish = "tool_calls" if tool_calls else "stop"
            prompt_tokens = sum(len(_text_of(m.get("content")).split()) for m in body.get("messages") or [])
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len((text or "").split()) + 1,
                     "total_tokens": prompt_tokens + len((text or "").split()) + 1}
            base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": body.get("model") or fake.model}
            if body.get("stream"):
                self._stream(base, text, tool_calls, finish, usage)
                return
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if tool_calls:
                message["tool_calls"] = tool_calls
            if body.get("response_format", {}).get("type") in ("json_object", "json_schema") and text is not None:
                # JSON mode: a script's text is sent as is; plain default text is wrapped as JSON.
                try:
                    json.loads(text)
                except ValueError:
                    message["content"] = json.dumps({"text": text})
            self._json(200, {**base, "object": "chat.completion", "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}], "usage": usage})

        def _stream(self, base: dict[str, Any], text: str | None, tool_calls: list[dict[str, Any]] | None,
                    finish: str, usage: dict[str, int]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True

            def chunk(delta: dict[str, Any], finish_reason: str | None = None, **more: Any) -> None:
                obj = {**base, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **more}
                self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                self.wfile.flush()

            chunk({"role": "assistant", "content": ""})
            if text:
                words = text.split(" ")
                for i, word in enumerate(words):
                    chunk({"content": word if i == len(words) - 1 else word + " "})
            for i, call in enumerate(tool_calls or []):
                chunk({"tool_calls": [{"index": i, **call}]})
            chunk({}, finish, usage=usage)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _embeddings(self, body: dict[str, Any]) -> None:
            view = ChatView("", "", json.dumps(body.get("input")), frozenset(), False)
            rule = fake._pick("embeddings", view)
            if rule is not None and self._failure(rule):
                return
            raw = body.get("input")
            inputs = [raw] if isinstance(raw, str) else list(raw or [])
            dim = int(body.get("dimensions") or EMBEDDING_DIM)
            data = []
            for i, item in enumerate(inputs):
                vec = embed_text(item if isinstance(item, str) else " ".join(map(str, item)), dim)
                emb: Any = vec
                if body.get("encoding_format") == "base64":
                    emb = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
                data.append({"object": "embedding", "index": i, "embedding": emb})
            tokens = sum(len(str(x).split()) for x in inputs)
            self._json(200, {"object": "list", "data": data, "model": body.get("model") or fake.model,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    return Handler


def main(argv: list[str] | None = None) -> int:
    """Serve a script from a JSON file until SIGTERM/SIGINT; print the port first."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--script", type=Path, help="JSON file: a list of rules")
    p.add_argument("--record", type=Path, help="append each request to this JSONL file")
    p.add_argument("--brain", action="store_true", help="answer dynmem's own prompts with fakes.brain")
    p.add_argument("--latency-ms", type=float, default=0.0, help="answer every POST after this many milliseconds")
    args = p.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else []
    responder = None
    if args.brain:
        from fakes.brain import answer as responder
    fake = FakeOpenAI(script, record_path=args.record, host=args.host, port=args.port, responder=responder,
                      latency_s=args.latency_ms / 1000)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    fake.start()
    print(fake.port, flush=True)
    done.wait()
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
