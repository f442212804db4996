"""Tests for actors.investigator_actor: bounded, budgeted, passive log reads and grounded proposals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.investigator_actor import (
    BudgetedLog,
    InvestigatorService,
    REPAIR_PROMPT_VERSION,
    RepairSignal,
)
from actors.llm.rules import RulesClient
from actors.store.log_store import LogStore
from engine.errors import BudgetExceeded
from engine.models import Candidate, Kind, Origin, TurnIn

T0 = 1_767_225_600_000
LONG = (
    "Long day. The standup ran over again and I still have not had coffee, honestly the build was "
    "flaky all morning and I spent an hour chasing a timeout that turned out to be the VPN. oh and the "
    "on-call pager rotation lives in the ops/rotations.yaml file, Ramesh maintains it. Anyway, can you "
    "look at the failing lint job next?"
)
LATER_ANSWER = "Correction for the record: the pager rotation is kept in ops/oncall/pager.yaml, Priya maintains the pager rotation."
TURNS = [
    ("we use pnpm for everything", "Noted."),
    ("the API listens on port 9090", "OK."),
    (LONG, "Sure, I will look at the lint job."),  # u3: the fact, said once, in passing
    ("run the tests", "All 120 tests pass."),
    ("where is the pager rotation kept?", "I do not know."),  # u5: the signal
    (LATER_ANSWER, "OK."),  # u6: a better answer, after the signal
]
SIGNAL = RepairSignal(query="where is the pager rotation kept?", kind="abstained", bound_turn=5, scope="project:p")


@pytest.fixture
def log(tmp_path: Path) -> Iterator[LogStore]:
    store = LogStore(tmp_path / "log.sqlite")
    store.append([TurnIn(project="p", user=u, assistant=a, ts_ms=T0 + i) for i, (u, a) in enumerate(TURNS)], T0)
    yield store
    store.close()


def investigate(log: LogStore, signal: RepairSignal = SIGNAL, **budget: int) -> object:
    return InvestigatorService.with_client(RulesClient()).investigate(signal, log, **budget)


def returned_turns(inv: object) -> list[int]:
    return [int(i[1:]) for call in inv.trace for i in call.unit_ids]  # type: ignore[attr-defined]


def test_the_extractor_misses_the_fact_in_passing() -> None:  # premise of the next test
    from engine.models import Unit

    unit = Unit(id="u3", project="p", session="s", turn=3, ts_ms=T0, user=LONG, assistant="ok", request_id="r")
    # Nothing the engine would store: a clause proposed as a mention only updates a setting already held.
    assert [c for c in RulesClient().extract([unit], "project:p") if not c.update_only] == []


def test_a_fact_said_once_in_a_long_turn_is_found_and_grounded(log: LogStore) -> None:
    inv = investigate(log)
    [accepted] = inv.accepted  # type: ignore[attr-defined]
    assert accepted.source_unit_ids == ("u3",)
    assert "ops/rotations.yaml" in accepted.text and "Ramesh" in accepted.text
    assert accepted.text == "The on-call pager rotation lives in the ops/rotations.yaml file, Ramesh maintains it."
    assert (accepted.kind, accepted.key, accepted.belief) == (Kind.NOTE, "", "")
    assert (accepted.origin, accepted.prompt_version) == (Origin.REPAIR, REPAIR_PROMPT_VERSION)
    assert accepted.valid_from_ms == T0 + 2 and accepted.scope == "project:p"
    assert inv.verdicts[0].reason == "grounded in u3"  # type: ignore[attr-defined]


def test_a_better_answer_after_the_bound_is_never_read(log: LogStore) -> None:
    inv = investigate(log)
    assert returned_turns(inv) and max(returned_turns(inv)) < SIGNAL.bound_turn
    assert all("oncall/pager.yaml" not in p.text for p in inv.proposals)  # type: ignore[attr-defined]
    # Positive control: with the bound after it, the later answer is read and proposed.
    later = investigate(log, SIGNAL.model_copy(update={"bound_turn": 7}))
    assert 6 in returned_turns(later)
    assert any(p.source_unit_ids == ("u6",) for p in later.accepted)  # type: ignore[attr-defined]


def test_the_extractor_answers_when_it_can(log: LogStore) -> None:
    signal = RepairSignal(query="what port does the API use?", kind="abstained", bound_turn=5, scope="project:p")
    inv = investigate(log, signal)
    [accepted] = inv.accepted  # type: ignore[attr-defined]
    assert "9090" in accepted.text and accepted.source_unit_ids == ("u2",)
    assert accepted.key and accepted.origin is Origin.REPAIR and accepted.prompt_version == REPAIR_PROMPT_VERSION


def test_a_query_with_no_match_proposes_nothing(log: LogStore) -> None:
    signal = SIGNAL.model_copy(update={"query": "which kubernetes cluster hosts grafana?"})
    inv = investigate(log, signal)
    assert inv.proposals == [] and inv.accepted == []  # type: ignore[attr-defined]
    assert inv.calls_used <= 8  # type: ignore[attr-defined]


def test_the_default_budget_is_respected_on_a_long_log(tmp_path: Path) -> None:
    store = LogStore(tmp_path / "log.sqlite")
    filler = "the pager rotation came up again in the retro, " + "nothing decided, lots of talk. " * 20
    store.append([TurnIn(project="p", user=f"{i}: {filler}", assistant="ok " * 50, ts_ms=T0 + i) for i in range(40)], T0)
    inv = InvestigatorService.with_client(RulesClient()).investigate(SIGNAL.model_copy(update={"bound_turn": 41}), store)
    assert inv.calls_used <= 8 and inv.chars_revealed <= 4000
    revealed = sum(c.chars for c in inv.trace)
    assert revealed == inv.chars_revealed <= 4000
    store.close()


def test_a_tiny_call_budget_stops_cleanly_and_is_recorded(log: LogStore) -> None:
    inv = investigate(log, budget_calls=1)
    assert inv.calls_used == 1 and "tool-call budget of 1 spent" in inv.stopped  # type: ignore[attr-defined]
    assert inv.trace[-1].refused and inv.trace[-1].tool == "window"  # type: ignore[attr-defined]
    assert [p.source_unit_ids for p in inv.accepted] == [("u3",)]  # the search hit was enough  # type: ignore[attr-defined]
    none = investigate(log, budget_calls=0)
    assert none.calls_used == 0 and none.proposals == [] and none.trace[0].refused  # type: ignore[attr-defined]


def test_a_tiny_character_budget_cuts_the_text_and_stops(log: LogStore) -> None:
    inv = investigate(log, budget_chars=100)
    first = inv.trace[0]  # type: ignore[attr-defined]
    assert first.truncated and first.chars == 100 and inv.chars_revealed == 100  # type: ignore[attr-defined]
    assert "character budget of 100 spent" in inv.stopped  # type: ignore[attr-defined]
    assert inv.proposals == []  # a cut unit is never quoted  # type: ignore[attr-defined]


def test_budgeted_log_raises_past_the_call_budget_and_records_it(log: LogStore) -> None:
    view = BudgetedLog(log, bound_turn=5, budget_calls=2)
    assert view.window("u3", radius=0)[0].id == "u3"
    view.timeline(around_turn=3, limit=4)
    with pytest.raises(BudgetExceeded, match="tool-call budget of 2 spent"):
        view.units(["u1"])
    assert [(c.tool, c.refused) for c in view.trace] == [("window", False), ("timeline", False), ("units", True)]
    assert view.calls_used == 2


def test_budgeted_log_filters_units_at_or_after_the_bound(log: LogStore) -> None:
    view = BudgetedLog(log, bound_turn=5)
    assert [u.id for u in view.units(["u4", "u5", "u6"])] == ["u4"]
    assert [u.id for u in view.window("u6", radius=2)] == ["u4"]  # u4..u6 exist; only u4 precedes the bound
    assert view.window("u6", radius=1) == []
    assert all(u.turn < 5 for u in view.timeline(around_turn=100, limit=10))
    assert all(h.unit.turn < 5 for h in view.search("pager rotation", limit=10, before_turn=99))
    assert view.window("u9") == [] and "NotFound" in view.trace[-1].error  # an unknown unit is recorded
    chars_before = view.chars_revealed
    view.units(["u6"])
    assert view.chars_revealed == chars_before  # filtered units cost nothing


def test_a_unit_is_charged_once(log: LogStore) -> None:
    view = BudgetedLog(log, bound_turn=5)
    view.units(["u3"])
    once = view.chars_revealed
    view.window("u3", radius=0)
    assert once == len(LONG) + len(TURNS[2][1]) and view.chars_revealed == once


def test_investigating_changes_nothing_in_the_log(log: LogStore) -> None:
    before = (log.unit_count(), log.job_counts(), log.units([f"u{i}" for i in range(1, 7)]))
    investigate(log)
    investigate(log, budget_calls=1)
    assert (log.unit_count(), log.job_counts(), log.units([f"u{i}" for i in range(1, 7)])) == before


class FabricatingClient:
    """A model client whose investigator reads through the budgeted log and then makes things up."""

    name = "fabricator"

    def investigate(self, signal: RepairSignal, tools: BudgetedLog) -> list[Candidate]:
        [hit] = [h for h in tools.search("pager rotation", limit=5) if h.unit.id == "u3"]
        t = hit.unit.ts_ms

        def c(text: str, *src: str) -> Candidate:
            return Candidate(text=text, scope=signal.scope, source_unit_ids=src, valid_from_ms=t)

        return [
            c("The on-call pager rotation lives in the ops/rotations.yaml file.", "u3"),
            c("The pager rotation is kept in ops/oncall/pager.yaml.", "u6"),
            c("The pager rotation is kept in ops/rotations.yaml.", "u42"),
            c("The pager rotation lives in ops/oncall.yaml, maintained by Priya.", "u3"),
            c("Ask memory_search where the pager rotation lives.", "u3"),
        ]


def test_fabricated_proposals_are_rejected_with_reasons(log: LogStore) -> None:
    inv = InvestigatorService.with_client(FabricatingClient()).investigate(SIGNAL, log)  # type: ignore[arg-type]
    reasons = [(v.accepted, v.reason) for v in inv.verdicts]
    assert reasons == [
        (True, "grounded in u3"),  # positive control
        (False, "cites unit u6 at or after the signal (turn 5)"),
        (False, "cites unknown unit u42"),
        (False, "text not in the cited units: 'oncall', 'priya'"),
        (False, "about the memory system itself"),
    ]
    assert [p.source_unit_ids for p in inv.accepted] == [("u3",)]
    assert all(p.origin is Origin.REPAIR for p in inv.proposals)
    assert inv.calls_used == 1 and max(returned_turns(inv)) < 5


def test_a_client_that_cannot_investigate_proposes_nothing(log: LogStore) -> None:
    class Mute:
        name = "mute"

    inv = InvestigatorService.with_client(Mute()).investigate(SIGNAL, log)  # type: ignore[arg-type]
    assert inv.proposals == [] and "cannot investigate" in inv.stopped and inv.calls_used == 0
