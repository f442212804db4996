"""Truth maintenance end to end (in one process): reviews, retirement, as-of, purge, audit."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from engine.errors import Conflict
from engine.models import Origin, TurnIn, TrustState

DAY = 86_400_000


@pytest.fixture
def env(tmp_path: Path):
    clock = FakeClock()
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False, clock=clock)
    yield Pipeline(rt), clock, tmp_path / "data"
    rt.shutdown()


def ctx(pipe: Pipeline, query: str, project: str = "x", **kw: object) -> str:
    return pipe.recall(RecallRequest(project=project, query=query, passive=True, **kw)).context


def say(pipe: Pipeline, clock: FakeClock, text: str, project: str = "x") -> None:
    clock.advance(DAY)
    pipe.observe([TurnIn(project=project, user=text, ts_ms=clock.now_ms())])
    pipe.drain(project)


def conflict(pipe: Pipeline, clock: FakeClock) -> list:
    pipe.remember(RememberRequest(project="x", text="Production deploys go to the cluster eu-west-1."))
    clock.advance(DAY)
    pipe.remember(RememberRequest(project="x", text="Production deploys go to the cluster us-east-2."))
    pipe.recall(RecallRequest(project="x", query="where do production deploys go?"))  # live recall: suppression
    pipe.drain("x")
    return pipe.reviews("x")


def test_a_contradiction_is_filed_for_review_and_stays_visible_until_settled(env) -> None:
    pipe, clock, _ = env
    reviews = conflict(pipe, clock)
    assert len(reviews) == 1
    block = ctx(pipe, "where do production deploys go?")
    assert "[contested]" in block and "eu-west-1" in block and "us-east-2" in block
    mems = pipe.decide_review("x", reviews[0].review.id, "accept_new", Origin.HUMAN, "moved in March")
    assert {m.text: m.state for m in mems} == {"Production deploys go to the cluster us-east-2.": TrustState.ACTIVE,
                                               "Production deploys go to the cluster eu-west-1.": TrustState.SUPERSEDED}
    block = ctx(pipe, "where do production deploys go?")
    assert "us-east-2" in block and "eu-west-1" not in block and "[contested]" not in block
    with pytest.raises(Conflict):
        pipe.decide_review("x", reviews[0].review.id, "keep_old", Origin.HUMAN)


@pytest.mark.parametrize("decision,served", [("keep_old", {"eu-west-1"}), ("keep_both", {"eu-west-1", "us-east-2"}),
                                             ("retract_both", set())])
def test_every_review_decision(env, decision: str, served: set[str]) -> None:
    pipe, clock, _ = env
    review = conflict(pipe, clock)[0].review
    pipe.decide_review("x", review.id, decision, Origin.HUMAN, "checked with ops")
    block = ctx(pipe, "where do production deploys go?", k=10)
    assert {v for v in ("eu-west-1", "us-east-2") if v in block} == served
    assert "[contested]" not in block


def test_as_of_returns_the_value_valid_then_and_none_of_the_others(env) -> None:
    pipe, clock, _ = env
    say(pipe, clock, "the API listens on port 8080")
    t1 = clock.now_ms()
    say(pipe, clock, "moved the api server to port 9090")
    t2 = clock.now_ms()
    say(pipe, clock, "backend port is 7070 now")
    q = "which port does the API listen on?"
    then1, then2 = ctx(pipe, q, as_of_ms=t1 + 1), ctx(pipe, q, as_of_ms=t2 + 1)
    assert "8080" in then1 and "9090" not in then1 and "7070" not in then1
    assert "9090" in then2 and "8080" not in then2 and "7070" not in then2
    now = ctx(pipe, q)
    assert "7070" in now and "8080" not in now and "9090" not in now
    versions = pipe.detail("x", pipe.memories("x", "active")[0].id).versions
    assert [v.belief for v in versions] == ["8080", "9090", "7070"]


def test_retired_memories_are_never_served(env) -> None:
    pipe, clock, _ = env
    say(pipe, clock, "the staging host is stage-old.example.net")
    say(pipe, clock, "the staging host is now stage-new.example.net")  # supersedes
    kept = pipe.remember(RememberRequest(project="x", text="The release freeze lasts until the demo.", ttl_hours=1))
    gone = pipe.remember(RememberRequest(project="x", text="The billing webhook secret rotates monthly."))
    assert "release freeze" in ctx(pipe, "is there a release freeze?")  # positive control
    assert "billing webhook" in ctx(pipe, "how often does the billing webhook secret rotate?")
    pipe.forget(ForgetRequest(project="x", memory_id=gone.memory_ids[0]))
    clock.advance(2 * 3_600_000)  # the TTL passes
    assert "release freeze" not in ctx(pipe, "is there a release freeze?")
    assert "billing webhook" not in ctx(pipe, "how often does the billing webhook secret rotate?")
    host = ctx(pipe, "what is the staging host?")
    assert "stage-new" in host and "stage-old" not in host
    # The memory_search tool reply is a passive recall, and the log tools never show memories.
    assert kept.memory_ids


def test_purge_leaves_the_text_in_no_file(env) -> None:
    pipe, clock, data = env
    secret_phrase = "quokka-ledger-7781"
    say(pipe, clock, f"the nightly export bucket is {secret_phrase}")
    say(pipe, clock, "the API listens on port 8080")

    def files_with(phrase: bytes) -> list[str]:
        pipe.rt.engine("x").ping()
        return [str(p) for p in data.rglob("*") if p.is_file() and phrase in p.read_bytes()]

    assert files_with(secret_phrase.encode())  # positive control: it is on disk before
    assert pipe.log_search("x", secret_phrase)
    target = next(m for m in pipe.memories("x") if secret_phrase in m.text)
    pipe.forget(ForgetRequest(project="x", memory_id=target.id, purge=True))
    assert files_with(secret_phrase.encode()) == []
    assert pipe.log_search("x", secret_phrase) == []
    assert secret_phrase not in ctx(pipe, "which bucket does the nightly export use?")
    assert "8080" in ctx(pipe, "which port does the API listen on?")  # the rest survives


def test_every_state_of_every_memory_is_explained_by_its_history(env) -> None:
    pipe, clock, _ = env
    say(pipe, clock, "the API listens on port 8080")
    say(pipe, clock, "moved the api server to port 9090")
    review = conflict(pipe, clock)[0].review
    pipe.decide_review("x", review.id, "keep_both", Origin.HUMAN, "two regions")
    doomed = pipe.remember(RememberRequest(project="x", text="Fridays are deploy-free."))
    pipe.forget(ForgetRequest(project="x", memory_id=doomed.memory_ids[0]))
    for m in pipe.memories("x"):
        history = pipe.detail("x", m.id).history
        states = [e.to_state for e in history if e.to_state]
        assert history[0].action in ("create", "import"), m.id
        assert states[-1] == m.state.value, (m.id, [(e.action, e.to_state) for e in history])
        assert all(e.actor for e in history)
