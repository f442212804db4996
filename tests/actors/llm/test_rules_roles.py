"""A role a person holds on the project, said as an identity (``rules_procedures.extract_role``): keyed by
the role, so that a later holder supersedes the earlier one. Each negative has a positive control; the
wording is our own."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str) -> list[tuple[str, str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant="", request_id="r1")
    return [(c.key, c.belief, c.text) for c in CLIENT.extract([unit], SCOPE)]


@pytest.mark.parametrize(
    ("said", "key", "who"),
    [
        ("Nadia is the tech lead", "tech lead person", "nadia"),
        ("fyi Omar is our QA contact for the kiosk app", "qa contact for kiosk app person", "omar"),
        ("the on-call engineer is now Leon Brandt", "on call engineer person", "leon brandt"),
    ],
)
def test_a_person_who_holds_a_role_is_kept_under_the_role(said: str, key: str, who: str) -> None:
    assert [(k, b) for k, b, _ in found(said) if k.endswith("person")] == [(key, who)]


POSITIVE = "Nadia is the tech lead"


@pytest.mark.parametrize(
    "said",
    [
        "Dana is the one who rebased it",  # a pointer, not a role
        "Sam is the best at this stuff",  # an evaluation
        "Lee is the reviewer on this PR",  # a role for the moment
        "Friday is the deadline",  # a day is nobody
        "Postgres is the primary store",  # a tool is nobody
        "She is the tech lead",  # a pronoun names nobody
    ],
)
def test_other_identities_name_no_role(said: str) -> None:
    assert not [k for k, _, _ in found(said) if k.endswith("person")]
    assert found(POSITIVE)  # positive control


def test_a_later_holder_of_the_role_has_the_same_key() -> None:
    (first,) = [k for k, _, _ in found("Nadia is the tech lead")]
    (later,) = [k for k, _, _ in found("the tech lead is now Farid")]
    assert first == later
