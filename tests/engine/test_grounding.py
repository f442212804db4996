"""Tests for engine.grounding: a repair proposal must be supported by the units it cites."""

from __future__ import annotations

import pytest

from engine.grounding import check_proposal, distinctive_tokens
from engine.models import Candidate, Kind, Origin, Unit

FACT = (
    "Long day, the build was flaky all morning. oh and the on-call pager rotation lives in the "
    "ops/rotations.yaml file, Ramesh maintains it. The staging host is staging2.example.com and "
    "the API listens on localhost port 9090 with Python 3.12."
)


def unit(n: int, user: str = FACT, assistant: str = "Noted.") -> Unit:
    return Unit(id=f"u{n}", project="p", session="s", turn=n, ts_ms=1000 + n, user=user, assistant=assistant,
                request_id=f"r{n}")


def proposal(text: str, *src: str) -> Candidate:
    return Candidate(text=text, kind=Kind.NOTE, scope="project:p", valid_from_ms=1, source_unit_ids=src,
                     origin=Origin.REPAIR)


CITED = {"u3": unit(3), "u12": unit(12)}
GOOD = "The on-call pager rotation lives in the ops/rotations.yaml file, Ramesh maintains it."


def test_a_sentence_from_the_cited_unit_is_grounded() -> None:
    g = check_proposal(proposal(GOOD, "u3"), CITED, bound_turn=5)
    assert g.ok and g.reason == "grounded in u3"


@pytest.mark.parametrize(
    "text",
    [
        "The pager rotation is kept in ops/rotations.yaml.",  # rephrased, same values
        "The API is at localhost:9090.",  # a value assembled from parts said apart
        "Ramesh maintains the pager rotations.",  # plural/singular
        "We use Python 3.12.",
    ],
)
def test_faithful_rephrasings_are_grounded(text: str) -> None:
    assert check_proposal(proposal(text, "u3"), CITED, bound_turn=5).ok


def test_a_proposal_citing_an_unknown_unit_is_rejected() -> None:
    assert check_proposal(proposal(GOOD, "u3"), CITED, bound_turn=5).ok  # positive control
    g = check_proposal(proposal(GOOD, "u3", "u9"), CITED, bound_turn=5)
    assert not g.ok and g.reason == "cites unknown unit u9"


def test_a_proposal_citing_nothing_is_rejected() -> None:
    g = check_proposal(proposal(GOOD), CITED, bound_turn=5)
    assert not g.ok and g.reason == "cites no unit"


def test_a_proposal_citing_a_unit_at_or_after_the_signal_is_rejected() -> None:
    assert check_proposal(proposal(GOOD, "u12"), CITED, bound_turn=13).ok  # positive control
    g = check_proposal(proposal(GOOD, "u12"), CITED, bound_turn=12)
    assert not g.ok and g.reason == "cites unit u12 at or after the signal (turn 12)"
    assert not check_proposal(proposal(GOOD, "u3", "u12"), CITED, bound_turn=5).ok


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("The staging host is staging3.example.com.", "'staging3'"),
        ("The pager rotation lives in ops/rotation.yaml.", "'ops/rotation.yaml'"),
        ("Priya maintains the pager rotation.", "'priya'"),
        ("We use Python 3.11.", "'3.11'"),
        ("The API listens on port 8080.", "'8080'"),
        ("The pager rotation is kept in a spreadsheet on the shared drive.", "'spreadsheet', 'shared', 'drive'"),
    ],
)
def test_text_not_in_the_cited_units_is_rejected(text: str, missing: str) -> None:
    g = check_proposal(proposal(text, "u3"), CITED, bound_turn=5)
    assert not g.ok and g.reason == f"text not in the cited units: {missing}"


@pytest.mark.parametrize(
    "text",
    [
        "Use memory_search to find the pager rotation.",
        "The pager rotation is in <dynmem-memory> blocks.",
        "dynamics-memory stores the pager rotation.",
        "Call log_window on u3 for the pager rotation.",
    ],
)
def test_a_proposal_about_the_memory_system_is_rejected(text: str) -> None:
    talk = unit(4, user=f"{FACT} {text}")
    g = check_proposal(proposal(text, "u4"), {"u4": talk}, bound_turn=5)
    assert not g.ok and g.reason == "about the memory system itself"
    assert check_proposal(proposal(GOOD, "u4"), {"u4": talk}, bound_turn=5).ok  # positive control


def test_a_proposal_with_nothing_distinctive_is_rejected() -> None:
    g = check_proposal(proposal("It is what it is.", "u3"), CITED, bound_turn=5)
    assert not g.ok and g.reason == "states nothing distinctive"


def test_value_tokens_are_whole_identifiers_numbers_and_names() -> None:
    values, content = distinctive_tokens(GOOD)
    assert values == ["ops/rotations.yaml", "ramesh"]
    assert "pager" in content and "rotation" in content and "ops" not in content


# ---- extracted candidates: no memory states a value its sources do not contain ----------------
from hypothesis import given, strategies as st  # noqa: E402

from engine.grounding import check_candidate, occurs_whole  # noqa: E402


def extracted(text: str, belief: str = "", *src: str, key: str = "") -> Candidate:
    return Candidate(text=text, key=key, belief=belief, kind=Kind.FACT, scope="project:p", valid_from_ms=1,
                     source_unit_ids=src or ("u1",), origin=Origin.EXTRACTOR)


@pytest.mark.parametrize(("value", "source", "found"), [
    ("fly", "the deploy target is fly.io in region ams", False),
    ("fly.io", "the deploy target is fly.io.", True),
    ("808", "port 8080", False),
    ("8080", "the API listens on 8080.", True),
    ("7070", "fetches http://localhost:7070/openapi.json", True),
    ("npm", "we use pnpm", False),
    ("postgres", "Our database is PostgreSQL.", True),
    ("3.1", "Python 3.12", False),
    ("squash", "We squash-merge PRs", True),
    ("staging", "staging-2.example.net", False),
])
def test_a_value_occurs_only_as_a_whole_value(value: str, source: str, found: bool) -> None:
    assert occurs_whole(value, source) is found


def test_an_invented_command_is_not_grounded_but_the_stated_target_is() -> None:
    units = {"u1": unit(1, user="The deploy target for this project is fly.io in region ams.", assistant="OK.")}
    invented = check_candidate(extracted("To deploy, run `fly`.", "fly", key="deploy command"), units)
    assert not invented.ok and "fly" in invented.reason
    stated = check_candidate(extracted("The deploy target is fly.io.", "fly.io", key="deploy target"), units)
    assert stated.ok  # positive control


def test_a_candidate_citing_no_known_unit_is_refused() -> None:
    assert not check_candidate(extracted("The API listens on 8080.", "8080", "u9"), {"u1": unit(1)}).ok
    assert check_candidate(extracted("The API listens on port 9090.", "9090", "u1"), {"u1": unit(1)}).ok


def test_without_a_belief_every_number_and_path_of_the_text_must_be_in_the_source() -> None:
    units = {"u1": unit(1, user="staging got upgraded to 16", assistant="Done.")}
    assert check_candidate(extracted("The staging database runs Postgres 16."), units).ok  # subject from context
    assert not check_candidate(extracted("The staging database runs Postgres 17."), units).ok


_WORDS = st.sampled_from("the api cache runs on lives in uses port host we our staging build".split())
_VALUES = st.one_of(st.integers(1000, 65535).map(str),
                    st.from_regex(r"[a-z]{3,8}\.[a-z]{2,5}\.(?:dev|net|io)", fullmatch=True),
                    st.from_regex(r"(?:src|ops|deploy)/[a-z]{3,8}(?:/[a-z]{2,6})?", fullmatch=True))


@given(before=st.lists(_WORDS, max_size=6), after=st.lists(_WORDS, max_size=6), value=_VALUES, other=_VALUES)
def test_grounding_accepts_exactly_the_values_a_turn_states(before: list[str], after: list[str], value: str,
                                                            other: str) -> None:
    sentence = " ".join([*before, value, *after]) + "."
    units = {"u1": unit(1, user=sentence, assistant="OK.")}
    assert check_candidate(extracted(f"It is {value}.", value), units).ok
    if not occurs_whole(other, sentence):
        assert not check_candidate(extracted(f"It is {other}.", other), units).ok


def test_a_version_written_with_a_v_is_the_version() -> None:
    from engine.grounding import occurs_whole
    assert occurs_whole("5.3.1", "we moved to Hydra-OS v5.3.1.")
    assert not occurs_whole("5.3.1", "build rev5.3.1 failed")  # a name's tail is not a lone "v"
    assert occurs_whole("5.3.1", "tagged app-v5.3.1")
    assert not occurs_whole("4", "uses actions/checkout@v4")  # a single number is no version
