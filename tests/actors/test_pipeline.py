"""The whole pipeline in one process (no Ray): log -> extract -> embed -> ingest -> recall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.replay import replay_file
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from engine.models import TurnIn

DAY = 86_400_000
T0 = 1_767_225_600_000

# Values change several times, each change worded differently, with noise in between.
HISTORY = [
    ("the API listens on port 8080", "Noted."),
    ("we use npm for packages", "OK."),
    ("can you fix the flaky checkout test?", "Fixed the race in test_checkout."),
    ("moved the api server to port 9090", "Updated the Dockerfile to expose 9090."),
    ("thanks!", "You're welcome."),
    ("from now on we use pnpm, not npm", "Switched the lockfile to pnpm."),
    ("what port are we on again?", "9090, since the last change."),
    ("backend port is 7070 now", "Done, the API now listens on 7070."),
    ("run the tests with `pytest -x`", "Will do."),
    ("the test command is now `make test`", "Updated the CI job."),
]


def write_history(path: Path, project: str, rows: list[tuple[str, str]], start: int = 0) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i, (user, assistant) in enumerate(rows):
            ts = T0 + (start + i) * DAY
            from datetime import datetime, timezone

            iso = datetime.fromtimestamp(ts / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")
            fh.write(json.dumps({"project": project, "session": f"s{i // 3}", "ts": iso, "user": user,
                                 "assistant": assistant, "request_id": f"{project}-{start + i}"}) + "\n")
    return path


@pytest.fixture
def pipe(tmp_path: Path) -> Pipeline:
    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False)
    yield Pipeline(rt)
    rt.shutdown()


def recall(pipe: Pipeline, project: str, query: str, **kw: object) -> str:
    return pipe.recall(RecallRequest(project=project, query=query, passive=True, **kw)).context


@pytest.mark.parametrize("budget", [None, 64])
def test_recall_serves_current_values_never_superseded_ones(pipe: Pipeline, tmp_path: Path, budget: int | None) -> None:
    replay_file(pipe, write_history(tmp_path / "h.jsonl", "shop", HISTORY))
    port = recall(pipe, "shop", "which port does the API listen on?", budget_tokens=budget)
    assert "7070" in port and "8080" not in port and "9090" not in port
    pm = recall(pipe, "shop", "which package manager do we use?", budget_tokens=budget)
    assert "pnpm" in pm and "npm for" not in pm
    tests = recall(pipe, "shop", "how do I run the tests?", budget_tokens=budget)
    assert "make test" in tests and "pytest -x" not in tests


def test_replaying_older_turns_does_not_resurrect_retired_values(pipe: Pipeline, tmp_path: Path) -> None:
    replay_file(pipe, write_history(tmp_path / "h.jsonl", "shop", HISTORY))
    # The same old statements arrive again under new request ids but with their old times
    # (e.g. a second export of the same log): retired values must stay retired.
    old = tmp_path / "old.jsonl"
    write_history(old, "shop", HISTORY[:4])
    old.write_text(old.read_text().replace('"request_id": "shop-', '"request_id": "again-'))
    replay_file(pipe, old)
    port = recall(pipe, "shop", "which port does the API listen on?")
    assert "7070" in port and "8080" not in port and "9090" not in port
    # Positive control: the same words with *newer* evidence are a genuine new assertion.
    newer = write_history(tmp_path / "newer.jsonl", "shop", [HISTORY[3]], start=200)
    replay_file(pipe, newer)
    assert "9090" in recall(pipe, "shop", "which port does the API listen on?")


def test_projects_never_see_each_other(pipe: Pipeline) -> None:
    pipe.observe([TurnIn(project="alpha", user="the API listens on port 5001", ts_ms=T0, request_id="a1"),
                  TurnIn(project="beta", user="the API listens on port 6002", ts_ms=T0, request_id="b1")])
    pipe.drain("alpha")
    pipe.drain("beta")
    a = recall(pipe, "alpha", "what port does the API use?")
    b = recall(pipe, "beta", "what port does the API use?")
    assert "5001" in a and "6002" not in a
    assert "6002" in b and "5001" not in b


def test_global_memories_reach_every_project(pipe: Pipeline) -> None:
    pipe.remember(RememberRequest(project="alpha", text="The user prefers answers in British English.", scope="global"))
    pipe.remember(RememberRequest(project="alpha", text="Alpha deploys with Helm charts.", scope="project"))
    assert "British English" in recall(pipe, "beta", "which spelling should answers use, British English?")
    assert "Helm" not in recall(pipe, "beta", "how does alpha deploy with Helm charts?")
    assert "Helm" in recall(pipe, "alpha", "how does alpha deploy with Helm charts?")  # positive control


def test_remember_then_forget_is_never_recalled_again_even_after_replay(pipe: Pipeline, tmp_path: Path) -> None:
    hist = write_history(tmp_path / "h.jsonl", "shop", [("the staging host is stage-01.example.net", "OK.")])
    replay_file(pipe, hist)
    assert "stage-01" in recall(pipe, "shop", "what is the staging host?")
    rep = pipe.remember(RememberRequest(project="shop", text="Releases are cut every second Tuesday."))
    assert "second Tuesday" in recall(pipe, "shop", "when are releases cut?")
    pipe.forget(ForgetRequest(project="shop", memory_id=rep.memory_ids[0]))
    assert "second Tuesday" not in recall(pipe, "shop", "when are releases cut?")
    pipe.forget(ForgetRequest(project="shop", match="stage-01"))
    # The older turn that first stated it is replayed again (new request id, same old time).
    again = tmp_path / "again.jsonl"
    row = json.loads(hist.read_text())
    row["request_id"] = "replayed"
    again.write_text(json.dumps(row) + "\n")
    replay_file(pipe, again)
    assert "stage-01" not in recall(pipe, "shop", "what is the staging host?")


def test_stop_and_start_again_recalls_the_same_memories(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rt = Runtime(data, load_settings(), use_ray=False)
    pipe = Pipeline(rt)
    replay_file(pipe, write_history(tmp_path / "h.jsonl", "shop", HISTORY))
    before = pipe.recall(RecallRequest(project="shop", query="which port does the API listen on?", passive=True))
    listed = {m.id for m in pipe.memories("shop")}
    rt.shutdown()
    rt2 = Runtime(data, load_settings(), use_ray=False)
    pipe2 = Pipeline(rt2)
    after = pipe2.recall(RecallRequest(project="shop", query="which port does the API listen on?", passive=True))
    assert [m.id for m in after.memories] == [m.id for m in before.memories] and after.context == before.context
    assert {m.id for m in pipe2.memories("shop")} == listed
    rt2.shutdown()


def test_failed_extraction_is_retried_then_dead_and_visible(tmp_path: Path) -> None:
    class Broken:
        name = "broken"

        def extract(self, units, scope):
            raise RuntimeError("model exploded")

    settings = load_settings()
    rt = Runtime(tmp_path / "d", settings, use_ray=False, client_factory=Broken)
    pipe = Pipeline(rt)
    pipe.observe([TurnIn(project="p", user="the API listens on port 1234", request_id="x")])
    import time

    deadline = time.time() + 30
    while time.time() < deadline and pipe.pending("p"):
        pipe.drain("p", max_rounds=3)
    counts = rt.log("p").job_counts()
    assert counts["extract"].get("dead") == 1 and not counts["extract"].get("done")
    jobs = rt.log("p").jobs("dead")
    assert "model exploded" in jobs[0].last_error
    rt.shutdown()


def test_the_engine_view_always_equals_its_store(pipe: Pipeline, tmp_path: Path) -> None:
    replay_file(pipe, write_history(tmp_path / "h.jsonl", "shop", HISTORY * 8))
    engine = pipe.rt.engine("shop").target
    stored = {m.id: m for m in engine.store.load_memories()}
    assert {m.id: m for m in engine.table} == stored and len(stored) > 5


def test_core_memories_are_always_on_until_forgotten(pipe: Pipeline) -> None:
    rep = pipe.remember(RememberRequest(project="shop", text="Always answer in British English.", tier="core"))
    pipe.remember(RememberRequest(project="shop", text="The API listens on port 7070."))
    assert "British English" in recall(pipe, "shop", "which port does the API use?")
    pipe.forget(ForgetRequest(project="shop", memory_id=rep.memory_ids[0]))
    block = recall(pipe, "shop", "which port does the API use?")
    assert "British English" not in block and "7070" in block  # positive control


def test_every_memory_of_the_example_history_is_grounded_in_its_source_turns(pipe: Pipeline) -> None:
    from engine.grounding import occurs_whole

    example = Path(__file__).resolve().parents[2] / "examples" / "shop-api-history.jsonl"
    replay_file(pipe, example)
    project = "shop-api"
    units = {u.id: u for u in pipe.log_timeline(project, limit=1000)}
    memories = [m for m in pipe.memories(project) if m.origin.value == "extractor"]
    assert len(memories) > 40  # positive control: the history yields memories
    for m in memories:
        source = "\n".join(f"{units[i].user}\n{units[i].assistant}" for i in m.source_unit_ids if i in units)
        assert source, m
        if m.belief:
            assert occurs_whole(m.belief, source), (m.text, m.belief, m.source_unit_ids)


def _frozen_runtime(folder: Path) -> Runtime:
    from actors.clock import FakeClock

    base = load_settings()
    settings = base.model_copy(update={"embedder": base.embedder.model_copy(update={"name": "hash"})})
    return Runtime(folder, settings, use_ray=False, clock=FakeClock(1_796_000_000_000))


def test_a_replay_that_logs_while_it_distils_leaves_the_memories_of_logging_first(tmp_path: Path) -> None:
    import threading

    from actors.replay import DEMO_HISTORY, read_lines
    from engine.history import parse_history

    overlapped_rt, first_rt = _frozen_runtime(tmp_path / "a"), _frozen_runtime(tmp_path / "b")
    try:
        overlapped = Pipeline(overlapped_rt, batch_jobs=8)  # many batches while the log is still filling
        report = replay_file(overlapped, Path(str(DEMO_HISTORY)))
        first = Pipeline(first_rt, batch_jobs=8)
        turns, _ = parse_history(read_lines(Path(str(DEMO_HISTORY))), now_ms=first_rt.clock.now_ms())
        first.observe(turns)  # everything logged, then distilled
        first.drain("shop-api")
        assert report.new_turns == len(turns) == 178
        mine = [m.model_dump() for m in overlapped.export("shop-api")]
        assert mine == [m.model_dump() for m in first.export("shop-api")] and len(mine) > 20
        # the gate: while turns are still being logged, a lookahead never leases less than a batch
        logging = threading.Event()
        log = first_rt.log("late")
        log.append([TurnIn(project="late", user=f"the API listens on port {8000 + i}", request_id=f"l{i}")
                    for i in range(5)])
        assert first._start_batch("late", log, 8, logging, wait=False) is None
        logging.set()
        started = first._start_batch("late", log, 8, logging, wait=False)
        assert started is not None and len(started[1]) == 5  # once all is logged: what there is
    finally:
        overlapped_rt.shutdown()
        first_rt.shutdown()


def test_a_deeper_extraction_queue_leaves_the_same_memories(tmp_path: Path) -> None:
    from actors.replay import DEMO_HISTORY

    deep_rt, flat_rt = _frozen_runtime(tmp_path / "deep"), _frozen_runtime(tmp_path / "flat")
    try:
        deep, flat = Pipeline(deep_rt, batch_jobs=8), Pipeline(flat_rt, batch_jobs=8)
        assert flat._lookahead() == 1  # two offline workers of one request each
        deep._lookahead = lambda: 3  # type: ignore[method-assign]  # three batches extracted ahead
        for pipe in (deep, flat):
            replay_file(pipe, Path(str(DEMO_HISTORY)))
        mine = [m.model_dump() for m in deep.export("shop-api")]
        assert mine == [m.model_dump() for m in flat.export("shop-api")] and len(mine) > 20
    finally:
        deep_rt.shutdown()
        flat_rt.shutdown()


def test_adjudicate_calls_pause_before_each_verdict(tmp_path: Path) -> None:
    from engine.settings import EmbedderSettings

    settings = load_settings().model_copy(update={"embedder": EmbedderSettings(name="hash")})
    rt = Runtime(tmp_path / "data", settings, use_ray=False)
    pipe = Pipeline(rt)
    for a, b in [("scripts/deploy.sh", "scripts/ship.sh"), ("the orders table", "the invoices table"),
                 ("port 8080", "port 9090")]:  # near-duplicates with other values: tensions to judge
        for where in (a, b):
            pipe.remember(RememberRequest(project="shop",
                                          text=f"The nightly backup job of the shop service writes to {where} every night."))
    engine = rt.engine("shop")

    def done() -> int:
        return engine.job_counts().get("adjudicate", {}).get("done", 0)

    start = done()
    assert engine.job_counts().get("adjudicate", {}).get("pending", 0) >= 3  # positive control: work exists
    seen: list[int] = []
    decided = pipe.adjudicate("shop", n=3, pause=lambda: seen.append(done() - start))
    rt.shutdown()
    assert decided == 3
    assert seen == [0, 1, 2]  # each pause came before its verdict, one per verdict


@pytest.mark.parametrize("renewal", [True, False])
def test_a_job_waiting_in_a_deep_queue_is_not_leased_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            renewal: bool) -> None:
    """A 3 s endpoint with one request in flight and 64 jobs leased (a batch and its lookahead):
    the last ones wait ~190 s, past the 60 s lease. The drain renews the leases it holds, so
    every turn is sent to the model once and every job is done at its first attempt. Without
    the renewal (the control), the waiting batch is taken again as if its holder had died."""
    from collections import Counter

    from actors.clock import FakeClock
    from actors.llm.rules import RulesClient
    from actors.store import jobs

    clock = FakeClock(1_796_000_000_000)
    sent: Counter[str] = Counter()

    class SlowEndpoint(RulesClient):
        def extract(self, units, scope):  # type: ignore[no-untyped-def]
            for u in units:
                sent[u.id] += 1
            clock.advance(3000 * len(units))  # one request in flight: each turn costs 3 s of wall time
            return super().extract(units, scope)

    if not renewal:
        monkeypatch.setattr(jobs, "renew", lambda conn, tokens, now_ms, lease_ms: 0)
    base = load_settings()
    settings = base.model_copy(update={"embedder": base.embedder.model_copy(update={"name": "hash"}),
                                       "runtime": base.runtime.model_copy(update={"lease_s": 60.0})})
    rt = Runtime(tmp_path / "d", settings, use_ray=False, clock=clock, client_factory=SlowEndpoint)
    try:
        pipe = Pipeline(rt, batch_jobs=32)
        assert pipe._lookahead() == 1  # a batch being extracted and one leased ahead: 64 jobs held
        pipe.observe([TurnIn(project="p", user=f"note {i}: the build takes {i} minutes", assistant="ok",
                             ts_ms=clock.now_ms() - 100_000 + i, request_id=f"q{i}") for i in range(96)])
        pipe.drain("p", max_rounds=12)  # three batches of 32: a few rounds are plenty
        records = rt.log("p").jobs(kind="extract", limit=1000)
        assert len(records) == 96
        if renewal:
            assert all(j.state.value == "done" for j in records)
            assert set(sent.values()) == {1} and len(sent) == 96
            assert {j.attempts for j in records} == {1}
        else:
            # the control: the same turns went to the model again, and with every lease running
            # out before its ack the drain makes no progress at all (a stale holder's ack is ignored)
            assert max(sent.values()) > 1
            assert max(j.attempts for j in records) > 1
            assert any(j.state.value != "done" for j in records)
    finally:
        rt.shutdown()


@pytest.mark.parametrize("credit_fsync", [False, True])
def test_a_live_recall_commits_its_credit_without_fsync_unless_asked(tmp_path: Path, credit_fsync: bool) -> None:
    base = load_settings()
    settings = base.model_copy(update={"retrieval": base.retrieval.model_copy(update={"credit_fsync": credit_fsync})})
    rt = Runtime(tmp_path / "data", settings, use_ray=False)
    try:
        pipe = Pipeline(rt)
        pipe.remember(RememberRequest(project="shop", text="the API listens on port 9090"))
        store = rt.engine("shop").target.store
        seen: list[str] = []
        store.conn.set_trace_callback(seen.append)
        res = pipe.recall(RecallRequest(project="shop", query="which port does the API listen on?"))
        assert res.memories, "the recall must inject the memory for its credit to be committed"
        store.settle()  # the credit is committed after the reply
        relaxed = "PRAGMA synchronous = NORMAL" in seen
        assert relaxed is not credit_fsync
        seen.clear()
        pipe.recall(RecallRequest(project="shop", query="which port does the API listen on?", passive=True))
        assert "PRAGMA synchronous = NORMAL" not in seen and not any(q.startswith("BEGIN") for q in seen)  # writes nothing
        assert rt.engine("shop").target.injected(res.retrieval_id)  # the receipt is there for feedback
        store.conn.set_trace_callback(None)
    finally:
        rt.shutdown()


def test_a_recall_asks_the_global_engine_only_after_the_global_store_changed(pipe: Pipeline) -> None:
    pipe.remember(RememberRequest(project="shop", text="the API listens on port 9090"))
    target = pipe.rt.global_engine.target
    asked: list[int] = []
    snapshot = target.snapshot

    def counting(since_version: int) -> object:
        asked.append(since_version)
        return snapshot(since_version)

    target.snapshot = counting
    query = RecallRequest(project="shop", query="which port does the API listen on?", passive=True)
    pipe.recall(query)  # the first look: the project engine takes the global snapshot once
    first = len(asked)
    for _ in range(3):
        pipe.recall(query)
    assert len(asked) == first  # nothing changed in the global store: no call to its engine
    pipe.remember(RememberRequest(project="shop", scope="global", text="I prefer tabs over spaces in every repo"))
    res = pipe.recall(RecallRequest(project="shop", query="tabs or spaces in the repo?", passive=True))
    assert len(asked) == first + 1  # positive control: a change of the global store is asked for once
    assert any("tabs" in m.text for m in res.memories)  # and the new global memory is served


def test_a_live_recall_replies_before_its_credit_is_committed_and_feedback_still_finds_it(tmp_path: Path) -> None:
    import threading

    rt = Runtime(tmp_path / "data", load_settings(), use_ray=False)
    try:
        pipe = Pipeline(rt)
        pipe.remember(RememberRequest(project="shop", text="the API listens on port 9090"))
        engine = rt.engine("shop").target
        store = engine.store
        gate = threading.Event()
        apply = store.apply
        committed: list[str | None] = []

        def held_apply(effects: Any, *args: Any, **kwargs: Any) -> bool:
            gate.wait(5)  # the commit cannot finish before the recall has replied
            committed.append(effects.receipt)
            return apply(effects, *args, **kwargs)

        store.apply = held_apply
        res = pipe.recall(RecallRequest(project="shop", query="which port does the API listen on?"))
        assert res.memories and committed == []  # replied; the credit is not in the store yet
        threading.Timer(0.05, gate.set).start()
        # Feedback reads the receipt from the store: it waits for the commit and finds it.
        assert [m.id for m in engine.injected(res.retrieval_id)] == [m.id for m in res.memories]
        assert committed == ["recall:" + res.retrieval_id]
        store.apply = apply
        # A retry with the same retrieval id is credited once (positive control: one receipt, one commit).
        before = engine.table.get(res.memories[0].id)
        engine.recall(RecallRequest(project="shop", query="which port does the API listen on?"), res.retrieval_id)
        store.settle()
        assert engine.table.get(res.memories[0].id) == before
    finally:
        rt.shutdown()


def _turn(project: str, rid: str, user: str) -> TurnIn:
    return TurnIn(project=project, session="s", user=user, assistant="ok", request_id=rid)


def test_a_batch_of_several_projects_is_acknowledged_turn_by_turn_in_order(pipe: Pipeline) -> None:
    """The group commit of the sidecar writes the observes of several agents in one batch: each
    caller's ack must be its own turn's (before, the acks came grouped by project)."""
    turns = [_turn("a", "a1", "the api listens on port 8080"), _turn("b", "b1", "we use pnpm"),
             _turn("a", "a2", "deploys go out on fridays")]
    acks = pipe.observe(turns)
    assert [(ack.project, ack.turn) for ack in acks] == [("a", 1), ("b", 1), ("a", 2)]
    assert [u.user for u in pipe.rt.log("a").units([acks[0].unit_id, acks[2].unit_id])] == [turns[0].user, turns[2].user]


def test_observe_on_an_event_loop_takes_the_blocking_path_in_process(pipe: Pipeline) -> None:
    import asyncio

    offloaded: list[str] = []

    async def offload(fn: Any) -> Any:
        offloaded.append("call")
        return fn()

    turns = [_turn("a", "a1", "the api listens on port 8080"), _turn("b", "b1", "we use pnpm")]
    acks = asyncio.run(pipe.observe_async(turns, offload))
    assert [(a.project, a.turn, a.created) for a in acks] == [("a", 1, True), ("b", 1, True)]
    assert offloaded == ["call"]  # an in-process runtime has no actor to await


def test_a_change_shown_only_as_a_diff_replaces_the_value_stated_before(pipe: Pipeline, tmp_path: Path) -> None:
    diff = ("Fixed: the relay now binds elsewhere.\n\n```diff\n--- a/conf/relay.toml\n+++ b/conf/relay.toml\n"
            " [relay]\n-listen_port = 7311\n+listen_port = 7420\n```\n")
    rows = [("the relay service listens on port 7311", "Noted."),
            ("the relay clashes with the metrics agent on startup, sort it out", diff)]
    replay_file(pipe, write_history(tmp_path / "h.jsonl", "relayproj", rows))
    block = recall(pipe, "relayproj", "which port does the relay listen on?")
    assert "7420" in block
    assert "7311" not in block
    control = recall(pipe, "relayproj", "which port did the relay listen on before 7420, was it 7311?")
    assert "7420" in control  # positive control: the store answers about the relay at all


def test_a_question_that_names_its_own_project_finds_what_the_same_question_without_it_finds(pipe: Pipeline) -> None:
    """The recall is scoped to the project already: its name in the question is no evidence (engine.retrieval.search_text)."""
    pipe.remember(RememberRequest(project="marrowfield", text="CI runs on GitHub Actions.", scope="project"))
    plain = recall(pipe, "marrowfield", "where does CI run?")
    named = recall(pipe, "marrowfield", "where does marrowfield's CI run?")
    assert "GitHub Actions" in plain  # the control
    assert named == plain
