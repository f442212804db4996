"""A clause that names an old value beside the new one must never store the old one as current (session 33).

Three readings stored the value a sentence said was replaced or denied: a command after "from" in
"changed X from `a` to `b`", the left side of an arrow between two spans of code, and a denial read as the
value of a copula ("the queue is no longer X" stored X's denial as the queue). A correction said in two clauses
("X isn't on A any more, it's B") named no subject in its second clause and was lost.

Wording written for these tests; none of it comes from an evaluation history.
"""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from actors.llm.rules_extract import corrected
from engine.models import Candidate, Unit


def extract(user: str, assistant: str = "OK.", profile: str = "developer") -> list[Candidate]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_767_225_600_000, user=user, assistant=assistant,
                request_id="r1")
    return RulesClient(profile).extract([unit], "project:p")


def current(user: str, assistant: str = "OK.", profile: str = "developer") -> list[tuple[str, str]]:
    return [(c.key, c.belief) for c in extract(user, assistant, profile) if not c.negated]


@pytest.mark.parametrize(("said", "key", "new"), [
    ("switched the smoke tests from `make smoke` to `just smoke-all`", "smoke test command", "just smoke-all"),
    ("we changed the lint command from `eslint .` to `biome check`", "lint command", "biome check"),
])
@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_a_command_after_from_is_the_one_replaced(said: str, key: str, new: str, profile: str) -> None:
    found = current(said, profile=profile)
    assert all(not b.startswith(("make smoke", "eslint", "sphinx")) for _, b in found)
    assert (key, new) in found


def test_a_command_after_from_a_folder_is_still_read() -> None:
    """Control: "from" before a place, after the command, leaves the command current."""
    assert ("test command", "pytest -q") in current("run `pytest -q` from `services/api/`")


def test_a_command_after_from_with_no_other_command_is_the_command() -> None:
    """"run the tests from `x`": with no "to `y`" after it, the span after "from" is where they are run from."""
    assert current("run the lint checks from `nox -s lint`") == [("lint command", "nox -s lint")]


@pytest.mark.parametrize(("said", "key", "new"), [
    ("the smoke tests: `make smoke` -> `just smoke-all`", "smoke test command", "just smoke-all"),
    ("lint command `eslint .` → `biome check`", "lint command", "biome check"),
])
def test_an_arrow_between_two_spans_of_code_keeps_the_right_side(said: str, key: str, new: str) -> None:
    found = current(said)
    assert found == [(key, new)]


def test_a_chain_of_arrows_between_code_is_no_change() -> None:
    """Three steps of a pipeline are a sequence, not one value replacing another: nothing after an arrow is read."""
    found = current("the release flow: `cargo build` -> `cargo test` -> `cargo publish`")
    assert not [b for _, b in found if b in ("cargo test", "cargo publish")]


@pytest.mark.parametrize("said", ["release stages: `cargo build --release` -> `cargo publish --dry-run`",
                                  "renamed `load_cfg` -> `read_config`"])
def test_an_arrow_between_steps_or_names_is_no_replaced_command(said: str) -> None:
    """Two steps of an order, or a rename of a function, are no command replacing another."""
    assert not [b for _, b in current(said) if b in ("cargo publish --dry-run", "read_config")]


@pytest.mark.parametrize(("said", "key", "new", "old"), [
    ("heads up, the metrics exporter isn't on 9187 anymore, it's 9394", "port", "9394", "9187"),
    ("the artifact bucket is no longer s3://old-artifacts; it is s3://build-artifacts now", "", "s3://build-artifacts",
     "s3://old-artifacts"),
    ("the sync worker doesn't listen on 7130 any more, it's 7140 now", "port", "7140", "7130"),
])
def test_a_correction_in_two_clauses_states_the_new_value(said: str, key: str, new: str, old: str) -> None:
    found = current(said)
    assert new in [b for _, b in found]
    assert old not in [b for _, b in found]
    if key:  # the value of the setting the first clause names
        assert [k for k, b in found if b == new and k.endswith(key)]


def test_the_correction_is_written_as_one_statement_of_what_holds() -> None:
    assert corrected(["the queue isn't on nats-1 anymore, it's nats-2.internal"]) == \
        ["the queue is now on nats-2.internal instead of nats-1"]
    assert corrected(["the worker doesn't listen on 7130 any more", "it's 7140 now"]) == \
        ["the worker now listens on 7140 instead of 7130"]
    assert corrected(["builds no longer run on Drone, it's Woodpecker"]) == \
        ["builds now run on Woodpecker instead of Drone"]


@pytest.mark.parametrize("said", [
    "the cache isn't on 6379 anymore, it's 6379",  # the same value: nothing changed
    "that page isn't on 8080 anymore, it's big",  # no value's form after "it's"
    "the slowness isn't Postgres, it's Redis",  # a diagnosis: nothing says Postgres held before
    "the login page isn't broken any more, it's Cloudflare",  # the old side is no value
])
def test_what_is_no_correction_is_left_as_said(said: str) -> None:
    assert corrected([said]) == [said]
    assert corrected(["the cache isn't on 6379 anymore, it's 6380"]) != ["the cache isn't on 6379 anymore, it's 6380"]


def test_a_denied_value_is_never_stored_as_the_value() -> None:
    found = extract("the image registry is no longer registry.old-corp.net")
    assert not [c for c in found if not c.negated]
    assert [c.belief for c in found if c.negated] == ["registry.old-corp.net"]  # a distinctive value: retired


def test_a_plain_name_denied_of_one_thing_retires_nothing() -> None:
    """"the staging db is no longer MySQL" says nothing of the production db's MySQL: a plain name is not retired."""
    found = extract("the staging db is no longer MySQL")
    assert not [c for c in found if not c.negated and "longer" in c.belief]
    assert not [c for c in found if c.negated]


def test_not_before_a_branch_name_is_no_branch() -> None:
    assert not [b for k, b in current("the release branch is not develop") if k.endswith("branch")]
    assert ("release branch", "stable") in current("the release branch is stable")  # control


def test_a_rule_that_opens_with_never_is_still_a_rule() -> None:
    """Control: the guard reads a denial of a value, not a convention worded as a prohibition."""
    assert [c.key for c in extract("never use print statements, use the logger")] == ["logging"]


@pytest.mark.parametrize(("said", "key", "value"), [
    ("we switched the job queue back to RabbitMQ", "job message queue", "rabbitmq"),
    ("we moved user sessions back to Redis", "session storage", "redis"),
])
def test_back_is_a_particle_of_the_verb_never_part_of_the_subject(said: str, key: str, value: str) -> None:
    """"moved X back to Y" keys what "moved X to Y" keys: a key with "back" in it is one no later change reaches."""
    assert current(said) == [(key, value)]
    assert current(said.replace(" back", "")) == [(key, value)]  # control: the same reading without the particle


def test_it_after_a_question_that_ends_on_a_thing_is_that_thing() -> None:
    """"it" names what the question before ends on: a port said of "it" after a question about the status page is the
    status page's, never the project's main service."""
    found = current("could you write a runbook entry for the status page? it binds to 18450 in every environment")
    assert found == [("status page port", "18450")]
    assert ("api port", "18450") in current("it binds to 18450 in every environment")  # control: no thing before it


def test_it_after_a_statement_stays_it() -> None:
    """After a statement the last noun is often its object: "it" is not read as that noun."""
    assert ("cache port", "4100") not in current("The gateway depends on the cache. It serves on 4100.")


def test_it_after_a_sentence_that_ends_on_no_thing_stays_it() -> None:
    """Nothing named at the end of the sentence before: "it" is read as without it (the project's main service)."""
    assert current("I restarted everything twice. it binds to 18450 now") == [("api port", "18450")]


@pytest.mark.parametrize("said", ["the payments API is up on :7410", "the metrics exporter is on :9464"])
def test_a_port_written_after_a_colon_alone_is_the_port(said: str) -> None:
    """":7410" is how a port is written without its host: read as the port, never as a value "up on :7410"."""
    found = current(said)
    assert [b for _, b in found] == [said.rsplit(":", 1)[1]]
    assert not [b for _, b in found if "on :" in b]
    assert found[0][0].endswith("port")


@pytest.mark.parametrize("said", ["the sync with the API runs at 10:30 every day",
                                  "the backup job of the API runs at :30 past every hour"])
def test_a_colon_inside_a_time_is_no_port(said: str) -> None:
    assert not [k for k, b in current(said) if k.endswith("port")]


@pytest.mark.parametrize(("said", "where", "key", "value"), [
    ("Elixir is 1.17", " on every box", "elixir version", "1.17"),
    ("the protobuf compiler is 27.3", " across all the runners", "protobuf compiler version", "27.3"),
])
def test_that_a_version_holds_everywhere_is_no_part_of_it(said: str, where: str, key: str, value: str) -> None:
    """A version keeps the version key when the sentence says it holds everywhere, so that a later version replaces it."""
    assert current(said + where) == [(key, value)]
    assert current(said) == [(key, value)]  # control: the same without the place


def test_a_version_of_one_part_keeps_its_limit() -> None:
    """"3.9 in the legacy worker" is that part's version: never the project's Elixir or Python version."""
    assert ("python version", "3.9") not in current("Python is 3.9 in the legacy worker")


@pytest.mark.parametrize("verb", ["moved", "relocated"])
def test_every_verb_of_moving_a_thing_has_its_passive(verb: str) -> None:
    """"we relocated X to P" was read and "X were relocated to P" was not: the passive of a verb of the active list."""
    assert current(f"the grafana dashboards were {verb} to ops/dashboards") == \
        [("grafana dashboards location", "ops/dashboards")]
    assert current(f"we {verb} the grafana dashboards to ops/dashboards") == \
        [("grafana dashboards location", "ops/dashboards")]  # control: the active form
