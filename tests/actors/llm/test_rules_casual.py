"""How people actually type (issue 11): names in lower case, Markdown bold in the assistant's replies,
constants assigned with spaces around "=". Each negative has a positive control in the same shape."""

from __future__ import annotations

from actors.llm.rules import RulesClient
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief, c.text) for c in CLIENT.extract([unit], SCOPE)]


def test_a_name_typed_in_lower_case_takes_over_a_thing() -> None:
    got = found("heads up, tomasz takes over the invoice exports, he knows the tax side")
    assert ("invoice exports owner", "tomasz", "Tomasz owns the invoice exports.") in got, got


def test_a_clause_opening_with_a_quantifier_owns_nothing() -> None:
    assert not [k for k, _, _ in found("everyone owns the runbook, edit it freely") if k.endswith("owner")]
    # The control: a person in the same place.
    assert [k for k, _, _ in found("ines owns the runbook, edit it freely") if k.endswith("owner")]


def test_bold_is_emphasis_not_part_of_the_value() -> None:
    got = found("", "Upgraded to **Zig 0.13.0** (`build.zig.zon` updated):\n\n```\n.minimum_zig_version = \"0.13.0\",\n```")
    assert any(b == "0.13.0" for _, b, _ in got), got
    assert all("**" not in t for _, _, t in got), got


def test_a_constant_assigned_with_spaces_is_read_like_one_without() -> None:
    spaced = found("", "Set `POLL_SECONDS = 45` in the worker settings.")
    tight = found("", "Set `POLL_SECONDS=45` in the worker settings.")
    assert [b for _, b, _ in spaced] == [b for _, b, _ in tight] == ["45"], (spaced, tight)
