"""Time is bounded at the log's boundary: a turn dated beyond now + a small skew is refused with
``future_timestamp`` and can never make a later, correct value stored already superseded
(issue 17, failure 4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import replay_file
from bridge.app import create_app
from bridge.auth import TOKEN_FILE
from engine.errors import FutureTimestamp
from engine.limits import MAX_FUTURE_SKEW_MS
from engine.models import TrustState, TurnIn
from engine.settings import EmbedderSettings

DAY = 86_400_000
YEAR_9999_MS = 253_402_214_400_000  # 9999-12-31T00:00:00Z


def _runtime(data: Path, clock: FakeClock | None = None) -> Runtime:
    settings = load_settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    return Runtime(data, settings, use_ray=False, clock=clock)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    rt = _runtime(tmp_path)
    with TestClient(create_app(Pipeline(rt), tmp_path), raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {(tmp_path / TOKEN_FILE).read_text().strip()}"}
    rt.shutdown()


def test_http_observe_refuses_a_far_future_turn_with_a_stable_code(api: tuple[TestClient, dict[str, str]]) -> None:
    client, auth = api
    body = {"project": "p", "session": "s", "user": "the API listens on port 9999", "ts": "9999-12-31T00:00:00Z"}
    r = client.post("/v1/observe", json=body, headers=auth)
    assert r.status_code == 422 and r.json()["code"] == "future_timestamp", r.text
    assert "future" in r.json()["error"]
    # positive control: a turn one minute ahead (clock skew) is accepted
    from datetime import datetime, timedelta, timezone

    soon = (datetime.now(timezone.utc) + timedelta(minutes=1)).isoformat()
    r = client.post("/v1/observe", json={**body, "ts": soon}, headers=auth)
    assert r.status_code == 200, r.text


def test_replay_skips_a_future_dated_line_and_logs_the_rest(tmp_path: Path) -> None:
    rows = [{"project": "p", "user": "the API listens on port 8080", "ts": "2026-01-02T00:00:00Z"},
            {"project": "p", "user": "the API listens on port 9999", "ts": "9999-12-31T00:00:00Z"},
            {"project": "p", "user": "the API listens on port 7070", "ts": "2026-01-03T00:00:00Z"}]
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rt = _runtime(tmp_path / "data")
    try:
        report = replay_file(Pipeline(rt), path)
    finally:
        rt.shutdown()
    assert [(p.line, p.code) for p in report.problems] == [(2, "future_timestamp")]
    assert report.new_turns == 2


def _values(pipe: Pipeline, project: str, state: TrustState) -> set[str]:
    out = set()
    for m in pipe.memories(project, state.value):
        out |= {v for v in ("8080", "9999", "7070") if v in m.text}
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ahead_ms=st.integers(min_value=MAX_FUTURE_SKEW_MS + 1, max_value=YEAR_9999_MS - 1_767_225_600_000))
def test_no_future_dated_turn_can_supersede_a_present_one(tmp_path_factory: pytest.TempPathFactory, ahead_ms: int) -> None:
    clock = FakeClock()
    rt = _runtime(tmp_path_factory.mktemp("tb"), clock)
    pipe = Pipeline(rt)
    try:
        pipe.observe([TurnIn(project="p", user="the API listens on port 8080", ts_ms=clock.now_ms())])
        try:  # refused (or, were it ever clamped, dated now): either way it must not win later
            pipe.observe([TurnIn(project="p", user="the API listens on port 9999", ts_ms=clock.now_ms() + ahead_ms)])
        except FutureTimestamp:
            pass
        clock.advance(DAY)
        pipe.observe([TurnIn(project="p", user="the API listens on port 7070", ts_ms=clock.now_ms())])
        pipe.drain("p")
        assert _values(pipe, "p", TrustState.ACTIVE) == {"7070"}  # the latest present value is current
        assert "9999" not in _values(pipe, "p", TrustState.SUPERSEDED)
        assert _values(pipe, "p", TrustState.SUPERSEDED) == {"8080"}  # positive control: supersession works
    finally:
        rt.shutdown()


def test_a_turn_within_the_skew_is_accepted_and_ordered_by_its_time(tmp_path: Path) -> None:
    clock = FakeClock()
    rt = _runtime(tmp_path / "data", clock)
    pipe = Pipeline(rt)
    try:
        acks = pipe.observe([TurnIn(project="p", user="the API listens on port 8080",
                                    ts_ms=clock.now_ms() + MAX_FUTURE_SKEW_MS)])
        assert acks[0].created
        with pytest.raises(FutureTimestamp):
            pipe.observe([TurnIn(project="p", user="x", ts_ms=clock.now_ms() + MAX_FUTURE_SKEW_MS + 1)])
    finally:
        rt.shutdown()


