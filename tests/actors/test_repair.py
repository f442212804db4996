"""The repair loop end to end (in one process): signals, investigations, grounded proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.models import Candidate, Kind, Origin, TurnIn

MIN = 60_000
LONG_TURN = ("ok so quick brain dump before the standup, the flaky checkout test is mostly timing, I bumped the "
             "retry to three and it seems calmer, also the design folks want the banner copy tweaked again which "
             "is fine, oh and the on-call pager rotation lives in the ops/rotations.yaml file, Ramesh maintains it, "
             "anyway let me know if the staging deploy looks weird today because the migrations took a while")


@pytest.fixture
def env(tmp_path: Path):
    clock = FakeClock()
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False, clock=clock)
    yield Pipeline(rt), clock, rt
    rt.shutdown()


def say(pipe: Pipeline, clock: FakeClock, user: str, assistant: str = "OK.", project: str = "x") -> None:
    clock.advance(MIN)
    pipe.observe([TurnIn(project=project, user=user, assistant=assistant, ts_ms=clock.now_ms())])
    pipe.drain(project)


def ctx(pipe: Pipeline, q: str, passive: bool = True) -> str:
    return pipe.recall(RecallRequest(project="x", query=q, passive=passive)).context


def test_a_missed_fact_is_found_by_repair_and_recalled_afterwards(env) -> None:
    pipe, clock, rt = env
    say(pipe, clock, "the API listens on port 8080")
    say(pipe, clock, LONG_TURN)
    say(pipe, clock, "thanks, all good")
    # A later unit with a different answer: the investigator must never read it (causal bound).
    q = "where is the on-call pager rotation kept?"
    assert "rotations.yaml" not in ctx(pipe, q)  # extraction missed it
    res = pipe.recall(RecallRequest(project="x", query=q))  # a live recall abstains: a miss signal
    assert res.abstained
    say(pipe, clock, "fyi the pager rotation may move to ops/oncall-v2.yaml next quarter")
    pipe.drain("x")
    assert "ops/rotations.yaml" in ctx(pipe, q)
    [report] = [r for r in pipe.repairs("x") if r.signal and r.signal.kind == "abstained"]
    assert report.signal is not None
    bound = report.signal.bound_turn
    read = {u for call in report.read for u in call.unit_ids}
    assert read and all(int(u[1:]) < bound for u in read)
    assert report.calls_used <= 8 and report.chars_revealed <= 4000
    assert any(p.accepted for p in report.proposals)


def test_a_user_correction_makes_the_corrected_value_current(env) -> None:
    pipe, clock, _ = env
    say(pipe, clock, "the staging host is stage-a.example.net")
    say(pipe, clock, "please deploy the branch to staging", "Deployed to stage-a.example.net.")
    say(pipe, clock, "no, the staging host is stage-b.example.net now")
    block = ctx(pipe, "what is the staging host?")
    assert "stage-b.example.net" in block and "stage-a.example.net" not in block
    kinds = [r.signal.kind for r in pipe.repairs("x") if r.signal]
    assert "correction" in kinds


def test_a_repair_job_interrupted_midway_completes_exactly_once(tmp_path: Path) -> None:
    clock = FakeClock()
    data = tmp_path / "data"
    rt = Runtime(data, load_settings(), use_ray=False, clock=clock)
    pipe = Pipeline(rt)
    say(pipe, clock, LONG_TURN)
    pipe.miss("x", "where is the pager rotation kept?", tool="log_search")
    # The sidecar dies after leasing the job and ingesting, before marking it done.
    [job] = rt.log("x").lease(["repair"], 1)
    from actors import repair
    from actors.investigator_actor import RepairSignal

    p = json.loads(job.payload)
    inv = rt.investigator.investigate(RepairSignal(query=p["query"], kind=p["kind"], bound_turn=p["bound_turn"],
                                                           scope="project:x"), repair.RemoteLogTools(rt.log("x")))
    rt.engine("x").ingest_repair(job.key, list(inv.accepted), repair.report_of(inv))
    before = len(pipe.memories("x"))
    rt.shutdown()
    clock.advance(10 * MIN)  # the lease expires
    rt2 = Runtime(data, load_settings(), use_ray=False, clock=clock)
    pipe2 = Pipeline(rt2)
    pipe2.drain("x")
    counts = rt2.log("x").job_counts()["repair"]
    assert counts == {"done": 1}
    assert len(pipe2.memories("x")) == before  # applied once
    assert len(pipe2.repairs("x")) == 1
    rt2.shutdown()


def test_fabricated_proposals_are_rejected_with_the_reason_recorded(tmp_path: Path) -> None:
    class Fabricator:
        name = "fabricator"

        def extract(self, units, scope):
            return []

        def investigate(self, signal, tools):
            hits = tools.search("pager rotation", 5, None)
            real = hits[0].unit
            def c(text: str, cites: tuple[str, ...]) -> Candidate:
                return Candidate(text=text, kind=Kind.NOTE, scope=signal.scope, source_unit_ids=cites,
                                 valid_from_ms=real.ts_ms, origin=Origin.REPAIR)
            return [c("The pager rotation lives in ops/rotations.yaml.", (real.id,)),  # grounded control
                    c("Ramesh keeps the pager rotation in ops/rotations.yaml.", ("u99",)),  # no such unit
                    c("The pager rotation moved to ops/pager.yaml.", ("u3",)),  # after the signal
                    c("The pager rotation is owned by Zelda in ops/zelda.yaml.", (real.id,))]  # not in the text

    clock = FakeClock()
    rt = Runtime(tmp_path / "d", load_settings(), use_ray=False, clock=clock, client_factory=Fabricator)
    pipe = Pipeline(rt)
    for text in (LONG_TURN, "thanks", "the pager rotation moved to ops/pager.yaml"):
        clock.advance(MIN)
        pipe.observe([TurnIn(project="x", user=text, ts_ms=clock.now_ms())])
    rt.log("x").enqueue_repair("repair:manual", json.dumps(
        {"kind": "log_tool", "query": "where is the pager rotation kept?", "bound_turn": 3, "session": ""}), 50)
    pipe.drain("x")
    [report] = pipe.repairs("x")
    verdicts = [(p.accepted, p.reason) for p in report.proposals]
    assert verdicts[0][0] is True
    assert [v[0] for v in verdicts[1:]] == [False, False, False]
    assert "unknown unit" in verdicts[1][1] and "after the signal" in verdicts[2][1] and "not in the cited" in verdicts[3][1]
    rt.shutdown()


def test_a_repair_report_reaches_http_and_the_cli_as_it_was_stored(tmp_path: Path) -> None:
    """RepairRecord is typed, yet GET /v1/repairs and `dynmem repairs --json` give the stored document back."""
    from fastapi.testclient import TestClient

    from bridge.app import create_app
    from bridge.auth import TOKEN_FILE

    class Half:
        name = "half"

        def extract(self, units, scope):
            return []

        def investigate(self, signal, tools):
            real = tools.search("pager rotation", 5, None)[0].unit
            return [Candidate(text="The pager rotation lives in ops/rotations.yaml.", kind=Kind.NOTE, scope=signal.scope,
                              source_unit_ids=(real.id,), valid_from_ms=real.ts_ms, origin=Origin.REPAIR),
                    Candidate(text="Zelda owns the pager rotation.", kind=Kind.NOTE, scope=signal.scope,
                              source_unit_ids=("u99",), valid_from_ms=real.ts_ms, origin=Origin.REPAIR)]

    clock = FakeClock()
    rt = Runtime(tmp_path / "d", load_settings(), use_ray=False, clock=clock, client_factory=Half)
    try:
        pipe = Pipeline(rt)
        clock.advance(MIN)
        pipe.observe([TurnIn(project="x", user=LONG_TURN, ts_ms=clock.now_ms())])
        rt.log("x").enqueue_repair("repair:manual", json.dumps(
            {"kind": "log_tool", "query": "where is the pager rotation kept?", "bound_turn": 2, "session": ""}), 50)
        pipe.drain("x")
        store = rt.engine("x").target.store
        stored = [{"job": k, "at_ms": at, **json.loads(r)} for k, at, r in store.receipts("repair:", 50)]
        assert [[("slot" in p) for p in doc["proposals"]] for doc in stored] == [[True, False]]  # control
        assert [r.model_dump(mode="json", exclude_unset=True) for r in pipe.repairs("x")] == stored  # the CLI's --json
        with TestClient(create_app(pipe, tmp_path / "d")) as client:
            token = (tmp_path / "d" / TOKEN_FILE).read_text().strip()
            got = client.get("/v1/repairs", params={"project": "x"}, headers={"Authorization": f"Bearer {token}"})
        assert got.status_code == 200 and got.json() == {"repairs": stored}
    finally:
        rt.shutdown()
