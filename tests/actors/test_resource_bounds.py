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
