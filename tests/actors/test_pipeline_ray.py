"""The same pipeline on a real local Ray (one shared instance for the session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import DEMO_HISTORY, replay_file
from actors.wire import RecallRequest
from engine.errors import EmptyQuery, NotFound

pytestmark = pytest.mark.ray


@pytest.fixture
def ray_pipe(ray_session: None, tmp_path: Path):
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=True)
    yield Pipeline(rt), rt, tmp_path / "data"
    rt.shutdown()


def test_ray_graph_gives_the_same_memories_as_in_process(ray_pipe, tmp_path: Path) -> None:
    pipe, rt, _ = ray_pipe
    assert rt.index.remote and all(e.remote for e in rt.extractors)
    replay_file(pipe, DEMO_HISTORY)
    local_rt = Runtime(tmp_path / "local", load_settings(), use_ray=False)
    local = Pipeline(local_rt)
    replay_file(local, DEMO_HISTORY)
    on_ray = sorted((m.key, m.belief, m.state.value) for m in pipe.memories("shop-api"))
    in_proc = sorted((m.key, m.belief, m.state.value) for m in local.memories("shop-api"))
    local_rt.shutdown()
    assert on_ray == in_proc and len(on_ray) > 20


def test_errors_cross_the_actor_boundary_with_their_class(ray_pipe) -> None:
    pipe, _, _ = ray_pipe
    with pytest.raises(EmptyQuery):
        pipe.recall(RecallRequest(project="p", query="   "))
    with pytest.raises(NotFound):
        pipe.detail("p", "m_does_not_exist")


def test_restarted_graph_recalls_the_same_memories(ray_pipe) -> None:
    pipe, rt, data = ray_pipe
    replay_file(pipe, DEMO_HISTORY)
    q = RecallRequest(project="shop-api", query="What port does the API server listen on?", passive=True)
    before = pipe.recall(q)
    rt.shutdown()
    # The engine actor saved its BM25 index and asked the index actor to save its FAISS index.
    folder = next((data / "projects").glob("shop-api*"))
    snapshots = [folder / name for name in ("lexical.npz", "vectors.faiss", "vectors.faiss.npz")]
    assert all(p.exists() for p in snapshots)
    written = [p.stat().st_mtime_ns for p in snapshots]
    rt2 = Runtime(data, load_settings(), use_ray=True)
    try:
        after = Pipeline(rt2).recall(q)
    finally:
        rt2.shutdown()
    assert after.context == before.context and not before.abstained
    # Opened from them (same content token), so the second close had nothing to write again.
    assert [p.stat().st_mtime_ns for p in snapshots] == written


def test_observe_awaited_on_a_loop_writes_through_the_log_actors_of_live_projects(ray_pipe) -> None:
    """The sidecar's observe path on Ray: the log actors' acknowledgements are awaited on the loop
    (no offload once a project is live), in the order of the turns, with corrections signalled and
    a reused request id refused for its own caller only."""
    import asyncio

    from engine.errors import Conflict
    from engine.models import TurnIn

    pipe, rt, _ = ray_pipe

    def turn(project: str, rid: str, user: str) -> TurnIn:
        return TurnIn(project=project, session="s", user=user, assistant="ok", request_id=rid)

    offloaded: list[str] = []

    async def offload(fn):
        offloaded.append("call")
        return fn()

    async def scenario() -> None:
        first = await pipe.observe_async([turn("a", "a0", "hello"), turn("b", "b0", "hello")], offload)
        assert offloaded == ["call"] and [a.turn for a in first] == [1, 1]  # opening the projects: blocking path
        acks = await pipe.observe_async([turn("a", "a1", "the api listens on port 8080"),
                                         turn("b", "b1", "we use pnpm for packages"),
                                         turn("a", "a2", "no, it's port 9090 actually")], offload)
        assert offloaded == ["call", "call"]  # only the correction's signal left the loop
        assert [(a.project, a.turn, a.created) for a in acks] == [("a", 2, True), ("b", 2, True), ("a", 3, True)]
        again = await pipe.observe_async([turn("a", "a1", "the api listens on port 8080")], offload)
        assert again[0].created is False and again[0].unit_id == acks[0].unit_id  # idempotent on the request id
        with pytest.raises(Conflict):
            await pipe.observe_async([turn("a", "a1", "other content")], offload)

    asyncio.run(scenario())
    assert [u.user for u in rt.log("a").units(["u2", "u3"])] == ["the api listens on port 8080",
                                                                 "no, it's port 9090 actually"]
    assert rt.log("a").jobs(kind="repair"), "the correction queued a repair job"
