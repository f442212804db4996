"""Fault injection: an actor of each kind is killed during a replay on Ray (issue 17, failure 1).

Ray restarts it (``max_restarts``) and the pipeline gives the jobs of the dead worker back
without spending an attempt, so nothing is lost, nothing is dead, nothing is applied twice,
no repair runs for an infrastructure death, and the memories equal an uninterrupted run.
Each test kills only the actors of its own ``Runtime``, by handle.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import DEMO_HISTORY, replay_file
from engine.errors import ActorDied
from engine.settings import EmbedderSettings, Settings

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.timeout(300)]

PROJECT = "shop-api"


def _settings() -> Settings:
    s = load_settings()
    return s.model_copy(update={"embedder": EmbedderSettings(name="hash")})


def _memories(pipe: Pipeline) -> list[tuple[str, str, str]]:
    return sorted((m.key, m.belief, m.state.value) for m in pipe.memories(PROJECT))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    rt = Runtime(tmp_path_factory.mktemp("base"), _settings(), use_ray=False)
    try:
        pipe = Pipeline(rt)
        replay_file(pipe, DEMO_HISTORY)
        return _memories(pipe)
    finally:
        rt.shutdown()


VICTIMS: dict[str, Callable[[Runtime], Any]] = {
    "extraction": lambda rt: rt.extractors[0].target,
    "log": lambda rt: rt.log(PROJECT).target,
    "engine": lambda rt: rt.engine(PROJECT).target,
    "adjudication": lambda rt: rt.adjudicator.target,
    "investigator": lambda rt: rt.investigator.target,
    "index": lambda rt: rt.index.target,  # its FAISS index is in memory: the engines refill it from their stores
}


@pytest.fixture
def ray_pipe(ray_session: None, tmp_path: Path) -> Iterator[tuple[Pipeline, Runtime]]:
    rt = Runtime(tmp_path / "data", _settings(), use_ray=True)
    yield Pipeline(rt), rt
    rt.shutdown()


@pytest.mark.parametrize("kind", sorted(VICTIMS))
def test_killing_an_actor_during_replay_loses_nothing(ray_pipe: tuple[Pipeline, Runtime], kind: str,
                                                      baseline: list[tuple[str, str, str]]) -> None:
    import ray

    pipe, rt = ray_pipe
    victim = VICTIMS[kind](rt)  # created before the replay: the one that dies mid-drain
    real_drain = pipe.drain
    killed = threading.Event()

    def drain(project: str, progress: Callable[[int], None] | None = None, max_rounds: int = 100_000,
              logging: threading.Event | None = None) -> Any:
        def on_progress(n: int) -> None:
            if progress:
                progress(n)
            if not killed.is_set():
                killed.set()  # after the first batch: the kill lands while later batches run
                threading.Thread(target=ray.kill, args=(victim,), kwargs={"no_restart": False}).start()
        return real_drain(project, progress=on_progress, max_rounds=max_rounds, logging=logging)

    pipe.drain = drain  # type: ignore[method-assign]
    report = replay_file(pipe, DEMO_HISTORY)
    assert killed.is_set()
    assert report.dead_jobs == 0
    assert report.new_turns == report.turns and int(rt.log(PROJECT).last_turn()) == report.turns  # none lost, none twice
    counts = pipe.jobs(PROJECT)
    assert "extraction_failed" not in str(rt.log(PROJECT).jobs(None, "repair", 1000))  # no repair for a death
    assert all(c.get("dead", 0) == 0 for c in counts.values()), counts
    assert _memories(pipe) == baseline  # no junk, nothing missing, nothing duplicated
    # the restarted actor serves again
    assert pipe.stats(PROJECT).memories_by_state


def test_a_killed_log_actor_is_restarted_and_a_lost_one_gives_a_one_line_error(
        ray_pipe: tuple[Pipeline, Runtime], monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    from actors.launch import Ref
    from engine.models import TurnIn

    pipe, rt = ray_pipe
    pipe.observe([TurnIn(project=PROJECT, user="the API listens on port 8080", request_id="r1")])
    ray.kill(rt.log(PROJECT).target, no_restart=False)
    # restarted from its store: the next calls answer (no 503 until a restart of the sidecar)
    assert pipe.observe([TurnIn(project=PROJECT, user="the API listens on port 8080", request_id="r1")])[0].created is False
    assert rt.log(PROJECT).last_turn() == 1
    # an actor that is gone for good: one clean line, no actor id, pid or address
    monkeypatch.setattr(Ref, "RESTART_WAIT_S", 0.0)
    ray.kill(rt.adjudicator.target, no_restart=True)
    with pytest.raises(ActorDied) as info:
        rt.adjudicator.judge(None, None)
    msg = str(info.value)
    assert "\n" not in msg and "pid" not in msg.lower() and "actor_id" not in msg.lower() and "ip" not in msg.split()
    assert info.value.code == "actor_died"


def test_a_restarted_index_is_refilled_from_the_stores_before_any_search(ray_pipe: tuple[Pipeline, Runtime]) -> None:
    import ray

    from actors.wire import RecallRequest, RememberRequest
    from engine.models import GLOBAL_SCOPE, TurnIn

    pipe, rt = ray_pipe
    pipe.observe([TurnIn(project=PROJECT, user="the API listens on port 8080", request_id="r1")])
    pipe.drain(PROJECT)
    pipe.remember(RememberRequest(project=PROJECT, text="always use type hints in Python code", scope="global"))
    req = RecallRequest(project=PROJECT, query="which port does the API listen on?", passive=True)
    before = sorted(m.id for m in pipe.recall(req).memories)
    sizes = (rt.index.size(None), rt.index.size(GLOBAL_SCOPE))
    assert before and sizes[1] > 0
    generation = rt.index.generation()
    ray.kill(rt.index.target, no_restart=False)  # Ray restarts it, with an empty FAISS index
    # ray.kill returns before the actor is gone: a call sent at once may still reach the old one
    deadline = time.monotonic() + 120
    while rt.index.generation() == generation:  # asked of the index itself: no engine refills it
        assert time.monotonic() < deadline, "the index actor was not restarted"
        time.sleep(0.05)
    assert (rt.index.size(None), rt.index.size(GLOBAL_SCOPE)) == (0, 0)  # it really is a new, empty start
    assert sorted(m.id for m in pipe.recall(req).memories) == before
    assert (rt.index.size(None), rt.index.size(GLOBAL_SCOPE)) == sizes  # project and global refilled
