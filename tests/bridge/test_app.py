"""The HTTP API in-process: auth, the error table, isolation, idempotence and the route set.

Every app here runs over ``Runtime(use_ray=False)``; the background worker is not running,
so tests call ``pipe.drain(project)`` after an observe to distil it synchronously.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from actors.launch import Runtime
from actors.pipeline import Pipeline
from bridge.app import MAX_BODY_BYTES, create_app
from bridge.auth import REVIEW_TOKEN_FILE, TOKEN_FILE, Tokens
from engine.errors import AuthError, Forbidden
from engine.settings import EmbedderSettings, Settings

PORT_QUERY = "which port does the dev server run on?"


@dataclass
class Api:
    client: TestClient
    pipe: Pipeline
    data_dir: Path
    token: str
    review_token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def post(self, path: str, body: Any, **kw: Any) -> Any:
        return self.client.post(path, json=body, headers=self.auth, **kw)

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(path, params=params, headers=self.auth)

    def observe(self, project: str, user: str, assistant: str = "ok", **extra: Any) -> dict[str, Any]:
        r = self.post("/v1/observe", {"project": project, "session": "s1", "user": user, "assistant": assistant, **extra})
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]

    def recall(self, project: str, query: str, **extra: Any) -> dict[str, Any]:
        r = self.post("/v1/recall", {"project": project, "query": query, **extra})
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]


def _api(tmp_path: Path, embedder: str) -> Iterator[Api]:
    settings = Settings().model_copy(update={"embedder": EmbedderSettings(name=embedder)})
    rt = Runtime(tmp_path, settings, use_ray=False)
    pipe = Pipeline(rt)
    app = create_app(pipe, tmp_path)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Api(client, pipe, tmp_path,
                  token=(tmp_path / TOKEN_FILE).read_text().strip(),
                  review_token=(tmp_path / REVIEW_TOKEN_FILE).read_text().strip())
    rt.shutdown()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    """Hash embedder: fast, for tests where recall semantics do not matter."""
    yield from _api(tmp_path, "hash")


@pytest.fixture
def sem_api(tmp_path: Path) -> Iterator[Api]:
    """The bundled MiniLM: for tests that depend on recall quality."""
    yield from _api(tmp_path, "minilm")


def assert_error(r: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    doc = r.json()
    assert set(doc) == {"error", "code"}, doc
    assert isinstance(doc["error"], str) and doc["error"]
    assert isinstance(doc["code"], str) and doc["code"]
    if code is not None:
        assert doc["code"] == code, doc
    return doc  # type: ignore[no-any-return]


# ---- auth -------------------------------------------------------------------------------
def test_token_files_are_private(api: Api) -> None:
    for name in (TOKEN_FILE, REVIEW_TOKEN_FILE):
        mode = stat.S_IMODE((api.data_dir / name).stat().st_mode)
        assert mode == 0o600, oct(mode)
    assert api.token != api.review_token
    assert len(api.token) >= 32


def test_tokens_survive_a_restart_and_tighten_loose_modes(tmp_path: Path) -> None:
    first = Tokens(tmp_path)
    (tmp_path / TOKEN_FILE).chmod(0o644)
    second = Tokens(tmp_path)
    assert (second.api, second.review) == (first.api, first.review)
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600


def test_missing_or_wrong_token_is_401(api: Api) -> None:
    body = {"project": "p", "query": "anything"}
    assert_error(api.client.post("/v1/recall", json=body), 401, "unauthorized")
    assert_error(api.client.post("/v1/recall", json=body, headers={"Authorization": "Bearer nope"}), 401, "unauthorized")
    assert_error(api.client.post("/v1/recall", json=body, headers={"Authorization": api.token}), 401, "unauthorized")
    assert_error(api.client.get("/v1/stats", params={"project": "p"}), 401, "unauthorized")
    # positive controls: the right token, and health without any token
    assert api.client.post("/v1/recall", json=body, headers=api.auth).status_code == 200
    assert api.client.get("/v1/health").json() == {"ok": True, "version": "0.1.0"}


def test_review_decisions_need_the_review_token() -> None:
    """``POST /v1/reviews/{id}`` does not exist yet; the auth mapping is checked directly."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        tokens = Tokens(Path(d))
        with pytest.raises(Forbidden):
            tokens.check_review(f"Bearer {tokens.api}")
        with pytest.raises(AuthError) as wrong:
            tokens.check_review("Bearer not-a-token")
        assert not isinstance(wrong.value, Forbidden)
        with pytest.raises(AuthError):
            tokens.check_review(None)
        tokens.check_review(f"Bearer {tokens.review}")  # positive control


def test_review_route_with_the_api_token_is_403(api: Api) -> None:
    r = api.client.post("/v1/reviews/t_1", json={"verdict": "keep_old"}, headers=api.auth)
    assert_error(r, 403, "forbidden")
    r = api.client.post("/v1/reviews/t_1", json={"verdict": "keep_old"}, headers={"Authorization": "Bearer x"})
    assert_error(r, 401, "unauthorized")
    # positive control: the review token passes the guard (the route itself is not built yet -> 404)
    r = api.client.post("/v1/reviews/t_1", json={"verdict": "keep_old"},
                        headers={"Authorization": f"Bearer {api.review_token}"})
    assert r.status_code != 403 and r.status_code != 401, r.text


# ---- the error table ----------------------------------------------------------------------
def test_malformed_json_is_400(api: Api) -> None:
    r = api.client.post("/v1/observe", content=b'{"project": "p", "user": ', headers={**api.auth, "Content-Type": "application/json"})
    assert_error(r, 400, "malformed_json")
    ok = api.client.post("/v1/observe", content=b'{"project": "p", "user": "hi"}',
                         headers={**api.auth, "Content-Type": "application/json"})
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/observe", {"project": "p", "user": 17}, "user"),
        ("/v1/observe", {"project": "p", "user": "hi", "bogus": 1}, "bogus"),
        ("/v1/observe", {"project": "p"}, "user"),
        ("/v1/observe", [{"project": "p", "user": "hi"}], "body"),
        ("/v1/recall", {"project": "p", "query": "x", "k": "many"}, "k"),
        ("/v1/recall", {"project": "p", "query": "x", "k": 0}, "k"),
        ("/v1/recall", {"project": "p", "query": "x", "k": "5"}, "k"),
        ("/v1/recall", {"project": "p", "query": "x", "passive": 1}, "passive"),
        ("/v1/memories", {"project": "p", "text": "x", "ttl_hours": True}, "ttl_hours"),
        ("/v1/log/timeline", {"project": "p", "around_turn": 2**63}, "around_turn"),
        ("/v1/log/search", {"project": "p", "query": "a\x00b"}, "query"),
        ("/v1/log/search", {"project": "a\x01b", "query": "x"}, "project"),
        ("/v1/recall", {"project": "p", "query": "x", "extra": True}, "extra"),
        ("/v1/recall", {"project": "", "query": "x"}, "project"),
        ("/v1/memories", {"project": "p", "text": "x", "tier": "forever"}, "tier"),
        ("/v1/feedback", {"project": "p", "retrieval_id": "", "answer": "x"}, "retrieval_id"),
        ("/v1/log/search", {"project": "p", "query": "x", "limit": 10_000}, "limit"),
    ],
)
def test_invalid_body_is_422_and_names_the_field(api: Api, path: str, body: Any, field: str) -> None:
    doc = assert_error(api.post(path, body), 422, "invalid_input")
    assert field in doc["error"]


def test_empty_query_is_rejected(api: Api) -> None:
    for query in ("", "   "):
        doc = assert_error(api.post("/v1/recall", {"project": "p", "query": query}), 422)
        assert doc["code"] in ("empty_query", "invalid_input")
    assert api.post("/v1/recall", {"project": "p", "query": "port"}).status_code == 200


def test_bad_timestamp_is_a_422_input_error(api: Api) -> None:
    doc = assert_error(api.post("/v1/observe", {"project": "p", "user": "hi", "ts": "yesterday-ish"}), 422, "invalid_input")
    assert "ts" in doc["error"]
    doc = assert_error(api.post("/v1/recall", {"project": "p", "query": "x", "as_of": "soon"}), 422, "invalid_input")
    assert "as_of" in doc["error"]
    assert api.post("/v1/observe", {"project": "p", "user": "hi", "ts": "2026-03-02T10:15:00Z"}).status_code == 200


def test_invalid_project_name_is_422(api: Api) -> None:
    assert_error(api.post("/v1/observe", {"project": "a\x00b", "user": "hi"}), 422, "invalid_input")
    assert_error(api.post("/v1/observe", {"project": " p", "user": "hi"}), 422, "invalid_input")
    assert api.post("/v1/observe", {"project": "/home/dev/shop-api", "user": "hi"}).status_code == 200


def test_oversized_body_is_413(api: Api) -> None:
    big = {"project": "p", "user": "x" * (MAX_BODY_BYTES + 10)}
    assert_error(api.post("/v1/observe", big), 413, "payload_too_large")
    # no Content-Length (chunked): the guard still counts the bytes
    chunks = iter([b'{"project": "p", "user": "', b"x" * (MAX_BODY_BYTES + 10), b'"}'])
    r = api.client.post("/v1/observe", content=chunks, headers={**api.auth, "Content-Type": "application/json"})
    assert_error(r, 413, "payload_too_large")
    assert api.post("/v1/observe", {"project": "p", "user": "x" * 100_000}).status_code == 200


def test_a_user_message_over_the_shared_limit_is_refused_and_one_at_the_limit_is_taken(api: Api) -> None:
    from engine.limits import MAX_USER_CHARS

    # the same limit as a replayed history line (tests/actors/test_replay_robust.py); both bodies fit MAX_BODY_BYTES
    assert MAX_USER_CHARS + 100 < MAX_BODY_BYTES
    assert_error(api.post("/v1/observe", {"project": "p", "user": "y" * (MAX_USER_CHARS + 1)}), 422, "invalid_input")
    assert api.post("/v1/observe", {"project": "p", "user": "y" * MAX_USER_CHARS}).status_code == 200  # control


def test_non_json_content_type_is_415(api: Api) -> None:
    r = api.client.post("/v1/observe", content=b'{"project": "p", "user": "hi"}',
                        headers={**api.auth, "Content-Type": "text/plain"})
    assert_error(r, 415, "unsupported_media_type")
    r = api.client.post("/v1/observe", data={"project": "p", "user": "hi"}, headers=api.auth)
    assert_error(r, 415, "unsupported_media_type")
    r = api.client.post("/v1/observe", content=b'{"project": "p", "user": "hi"}',
                        headers={**api.auth, "Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 200, r.text


def test_unknown_memory_is_404(api: Api) -> None:
    assert_error(api.get("/v1/memories/m_missing", project="p"), 404, "not_found")
    assert_error(api.get("/v1/memories/m_missing/why", project="p"), 404, "not_found")
    assert_error(api.client.delete("/v1/memories/m_missing", params={"project": "p"}, headers=api.auth), 404, "not_found")
    assert_error(api.post("/v1/log/window", {"project": "p", "unit_id": "u404"}), 404, "not_found")
    assert_error(api.post("/v1/feedback", {"project": "p", "retrieval_id": "r_missing", "answer": "x"}), 404, "not_found")
    made = api.post("/v1/memories", {"project": "p", "text": "The API listens on port 7000."}).json()["memory_ids"][0]
    assert api.get(f"/v1/memories/{made}", project="p").status_code == 200


def test_unknown_route_and_method_are_json_errors(api: Api) -> None:
    assert_error(api.get("/v1/nothing-here"), 404, "not_found")
    assert_error(api.client.get("/nothing-here"), 404, "not_found")
    assert_error(api.client.put("/v1/observe", json={}, headers=api.auth), 405, "method_not_allowed")


def test_a_server_fault_is_a_json_500_without_a_traceback(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **kw: Any) -> Any:
        raise RuntimeError("disk on fire /secret/path")

    monkeypatch.setattr(api.pipe, "stats", boom)
    doc = assert_error(api.get("/v1/stats", project="p"), 500, "internal")
    assert "secret" not in doc["error"] and "Traceback" not in doc["error"]


# ---- behaviour ----------------------------------------------------------------------------
def test_two_projects_never_see_each_others_memories(sem_api: Api) -> None:
    a, b = "/home/dev/alpha", "/home/dev/beta"
    sem_api.observe(a, "the dev server runs on port 8080", "Noted: port 8080.")
    sem_api.observe(b, "the dev server runs on port 9090", "Noted: port 9090.")
    sem_api.pipe.drain(a)
    sem_api.pipe.drain(b)
    ra, rb = sem_api.recall(a, PORT_QUERY), sem_api.recall(b, PORT_QUERY)
    # positive controls: each project recalls its own port
    assert "8080" in ra["context"] and any("8080" in m["text"] for m in ra["memories"])
    assert "9090" in rb["context"] and any("9090" in m["text"] for m in rb["memories"])
    # and never the other's
    assert "9090" not in ra["context"] and all("9090" not in m["text"] for m in ra["memories"])
    assert "8080" not in rb["context"] and all("8080" not in m["text"] for m in rb["memories"])
    assert {m["scope"] for m in ra["memories"]} == {f"project:{a}"}
    assert {m["scope"] for m in rb["memories"]} == {f"project:{b}"}
    # listing, showing and the log are per project too
    ids_a = {m["id"] for m in sem_api.get("/v1/memories", project=a).json()["memories"]}
    ids_b = {m["id"] for m in sem_api.get("/v1/memories", project=b).json()["memories"]}
    assert ids_a and ids_b
    for mid in ids_b:
        assert_error(sem_api.get(f"/v1/memories/{mid}", project=a), 404, "not_found")
        assert_error(sem_api.client.delete(f"/v1/memories/{mid}", params={"project": a}, headers=sem_api.auth), 404)
    assert sem_api.recall(b, PORT_QUERY)["memories"], "b's memory survived a's failed delete"
    hits = sem_api.post("/v1/log/search", {"project": a, "query": "9090"}).json()["units"]
    assert hits == []
    assert sem_api.post("/v1/log/search", {"project": b, "query": "9090"}).json()["units"]


def test_observe_is_idempotent_on_request_id(api: Api) -> None:
    turn = {"user": "we deploy with helm", "assistant": "Noted.", "request_id": "turn-1"}
    first = api.observe("p", **turn)
    second = api.observe("p", **turn)
    assert first["created"] is True and second["created"] is False
    assert second["unit_id"] == first["unit_id"] and second["turn"] == first["turn"]
    api.pipe.drain("p")
    units = api.post("/v1/log/timeline", {"project": "p"}).json()["units"]
    assert [u["id"] for u in units] == [first["unit_id"]]
    # positive control: a new request id is a new unit
    third = api.observe("p", **{**turn, "request_id": "turn-2"})
    assert third["created"] is True and third["unit_id"] != first["unit_id"]


def test_reused_request_id_with_other_content_is_409(api: Api) -> None:
    api.observe("p", "we deploy with helm", request_id="turn-1")
    r = api.post("/v1/observe", {"project": "p", "user": "we deploy with kustomize", "request_id": "turn-1"})
    assert_error(r, 409, "conflict")
    units = api.post("/v1/log/timeline", {"project": "p"}).json()["units"]
    assert len(units) == 1 and "helm" in units[0]["user"]


def test_recall_reply_has_the_documented_shape(sem_api: Api) -> None:
    sem_api.observe("p", "the dev server runs on port 8080")
    sem_api.pipe.drain("p")
    doc = sem_api.recall("p", PORT_QUERY)
    assert set(doc) == {"retrieval_id", "abstained", "context", "memories", "conflicts"}
    assert isinstance(doc["retrieval_id"], str) and doc["retrieval_id"]
    assert doc["abstained"] is False
    assert doc["memories"], doc
    for m in doc["memories"]:
        assert {"id", "text", "score", "state", "scope", "kind"} <= set(m)  # DESIGN §11 (extensions allowed)
        assert isinstance(m["score"], float)
        assert m["text"] in doc["context"]
    assert isinstance(doc["conflicts"], list)
    # negative: an unrelated question abstains with an empty block
    none = sem_api.recall("p", "what is the capital of Mongolia?")
    assert none["abstained"] is True and none["context"] == "" and none["memories"] == []


def test_feedback_is_idempotent_on_request_id(sem_api: Api) -> None:
    sem_api.observe("p", "the dev server runs on port 8080")
    sem_api.pipe.drain("p")
    rec = sem_api.recall("p", PORT_QUERY)
    mid = rec["memories"][0]["id"]
    engine = sem_api.pipe.rt.engine("p")
    before = engine.get(mid)
    body = {"project": "p", "retrieval_id": rec["retrieval_id"], "request_id": "fb-1",
            "answer": "The frontend dev server runs on port 8080, so open http://localhost:8080."}
    first = sem_api.post("/v1/feedback", body)
    assert first.status_code == 200, first.text
    after_first = engine.get(mid)
    second = sem_api.post("/v1/feedback", body)
    assert second.json() == first.json()
    after_second = engine.get(mid)
    assert mid in first.json()["used"]
    assert (after_first.value, after_first.conf_for) != (before.value, before.conf_for)  # credited once
    assert (after_second.value, after_second.conf_for, after_second.last_hit_step) == (
        after_first.value, after_first.conf_for, after_first.last_hit_step)  # and only once


def test_remembered_then_deleted_memory_is_never_recalled(sem_api: Api) -> None:
    r = sem_api.post("/v1/memories", {"project": "p", "text": "The staging database is called shop_staging."})
    assert r.status_code == 200, r.text
    mid = r.json()["memory_ids"][0]
    query = "what is the staging database called?"
    assert any(m["id"] == mid for m in sem_api.recall("p", query)["memories"])  # positive control
    d = sem_api.client.delete(f"/v1/memories/{mid}", params={"project": "p"}, headers=sem_api.auth)
    assert d.status_code == 200, d.text
    assert mid in d.json()["retired"]
    for q in (query, "shop_staging", "The staging database is called shop_staging."):
        rec = sem_api.recall("p", q)
        assert all(m["id"] != mid for m in rec["memories"]) and "shop_staging" not in rec["context"]
    shown = sem_api.get(f"/v1/memories/{mid}", project="p").json()
    assert shown["state"] != "active" and shown["valid_to_ms"] is not None
    # remembering it again does not resurrect the retired id
    again = sem_api.post("/v1/memories", {"project": "p", "text": "The staging database is called shop_staging."})
    assert again.status_code == 200
    assert all(m["id"] != mid for m in sem_api.recall("p", query)["memories"])


def test_log_search_timeline_and_window(api: Api) -> None:
    acks = [api.observe("p", f"turn {i}: we talked about topic-{i}") for i in range(1, 8)]
    assert [a["turn"] for a in acks] == list(range(1, 8))
    hits = api.post("/v1/log/search", {"project": "p", "query": "topic-5"}).json()["units"]
    assert [u["id"] for u in hits] == [acks[4]["unit_id"]]
    assert hits[0]["snippet"]
    assert api.post("/v1/log/search", {"project": "p", "query": "kubernetes"}).json()["units"] == []
    timeline = api.post("/v1/log/timeline", {"project": "p", "limit": 3}).json()["units"]
    assert len(timeline) == 3 and {u["turn"] for u in timeline} <= set(range(1, 8))
    around = api.post("/v1/log/timeline", {"project": "p", "around_turn": 4, "limit": 3}).json()["units"]
    assert 4 in {u["turn"] for u in around}
    window = api.post("/v1/log/window", {"project": "p", "unit_id": acks[3]["unit_id"], "radius": 1}).json()["units"]
    assert sorted(u["turn"] for u in window) == [3, 4, 5]
    for u in window:
        assert set(u) == {"id", "turn", "session", "ts_ms", "user", "assistant", "snippet"}


def test_secrets_are_redacted_before_the_log(api: Api) -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    api.observe("p", f"use the key {secret} for the model", assistant="ok")
    units = api.post("/v1/log/timeline", {"project": "p"}).json()["units"]
    assert units and secret not in units[0]["user"]
    assert api.post("/v1/log/search", {"project": "p", "query": "model"}).json()["units"]


def test_openapi_lists_every_route(api: Api) -> None:
    doc = api.client.get("/openapi.json").json()
    served = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    from bridge.routes import ROUTERS

    # the app's own routes and those of every resource router (FastAPI includes routers lazily)
    routes = {(m, r.path) for router in (api.client.app.router, *ROUTERS) for r in router.routes
              for m in getattr(r, "methods", ()) if getattr(r, "path", "").startswith("/v1/") and m != "HEAD"}
    assert len(routes) >= 30 and routes <= served
    documented = {
        ("GET", "/v1/health"), ("POST", "/v1/observe"), ("POST", "/v1/recall"), ("POST", "/v1/feedback"),
        ("GET", "/v1/memories"), ("POST", "/v1/memories"), ("GET", "/v1/memories/{memory_id}"),
        ("DELETE", "/v1/memories/{memory_id}"), ("GET", "/v1/memories/{memory_id}/why"), ("POST", "/v1/miss"),
        ("POST", "/v1/log/search"), ("POST", "/v1/log/timeline"), ("POST", "/v1/log/window"), ("GET", "/v1/stats"),
    }
    assert documented <= served, documented - served
    # every wire field carries a description (they become this document)
    for name, schema in doc["components"]["schemas"].items():
        if name in ("HTTPValidationError", "ValidationError"):
            continue
        for field, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{field} has no description"
