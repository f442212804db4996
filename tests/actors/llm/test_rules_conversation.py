"""The rules client's "conversation" profile: a speaker's life, plans and events as memories."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from actors.llm.rules import RulesClient
from engine.models import Candidate, Unit

SCOPE = "project:p"
CLIENT = RulesClient(profile="conversation")
TS = int(datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc).timestamp() * 1000)


def extract(user: str, assistant: str = "") -> list[Candidate]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=TS, user=user, assistant=assistant, request_id="r1")
    return CLIENT.extract([unit], SCOPE)


def texts(user: str) -> list[str]:
    return [c.text for c in extract(user)]


@pytest.mark.parametrize(("said", "expected"), [
    ("Caroline: I went to a support group yesterday.", "Caroline went to a support group the day before 8 May 2023."),
    ("Melanie: My kids love painting together.", "Melanie's kids love painting together."),
    ("Jon: We're moving to Sweden next year.", "Jon and others are moving to Sweden in 2024."),
    ("Caroline: Melanie painted a sunrise last week.", "Melanie painted a sunrise the week before 8 May 2023."),
    ("Gina: I love dancing with my friends.", "Gina loves dancing with Gina's friends."),
    ("Dave: I've been restoring an old car in my garage.", "Dave has been restoring an old car in Dave's garage."),
])
def test_statements_become_self_contained_memories(said: str, expected: str) -> None:
    assert texts(said) == [expected]


def test_each_statement_cites_its_unit_and_has_no_key() -> None:
    found = extract("Caroline: I went to a support group yesterday. It was so powerful and moving for me.")
    assert len(found) == 2
    assert all(c.source_unit_ids == ("u1",) and c.key == "" and c.valid_from_ms == TS for c in found)


@pytest.mark.parametrize("said", [
    "Caroline: How have you been lately, did you go anywhere?",
    "Melanie: Hey Caroline! Good to see you!",
    "Melanie: Wow, that's great!",
    "Caroline: That's so cool, really awesome!",
    "Melanie: Thanks!",
    "Caroline: Don't forget to take breaks and rest when you need to.",
    "Melanie: You captured the sunset perfectly, so peaceful!",
    "Jon: Me too.",
])
def test_questions_greetings_reactions_and_advice_are_skipped(said: str) -> None:
    assert extract(said) == []


def test_a_skipped_reaction_does_not_hide_the_statement_next_to_it() -> None:
    assert texts("Melanie: Wow, that's great! I ran a charity race for mental health yesterday.") == [
        "Melanie ran a charity race for mental health the day before 8 May 2023."]


def test_without_a_speaker_name_the_speaker_is_the_user() -> None:
    assert texts("I adopted a rescue dog from the shelter.") == ["The user adopted a rescue dog from the shelter."]


def test_a_bracketed_note_of_the_speaker_is_a_statement() -> None:
    assert "Caroline shares a photo: a dog on a beach." in texts("Caroline: Look at this! [shares a photo: a dog on a beach]")


def test_vague_times_keep_the_date_of_the_turn() -> None:
    assert texts("Jon: I started a new dance class recently.") == [
        "Jon started a new dance class recently (said on 8 May 2023)."]


def test_a_home_country_is_the_one_keyed_attribute() -> None:
    (found,) = extract("Caroline: I'm originally from Sweden.")
    assert (found.key, found.belief) == ("caroline home country", "sweden")
    assert found.text == "Caroline is originally from Sweden."


def test_the_assistant_side_and_memory_blocks_are_not_read() -> None:
    assert extract("Jon: <dynmem-memory>Jon likes tea.</dynmem-memory>", "I think you love long walks on the beach.") == []


def test_extraction_is_deterministic() -> None:
    said = "Melanie: Yeah, I painted that lake sunrise last year! It's special to me. We're going camping next month."
    assert extract(said) == extract(said)


def test_the_developer_profile_is_unchanged_by_default() -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=TS, user="we use ruff for linting", assistant="", request_id="r1")
    (found,) = RulesClient().extract([unit], SCOPE)
    assert (found.key, found.belief) == ("linter", "ruff")
    assert RulesClient(profile="conversation").extract([unit], SCOPE) == [] or found.key == "linter"


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="extraction profile"):
        RulesClient(profile="poetry")
