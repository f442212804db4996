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
    # the kind of the thing said before the choice: "for boards ... for the relay" is the relay board
    assert found("For boards we have the Vela-3 for the relay.")[0][0] == "relay board"


@pytest.mark.parametrize("said", [
    "we have time for the demo",
    "we use this for now",
    "we use 3 workers for the import",
    "we could use Quill-7 as the planner",
    "should we use Quill-7 as the planner?",
    "we used to use Quill-7 as the planner",
])
def test_no_role_is_read_from_an_idiom_a_number_a_proposal_or_the_past(said: str) -> None:
    assert all(k != "planner" and k != "demo" and k != "import" for k, _, _ in found(said)), found(said)


def test_a_known_tool_keeps_its_category_key() -> None:
    # control: a tool the choice reading knows is keyed by its kind, so "for caching" and "as the cache" agree
    assert [k for k, _, _ in found("we use Redis for caching")] == ["cache"]


def test_a_noun_ending_in_us_is_no_plural() -> None:
    got = found("we use Kafka for the event bus")
    assert got and got[0][0] != "bu storage" and " is " in got[0][2], got


def test_a_new_value_of_an_identifier_is_read() -> None:
    # an identifier that starts with a digit is no measurement; "new" says which value, it names no other setting
    assert [(k, b) for k, b, _ in found("the new build id is 7RT4K2QX")] == [("build id", "7rt4k2qx")]
