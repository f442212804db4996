"""Admission control of the sidecar (issue 17, failure 8): a bounded number of calls in flight,
a clear refusal (503 ``overloaded`` with Retry-After) that did nothing, and group commit of
observes where each caller still gets its own acknowledgement or error."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from actors.launch import Runtime
from actors.pipeline import Pipeline
from bridge.admission import Gate, GroupCommit
from bridge.app import create_app
from bridge.auth import TOKEN_FILE
from engine.errors import Conflict, Overloaded, ServiceUnavailable
from engine.settings import AdmissionSettings, EmbedderSettings, Settings

WAIT_S = 60.0  # generous: these waits end as soon as the other thread got there


def _wait_for(cond: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < deadline, "the other thread never got there"
        time.sleep(0.01)


# ---- the gate --------------------------------------------------------------------------------
def test_a_gate_refuses_when_its_slots_and_queue_are_full() -> None:
    async def scenario() -> None:
        gate = Gate("recall", limit=1, queue=0, max_wait_s=0.0)
        async with gate.admit():
            assert gate.busy and gate.inflight == 1
            with pytest.raises(Overloaded) as info:
                async with gate.admit():
                    raise AssertionError("must not run")
            assert info.value.code == "overloaded" and info.value.retry_after_s >= 1
        async with gate.admit():  # the slot is free again
            pass
        assert (gate.admitted, gate.refused, gate.busy) == (2, 1, False)

    asyncio.run(scenario())


def test_a_waiting_caller_gets_the_slot_when_it_frees_or_is_refused_after_its_wait() -> None:
    async def scenario() -> None:
        gate = Gate("observe", limit=1, queue=1, max_wait_s=WAIT_S)
        release = asyncio.Event()
        order: list[str] = []

        async def holder() -> None:
            async with gate.admit():
                order.append("first in")
                await release.wait()
            order.append("first out")

        async def waiter() -> None:
            async with gate.admit():
                order.append("second in")

        first = asyncio.create_task(holder())
        while not gate.inflight:
            await asyncio.sleep(0)
        second = asyncio.create_task(waiter())
        while not gate.waiting:
            await asyncio.sleep(0)
        with pytest.raises(Overloaded):  # one in flight, one waiting: the queue is full
            async with gate.admit():
                pass
        release.set()
        await asyncio.gather(first, second)
        assert order == ["first in", "first out", "second in"]

        quick = Gate("recall", limit=1, queue=1, max_wait_s=0.0)
        async with quick.admit():
            with pytest.raises(Overloaded, match="no slot within"):
                async with quick.admit():
                    pass

    asyncio.run(scenario())


# ---- group commit ----------------------------------------------------------------------------
class _Writes:
    """A ``write`` for :class:`GroupCommit` that records its batches; a batch holding ``hold`` waits
    until :meth:`release` (the others queue up meanwhile)."""

    def __init__(self, hold: str | None = None, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.hold, self.fail_on = hold, fail_on
        self.released = asyncio.Event()

    async def __call__(self, items: Sequence[str]) -> list[str]:
        self.batches.append(list(items))
        if self.fail_on in items:
            raise Conflict("request id reused with other content")
        if self.hold in items:
            await self.released.wait()
        return [f"ack {x}" for x in items]

    def release(self) -> None:
        self.released.set()


async def _until(cond: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < deadline, "the other task never got there"
        await asyncio.sleep(0.001)


def test_observes_that_arrive_during_a_write_share_the_next_one() -> None:
    async def scenario() -> None:
        write = _Writes(hold="t1")
        commit: GroupCommit[str, str] = GroupCommit(write)
        first = asyncio.create_task(commit.submit("t1"))
        await _until(lambda: len(write.batches) == 1)
        rest = [asyncio.create_task(commit.submit(x)) for x in ("t2", "t3", "t4")]
        await _until(lambda: len(commit._queue) == 3)
        assert commit.busy
        write.release()
        assert await first == "ack t1"
        assert [await t for t in rest] == ["ack t2", "ack t3", "ack t4"]  # each caller its own ack
        assert write.batches == [["t1"], ["t2", "t3", "t4"]]
        await _until(lambda: not commit.busy)  # positive control of busy above

    asyncio.run(scenario())


def test_one_callers_error_in_a_batch_is_its_own() -> None:
    async def scenario() -> None:
        write = _Writes(hold="hold", fail_on="bad")
        commit: GroupCommit[str, str] = GroupCommit(write)
        first = asyncio.create_task(commit.submit("hold"))
        await _until(lambda: len(write.batches) == 1)
        tasks = [asyncio.create_task(commit.submit(x)) for x in ("a", "bad", "b")]
        await _until(lambda: len(commit._queue) == 3)
        write.release()
        await first
        assert await tasks[0] == "ack a" and await tasks[2] == "ack b"
        with pytest.raises(Conflict):
            await tasks[1]
        assert write.batches[1] == ["a", "bad", "b"]  # written together first, then one by one

    asyncio.run(scenario())


def test_a_full_observe_queue_refuses_and_a_stopped_commit_writes_what_waits() -> None:
    async def scenario() -> None:
        write = _Writes(hold="in the write")
        commit: GroupCommit[str, str] = GroupCommit(write, max_pending=1)
        first = asyncio.create_task(commit.submit("in the write"))
        await _until(lambda: len(write.batches) == 1 and not commit._queue)
        second = asyncio.create_task(commit.submit("waiting"))
        await _until(lambda: len(commit._queue) == 1)
        with pytest.raises(Overloaded):
            await commit.submit("one too many")
        closing = asyncio.create_task(commit.aclose())
        await asyncio.sleep(0)
        with pytest.raises(ServiceUnavailable):
            await commit.submit("after the stop")  # refused: the sidecar is stopping
        write.release()
        await closing
        assert await first == "ack in the write" and await second == "ack waiting"
        assert write.batches == [["in the write"], ["waiting"]]

    asyncio.run(scenario())


def test_a_timed_out_observe_is_never_written_and_the_next_one_is() -> None:
    """A caller that gave up waiting (told to send the turn again) while its item still queued
    behind a slow write is left out of the next batch; the write it was behind still lands."""
    async def scenario() -> None:
        write = _Writes(hold="slow")
        commit: GroupCommit[str, str] = GroupCommit(write, timeout_s=0.2)
        assert await commit.submit("fast") == "ack fast"  # positive control: acknowledged once written
        slow = asyncio.create_task(commit.submit("slow"))
        await _until(lambda: len(write.batches) == 2)
        with pytest.raises(ServiceUnavailable):
            await commit.submit("given up")  # queued behind the slow write past timeout_s
        with pytest.raises(ServiceUnavailable):
            await slow  # timed out too, but already being written: written all the same
        write.release()
        await _until(lambda: not commit.busy)
        assert await commit.submit("after") == "ack after"
        assert write.batches == [["fast"], ["slow"], ["after"]]

    asyncio.run(scenario())


def test_stop_from_another_thread_waits_for_the_batch_being_written() -> None:
    """The sidecar stops the commit from a thread of its own: the batch in the write is finished
    and acknowledged first; after the loop has ended, stop returns at once."""
    write = _Writes(hold="last")
    commit: GroupCommit[str, str] = GroupCommit(write)
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    acked = asyncio.run_coroutine_threadsafe(commit.submit("last"), loop)
    _wait_for(lambda: len(write.batches) == 1)
    stopper = threading.Thread(target=commit.stop)
    stopper.start()
    time.sleep(0.05)
    assert stopper.is_alive() and not acked.done()  # stop waits for the write
    loop.call_soon_threadsafe(write.release)
    stopper.join(WAIT_S)
    assert acked.result(WAIT_S) == "ack last" and not stopper.is_alive()
    loop.call_soon_threadsafe(loop.stop)
    runner.join(WAIT_S)
    loop.close()
    commit.stop()  # the loop is gone: nothing to wait for


# ---- over HTTP -------------------------------------------------------------------------------
@pytest.fixture
def tight(tmp_path: Path) -> Iterator[tuple[TestClient, Pipeline, dict[str, str]]]:
    one = AdmissionSettings(recall_inflight=1, recall_queue=0, recall_max_wait_s=0.0, observe_inflight=1,
                            observe_queue=0, observe_max_wait_s=0.0)
    rt = Runtime(tmp_path, Settings().model_copy(update={"embedder": EmbedderSettings(name="hash"), "admission": one}),
                 use_ray=False)
    pipe = Pipeline(rt)
    app = create_app(pipe, tmp_path)
    auth = {"Authorization": f"Bearer {(tmp_path / TOKEN_FILE).read_text().strip()}"}
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, pipe, auth
    app.state.observer.stop()
    rt.shutdown()


@pytest.mark.parametrize("route", ["/v1/recall", "/v1/observe"])
def test_a_call_beyond_the_bound_is_refused_with_retry_after_and_changes_nothing(
        tight: tuple[TestClient, Pipeline, dict[str, str]], monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    client, pipe, auth = tight
    assert client.post("/v1/observe", json={"project": "p", "user": "the API listens on port 8080",
                                            "request_id": "seed"}, headers=auth).status_code == 200
    method = "recall" if route == "/v1/recall" else "observe"
    real = getattr(pipe, method)
    inside, release = threading.Event(), threading.Event()

    def slow(*args: Any) -> Any:
        inside.set()
        release.wait(WAIT_S)
        return real(*args)

    monkeypatch.setattr(pipe, method, slow)
    body = ({"project": "p", "query": "which port does the API listen on?"} if method == "recall"
            else {"project": "p", "user": "the cache is redis", "request_id": "r-first"})
    first: list[Any] = []
    t = threading.Thread(target=lambda: first.append(client.post(route, json=body, headers=auth)))
    t.start()
    try:
        assert inside.wait(WAIT_S)
        refused_body = ({"project": "p", "query": "what is the cache?"} if method == "recall"
                        else {"project": "p", "user": "the queue is rabbitmq", "request_id": "r-refused"})
        r = client.post(route, json=refused_body, headers=auth)
        assert r.status_code == 503, r.text
        assert r.json()["code"] == "overloaded" and r.headers["retry-after"] == "1"
    finally:
        release.set()
        t.join(WAIT_S)
    assert first[0].status_code == 200, first[0].text
    assert "admit;dur=" in first[0].headers["server-timing"]
    turns = [u.request_id for u in pipe.log_timeline("p", limit=20)]
    assert "r-refused" not in turns  # the refused call did nothing
    if method == "observe":
        assert "r-first" in turns  # the admitted one is durable once acknowledged
    # the slot is free again
    again = client.post(route, json=refused_body, headers=auth)
    assert again.status_code == 200, again.text


def test_a_gate_is_quiet_only_once_its_last_call_has_ended() -> None:
    async def scenario() -> None:
        gate = Gate("recall", limit=2, queue=0, max_wait_s=0.0)
        assert gate.quiet_for() == float("inf")  # never called: quiet for ever
        async with gate.admit():
            assert gate.quiet_for() == 0.0  # a call in flight
        after = gate.quiet_for()
        assert 0.0 <= after < 60.0  # positive control: counted from the end of that call

    asyncio.run(scenario())


def test_the_background_worker_waits_for_a_quiet_moment_after_a_call(tmp_path: Path) -> None:
    def busy_after_a_recall(quiet_s: float) -> bool:
        folder = tmp_path / f"quiet-{quiet_s:g}"
        folder.mkdir()
        settings = Settings().model_copy(update={"embedder": EmbedderSettings(name="hash"),
                                                 "admission": AdmissionSettings(foreground_quiet_s=quiet_s)})
        rt = Runtime(folder, settings, use_ray=False)
        app = create_app(Pipeline(rt), folder)
        auth = {"Authorization": f"Bearer {(folder / TOKEN_FILE).read_text().strip()}"}
        try:
            with TestClient(app, raise_server_exceptions=False) as client:
                busy = app.state.foreground_busy
                assert not busy()  # nothing called yet
                assert client.post("/v1/recall", json={"project": "p", "query": "which port?"},
                                   headers=auth).status_code == 200
                return bool(busy())
        finally:
            app.state.observer.stop()
            rt.shutdown()

    assert busy_after_a_recall(3600.0)  # the call just ended: not quiet for an hour yet
    assert not busy_after_a_recall(0.0)  # positive control: with no quiet time asked, an ended call does not hold it


@contextlib.contextmanager
def started_sidecar(folder: Path) -> Iterator[tuple[Any, str, str]]:
    """An in-process BridgeServer (the BridgeActor's plain class) serving on a free port: (server, url, token)."""
    from bridge.server import BridgeServer

    settings = Settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    server = BridgeServer(str(folder), settings, port=0, use_ray=False)
    loop = asyncio.new_event_loop()
    url = loop.run_until_complete(server.start())
    try:
        yield server, url, (folder / TOKEN_FILE).read_text().strip()
    finally:
        loop.run_until_complete(server.stop())
        loop.close()


def test_the_sidecar_keeps_its_thread_pool_between_requests(tmp_path: Path) -> None:
    """uvicorn runs on its own loop, so anyio keeps the worker threads of sync routes (on the
    actor's loop it stopped them with each request's task and started new ones)."""
    import urllib.request

    with started_sidecar(tmp_path) as (_, url, token):
        seen: set[threading.Thread] = set()
        for _ in range(8):
            req = urllib.request.Request(url + "/v1/projects", headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, timeout=WAIT_S) as r:
                assert r.status == 200
            seen |= {t for t in threading.enumerate() if t.name.startswith("AnyIO worker thread")}
        assert 1 <= len(seen) <= 2, sorted(t.name for t in seen)  # one reused worker, not one per request


def test_the_sidecar_is_idle_after_its_last_work_not_after_a_project_cools(tmp_path: Path) -> None:
    """A project stays hot (polled every second) for a minute after its last work, but polling that finds
    nothing is no activity: idle time counts from the last request or the last batch that did something."""
    import urllib.request

    with started_sidecar(tmp_path) as (server, url, token):
        body = b'{"project": "p", "session": "s", "user": "the API listens on port 9090", "assistant": "ok"}'
        req = urllib.request.Request(url + "/v1/observe", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=WAIT_S) as r:
            assert r.status == 200
        deadline = time.monotonic() + WAIT_S
        while not server.pipe.memories("p") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.pipe.memories("p")  # the turn's work is done
        server.worker.stopping = True  # no more polls from here on: nothing races the reads below
        server.worker.event.set()
        server.worker.join(WAIT_S)
        assert not server.worker.is_alive()
        assert server.worker.last_work > server.last_request  # the turn's batch ran after the request
        time.sleep(0.3)
        with server.worker.lock:
            assert server.worker.hot  # the project is still hot (polled) ...
        assert server.idle_s() >= 0.3  # ... yet the sidecar is idle
        server.worker.last_work = time.monotonic()
        assert server.idle_s() < 0.3  # positive control: work just done is activity, with no request
        with server.worker.lock:
            server.worker.in_batch = True
        assert server.idle_s() == 0.0  # positive control: a batch being done is activity
        with server.worker.lock:
            server.worker.in_batch = False
