"""A named thing chosen for a role (``rules_choices.extract_role``): keyed by the role, whatever the thing is.

The things named here are made up, so that no list of known tools reads them.
"""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Unit

CLIENT = RulesClient()


def found(user: str) -> list[tuple[str, str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant="", request_id="r1")
    return [(c.key, c.belief, c.text) for c in CLIENT.extract([unit], "project:p")]


@pytest.mark.parametrize("said", [
    "we picked Quill-7 as the planner",
    "We're going with Quill-7 for the planner.",
    "for the planner we went with Quill-7",
    "Quill-7 is our planner.",
    "we use quill-7 as the planner now",
])
def test_a_thing_chosen_for_a_role_is_keyed_by_the_role(said: str) -> None:
    got = found(said)
    assert [(k, b) for k, b, _ in got] == [("planner", "quill-7")], got


def test_a_later_choice_for_the_role_lands_on_the_same_key() -> None:
    first, later = found("we use the Vela-3 board for the relay"), found("the relay board is Vela-4 now")
    assert first and later and first[0][0] == later[0][0] == "relay board", (first, later)
    assert first[0][2] == "We use the Vela-3 board for the relay."  # the clause as said: nothing is rewritten
    # a role said before the choice and again after the thing: the one after the thing is the role
    assert found("For the rollout we picked Vela-3 as the gate.")[0][0] == "gate"


@pytest.mark.parametrize("said", [
    "we have time for the demo",
    "we have Monday for the release",
    "we have Bob for the backend",
    "we use this for now",
    "we use Quill-7 as needed",
    "as discussed, we went with Quill-7",
    "for starters we use Quill-7",
    "we use 3 workers for the import",
    "we could use Quill-7 as the planner",
    "should we use Quill-7 as the planner?",
    "we used to use Quill-7 as the planner",
    "PR-42 is the culprit",
])
def test_no_role_is_read_from_an_idiom_a_number_a_proposal_or_the_past(said: str) -> None:
    assert found(said) == []


def test_a_role_ends_before_a_word_of_time_and_its_words_are_singular() -> None:
    assert [k for k, _, _ in found("we picked Quill-7 as the planner initially")] == ["planner"]
    assert [k for k, _, _ in found("we use Vela-3 boards for the relays")] == ["relays board"]  # the kind made singular


def test_a_role_that_sounds_like_a_category_keeps_its_own_words() -> None:
    """"we use mocks for the tests": mocks are no test framework; the key stays the role as said, so that it never
    replaces the framework the project chose."""
    assert [k for k, _, _ in found("we use mocks for the tests")] == ["tests"]
    assert [k for k, _, _ in found("we use pgcat for the db")] == ["db"]


def test_a_known_tool_keeps_its_category_key() -> None:
    # control: a tool the choice reading knows is keyed by its kind, so "for caching" and "as the cache" agree
    assert [k for k, _, _ in found("we use Redis for caching")] == ["cache"]


def test_a_noun_ending_in_us_is_no_plural() -> None:
    assert [(k, t) for k, _, t in found("we use Kafka for the event bus")] == [("bus storage", "Event bus is stored in Kafka.")]
    assert [t for _, _, t in found("audit events go into Kafka")] == ["Audit events are stored in Kafka."]


def test_a_new_value_of_an_identifier_is_read() -> None:
    # an identifier that starts with a digit is no measurement; "new" says which value, it names no other setting
    assert [(k, b) for k, b, _ in found("the new build id is 7RT4K2QX")] == [("build id", "7rt4k2qx")]


def test_what_a_thing_is_called_in_passing_is_its_name() -> None:
    got = found("we also have a soak-test rig called rig-7b in the lab")
    assert [(k, b) for k, b, _ in got] == [("soak test rig", "rig-7b")], got
    assert got[0][2] == "The soak-test rig is called rig-7b."
    # a verb "called" with no name after it, a proposal, and a name with more after it
    assert found("the hook is called from the scheduler") == []
    assert found("we should make a bucket called scans-eu") == []
    assert found("a contractor called Piet set it up") == []
    # the verb "called", and a thing said not to be wanted or to be gone
    assert found("the handler called flush_queue, which then hung") == []
    assert found("I removed a branch called old-nav") == []
    assert found("we don't need a service called relay-3") == []
