"""Decisions said in one breath with something else (issue 11): a decision announced after a long
lead-in, a comma splice after it, a future copula, a status word before the setting. Wording is our
own; each negative has a positive control in the same shape."""

from __future__ import annotations

from actors.llm.rules import RulesClient
from actors.llm.rules_text import clauses
from engine.models import Kind, Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str, Kind]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief, c.kind) for c in CLIENT.extract([unit], SCOPE)]


def test_a_decision_after_a_long_lead_in_and_an_evaluation_is_read() -> None:
    got = found("Ops and product met this morning and we agreed: the retry cap will be 5, three dropped too many jobs.")
    assert ("retry cap", "5", Kind.DECISION) in got, got
    # A decision lead-in covers a clause after a comma splice too.
    spliced = found("we agreed: three dropped too many jobs, the retry cap will be 5.")
    assert ("retry cap", "5", Kind.DECISION) in spliced, spliced


def test_a_future_copula_without_a_decision_states_nothing() -> None:
    assert found("the poll interval will be 2 minutes.") == []
    # The control: announced as decided, the same clause holds.
    assert ("poll interval", "2 minutes", Kind.DECISION) in found("we decided: the poll interval will be 2 minutes.")


def test_a_comma_splice_with_a_future_copula_is_two_clauses() -> None:
    assert clauses("the old pool was too small, the worker pool will be 12") == [
        "the old pool was too small", "the worker pool will be 12"]
    # A fronted phrase still scopes what follows; a lead-in with a colon is no fronted phrase.
    assert clauses("for the cache, port is 6380") == ["for the cache, port is 6380"]
    assert clauses("in the call we agreed: the old relay is slow, the relay is on 7312") == [
        "in the call we agreed: the old relay is slow", "the relay is on 7312"]


def test_a_status_word_names_no_other_setting() -> None:
    assert ("upload cap", "40 mb") in [(k, b) for k, b, _ in found("the current upload cap is 40 MB.")]
    assert ("upload cap", "40 mb") in [(k, b) for k, b, _ in found("the upload cap is 40 MB.")]  # the control


def test_a_modal_is_no_part_of_a_hosts_subject() -> None:
    # A future "will live on" is not read yet (a miss); it must not become a "cache will" host either.
    assert not [k for k, _, _ in found("we decided the cache will live on cache-2.internal.") if "will" in k]
    assert ("cache host", "cache-2.internal") in [(k, b) for k, b, _ in found("the cache lives on cache-2.internal.")]
