"""An abstained recall's repair signal runs off the recall path (actors/signals.py, ``Runtime.signals``).

The recall answers before the signal's log search; whatever reads the project's log next waits
for the queued signal, so its repair job is drained and counted as if it had run in the recall.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.models import TurnIn

MIN = 60_000
# A long turn whose by-the-way fact the extractor does not read, so that a question about it abstains.
RAMBLE = ("right, before lunch: the invoice export is slow again but that is a known thing, marketing asked for "
          "a darker footer which I did, the escalation roster is in the ops/roster.yaml file, Dara maintains "
          "it, anyway shout if the nightly job looks odd because the cleanup took ages")
QUESTION = "where is the escalation roster kept?"


class GatedPipeline(Pipeline):
    """A pipeline whose signals wait for ``gate`` before doing their real work."""

    def __init__(self, rt: Runtime) -> None:
        super().__init__(rt)
        self.gate = threading.Event()
        self.started = threading.Event()

    def _signal_abstained(self, req: RecallRequest) -> None:
        self.started.set()
        assert self.gate.wait(60), "the test never opened the gate"
        super()._signal_abstained(req)


def _seed(pipe: Pipeline, clock: FakeClock, project: str = "x") -> None:
    for text in ("the API listens on port 8080", RAMBLE, "thanks, all good"):
        clock.advance(MIN)
        pipe.observe([TurnIn(project=project, user=text, assistant="OK.", ts_ms=clock.now_ms())])
    pipe.drain(project)


def _recall_in_thread(pipe: Pipeline, req: RecallRequest, timeout_s: float = 30.0):
    out: list = []
    t = threading.Thread(target=lambda: out.append(pipe.recall(req)), daemon=True)
    t.start()
    t.join(timeout_s)
    assert out, "the recall waited for its repair signal"
    return out[0]


@pytest.fixture
def env(tmp_path: Path):
    clock = FakeClock()
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False, clock=clock)
    yield GatedPipeline(rt), clock, rt
    rt.shutdown()


def test_an_abstained_recall_answers_before_its_repair_signal_runs(env) -> None:
    pipe, clock, rt = env
    _seed(pipe, clock)
    res = _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION))
    assert res.abstained and pipe.started.wait(10)
    # The signal is queued, not run: the log has no repair job yet (read without settling).
    assert rt.log("x").job_counts().get("repair", {}).get("pending", 0) == 0
    assert len(pipe.signals.queued("x")) == 1
    pipe.gate.set()
    # Positive control: the next reader of the log waits for the signal and sees its job.
    assert pipe.jobs("x")["repair"]["pending"] == 1
    assert pipe.signals.queued("x") == []


def test_a_drain_runs_the_repair_that_a_queued_signal_asks_for(env) -> None:
    pipe, clock, _ = env
    _seed(pipe, clock)
    assert _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION)).abstained
    pipe.gate.set()
    pipe.drain("x")
    assert [r for r in pipe.repairs("x") if r.signal and r.signal.kind == "abstained"]
    block = pipe.recall(RecallRequest(project="x", query=QUESTION, passive=True)).context
    assert "ops/roster.yaml" in block


def test_an_observe_waits_for_the_queued_signal_so_it_sees_the_log_as_the_recall_did(env) -> None:
    pipe, clock, _ = env
    _seed(pipe, clock)
    assert _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION)).abstained
    threading.Timer(0.3, pipe.gate.set).start()
    clock.advance(MIN)
    pipe.observe([TurnIn(project="x", user="the roster may move to ops/v2/roster.yaml later", assistant="OK.",
                         ts_ms=clock.now_ms())])
    pipe.drain("x")
    [report] = [r for r in pipe.repairs("x") if r.signal and r.signal.kind == "abstained"]
    assert report.signal is not None
    # The signal was bounded by the log at the recall: the later turn is beyond it.
    assert report.signal.bound_turn == 4
    read = {u for call in report.read for u in call.unit_ids}
    assert read and all(int(u[1:]) < report.signal.bound_turn for u in read)


def test_a_passive_recall_queues_no_signal(env) -> None:
    pipe, clock, _ = env
    _seed(pipe, clock)
    pipe.gate.set()
    assert pipe.recall(RecallRequest(project="x", query=QUESTION, passive=True)).abstained
    assert pipe.signals.queued("x") == [] and "repair" not in pipe.jobs("x") and "repair_signal" not in pipe.jobs("x")


def test_a_failing_signal_is_logged_and_counted_never_raised_into_the_next_call(env, caplog) -> None:
    pipe, clock, _ = env
    _seed(pipe, clock)

    def broken(req: RecallRequest) -> None:
        raise RuntimeError("log search failed")

    pipe._signal_abstained = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="actors.pipeline"):
        assert pipe.recall(RecallRequest(project="x", query=QUESTION)).abstained
        report = pipe.drain("x")  # waits for the failed signal and goes on
    assert report.dead == 0 and pipe.signals.failed == 1
    assert any("repair signal" in r.getMessage() for r in caplog.records)
    assert pipe.jobs("x")["repair_signal"] == {"failed": 1}  # shown with the job counts, as a dead job is


def test_signals_past_the_limit_are_dropped_and_counted(env) -> None:
    pipe, clock, _ = env
    _seed(pipe, clock)
    pipe.signals.limit = 2
    for _ in range(4):
        assert _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION)).abstained
    assert pipe.signals.dropped == 2 and len(pipe.signals.queued("x")) == 2
    pipe.gate.set()
    assert pipe.jobs("x")["repair_signal"] == {"dropped": 2}
    assert pipe.signals.queued("x") == []


@pytest.mark.ray
def test_on_ray_a_recall_of_a_project_whose_log_is_not_open_does_not_wait_to_open_it(ray_session: None,
                                                                                     tmp_path: Path) -> None:
    """The path of a sidecar that serves many projects: the engine answers, the log actor is opened
    by the signal afterwards, and the repair it queues is drained."""
    data = tmp_path / "data"
    clock = FakeClock()
    first = Runtime(data, load_settings(), use_ray=True, clock=clock)
    try:
        _seed(Pipeline(first), clock)
    finally:
        first.shutdown()
    rt = Runtime(data, load_settings(), use_ray=True, clock=clock)
    try:
        pipe = GatedPipeline(rt)
        res = _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION), timeout_s=120)
        assert res.abstained and pipe.started.wait(10)
        assert rt.live_log("x") is None  # the recall itself never opened the log actor
        pipe.gate.set()
        pipe.drain("x")
        assert [r for r in pipe.repairs("x") if r.signal and r.signal.kind == "abstained"]
    finally:
        rt.shutdown()


def test_a_signal_queued_when_the_runtime_shuts_down_is_dropped_quietly(tmp_path: Path, caplog) -> None:
    clock = FakeClock()
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False, clock=clock)
    pipe = GatedPipeline(rt)
    _seed(pipe, clock)
    assert _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION)).abstained
    assert pipe.started.wait(10)
    rt.shutdown()
    with caplog.at_level(logging.WARNING, logger="actors.pipeline"):
        pipe.gate.set()
        for f in pipe.signals.queued("x"):
            f.result(timeout=30)
    assert pipe.signals.failed == 0 and not [r for r in caplog.records if "repair signal" in r.getMessage()]


def test_pipelines_over_one_runtime_share_its_signals(env) -> None:
    """A replay or a benchmark builds pipelines over one runtime: an observe through one waits for a
    signal queued through another."""
    pipe, clock, rt = env
    _seed(pipe, clock)
    other = Pipeline(rt)
    assert other.signals is pipe.signals is rt.signals
    assert _recall_in_thread(pipe, RecallRequest(project="x", query=QUESTION)).abstained
    threading.Timer(0.3, pipe.gate.set).start()
    assert other.jobs("x")["repair"]["pending"] == 1  # waited for the signal queued through pipe
