"""Reads never create projects or actors (issue 17, failure 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest, RememberRequest
from engine.errors import NotFound
from engine.models import TurnIn
from engine.settings import EmbedderSettings


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Pipeline, Runtime, Path]]:
    settings = load_settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    rt = Runtime(tmp_path / "data", settings, use_ray=False)
    yield Pipeline(rt), rt, tmp_path / "data"
    rt.shutdown()


def test_recall_on_an_unknown_project_creates_nothing_and_still_reads_global(env: tuple[Pipeline, Runtime, Path]) -> None:
    pipe, rt, data = env
    pipe.remember(RememberRequest(project="home", text="Releases are cut on Tuesdays.", scope="global"))
    before = sorted(p.name for p in (data / "projects").glob("*")) if (data / "projects").exists() else []
    for name in ("ghost-1", "ghost-2", "ghost-3"):
        res = pipe.recall(RecallRequest(project=name, query="when are releases cut?"))
        assert "Tuesdays" in res.context  # positive control: the global scope is read
        with pytest.raises(NotFound):
            pipe.feedback(name, res.retrieval_id, "on Tuesdays")
    after = sorted(p.name for p in (data / "projects").glob("*")) if (data / "projects").exists() else []
    assert after == before
    assert not any(rt.has_project(n) for n in ("ghost-1", "ghost-2", "ghost-3"))
    assert not [k for k, _ in rt.supervised_actors() if k in ("log", "engine")]  # no actor started for a read
    # positive control: a write does create the project, and a recall then uses its engine
    pipe.observe([TurnIn(project="ghost-1", user="the API listens on port 8080")])
    assert rt.has_project("ghost-1") and (data / "projects").exists()


def test_idle_projects_are_released_and_come_back_and_live_ones_are_capped(tmp_path: Path) -> None:
    from actors.clock import FakeClock
    from engine.settings import RuntimeSettings

    clock = FakeClock()
    settings = load_settings().model_copy(update={
        "embedder": EmbedderSettings(name="hash"),
        "runtime": RuntimeSettings(idle_release_s=600.0, max_live_projects=2, evict_grace_s=1.0)})
    rt = Runtime(tmp_path / "data", settings, use_ray=False, clock=clock)
    pipe = Pipeline(rt)
    try:
        for name in ("p1", "p2", "p3"):
            pipe.observe([TurnIn(project=name, user=f"the {name} API listens on port 8080", ts_ms=clock.now_ms())])
            pipe.drain(name)
            clock.advance(1000)
        assert rt.live_projects() == ["p2", "p3"]  # the cap released p1, the least recently used
        assert rt.has_project("p1")  # its stores stay
        assert any("8080" in m.text for m in pipe.memories("p1"))  # back on demand, from its stores
        assert rt.live_projects() == ["p3", "p1"]
        clock.advance(599_000)
        assert rt.release_idle() == ["p3"]  # idle 600 s: released; p1 was used 599 s ago
        assert rt.live_projects() == ["p1"]
        # a project with pending work is not released, however idle
        pipe.observe([TurnIn(project="p1", user="the p1 API listens on port 9090", ts_ms=clock.now_ms())])
        clock.advance(3_600_000)
        assert rt.release_idle() == []
        pipe.drain("p1")
        clock.advance(3_600_000)
        assert rt.release_idle() == ["p1"] and rt.live_projects() == []
    finally:
        rt.shutdown()


def test_a_project_in_use_is_not_released_by_the_cap_until_its_grace_ends(tmp_path: Path) -> None:
    """With a cap of one live project, a second project's call must not close the first one's
    stores under a caller that still holds its client (issue 17: 'log.sqlite is closed')."""
    from actors.clock import FakeClock
    from engine.settings import RuntimeSettings

    clock = FakeClock()
    settings = load_settings().model_copy(update={
        "embedder": EmbedderSettings(name="hash"),
        "runtime": RuntimeSettings(max_live_projects=1, evict_grace_s=30.0)})
    rt = Runtime(tmp_path / "data", settings, use_ray=False, clock=clock)
    pipe = Pipeline(rt)
    try:
        pipe.observe([TurnIn(project="c1", user="the c1 API listens on port 8080", ts_ms=clock.now_ms())])
        held = rt.log("c1")  # a caller in the middle of its work on c1
        pipe.observe([TurnIn(project="c2", user="the c2 API listens on port 9090", ts_ms=clock.now_ms())])
        assert sorted(rt.live_projects()) == ["c1", "c2"]  # over the cap while c1 is in use
        assert held.job_counts()["extract"]["pending"] == 1  # its store is still open
        pipe.drain("c1")
        pipe.drain("c2")
        clock.advance(31_000)
        assert rt.release_idle() == ["c1"]  # after the grace the cap releases the least recently used
        assert rt.live_projects() == ["c2"]
        assert any("8080" in m.text for m in pipe.memories("c1"))  # and it comes back on demand
        assert rt.live_projects() == ["c1"]  # the cap holds again: c2 went (its grace is over too)
    finally:
        rt.shutdown()
