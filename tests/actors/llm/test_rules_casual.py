"""How people actually type (issue 11): names in lower case, Markdown bold in the assistant's replies,
constants assigned with spaces around "=". Each negative has a positive control in the same shape."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief, c.text) for c in CLIENT.extract([unit], SCOPE)]


def test_a_name_typed_in_lower_case_takes_over_a_thing() -> None:
    got = found("heads up, oksana takes over the invoice exports, she knows the tax side")
    assert ("invoice exports owner", "oksana", "Oksana owns the invoice exports.") in got, got


def test_a_clause_opening_with_a_quantifier_owns_nothing() -> None:
    assert not [k for k, _, _ in found("everyone owns the runbook, edit it freely") if k.endswith("owner")]
    # The control: a person in the same place.
    assert [k for k, _, _ in found("ines owns the runbook, edit it freely") if k.endswith("owner")]


def test_bold_is_emphasis_not_part_of_the_value() -> None:
    got = found("", "Done - the **build image** is now **ci-base:7** (`.ci/Dockerfile`).")
    assert ("build image", "ci-base:7") in [(k, b) for k, b, _ in got], got
    assert all("**" not in t for _, _, t in got), got


def test_a_constant_assigned_with_spaces_is_read_like_one_without() -> None:
    spaced = found("", "Set `POLL_SECONDS = 45` in the worker settings.")
    tight = found("", "Set `POLL_SECONDS=45` in the worker settings.")
    assert [b for _, b, _ in spaced] == [b for _, b, _ in tight] == ["45"], (spaced, tight)


def test_a_comment_after_a_new_value_is_not_part_of_it() -> None:
    got = found("move the invoice run to 05:15, finance asked for it")
    assert ("invoice run", "05:15") in [(k, b) for k, b, _ in got], got


def test_make_or_keep_a_named_setting_a_number() -> None:
    assert ("upload timeout", "90 s") in [(k, b) for k, b, _ in found("make the upload timeout 90 s")]
    assert ("retry budget", "4") in [(k, b) for k, b, _ in found("keep the retry budget at 4")]
    # The control: "make X <adjective>" names no value.
    assert not found("make the header sticky")


def test_a_measure_said_as_set_is_a_setting_and_a_bare_one_an_observation() -> None:
    assert [b for _, b, _ in found("the attachment cap is now 15MB")] == ["15mb"]
    assert [b for _, b, _ in found("the attachment cap must be 15MB")] == ["15mb"]
    # The control: the same shape without "now" or a requirement reports a measurement.
    assert not found("the dashboard is 900ms")


def test_a_limit_said_without_a_verb() -> None:
    assert ("max tickets per order", "8") in [(k, b) for k, b, _ in found("max 8 tickets per order, fraud team insists")]
    assert ("min approvals per merge", "2") in [(k, b) for k, b, _ in found("at least 2 approvals per merge")]


def test_how_long_things_are_kept_and_a_temporary_keep() -> None:
    assert ("audit events retention", "180 days") in [(k, b) for k, b, _ in found("we keep audit events for 180 days")]
    # The control: kept only while something else happens is temporary.
    assert not found("we keep the v1 endpoints for 3 weeks while clients migrate")


def test_a_value_put_to_a_use() -> None:
    assert ("queue number", "6390") in [(k, b) for k, b, _ in found("use 6390 for the queue from now on")]
    # The control: a pronoun names no value.
    assert not found("use it for the queue")


def test_a_code_expression_is_never_cut_into_a_value() -> None:
    got = found("", "`POLL_EVERY` is now `timedelta(minutes=5)`. That keeps the radio duty cycle low.")
    assert not [b for _, b, _ in got if b.startswith("duration")], got
    # The control: a plain value in the same place is read.
    assert ("poll every env var", "300") in [(k, b) for k, b, _ in found("", "`POLL_EVERY` is now `300`.")]


def test_a_value_that_stays_is_stated() -> None:
    got = found("", "No change, `FLUSH_EVERY` stays at 20 minutes.")
    assert ("flush every env var", "20") in [(k, b) for k, b, _ in got], got


def test_a_decision_announced_before_it_holds_in_the_future_tense() -> None:
    for said in ("we decided: the export window will be 40 minutes", "decision from the call: export window is 40 minutes",
                 "we agreed that the export window will be 40 minutes"):
        assert ("export window", "40 minutes") in [(k, b) for k, b, _ in found(said)], said
    # The control: the future tense alone is a plan, not a setting.
    assert not found("the export window will be 40 minutes")


def test_a_place_named_by_its_container() -> None:
    assert ("invoices location", "acme-invoices-eu") in [(k, b) for k, b, _ in found("invoices live in bucket acme-invoices-eu")]
    assert ("exports location", "nightly-dumps") in [(k, b) for k, b, _ in found("exports go in the nightly-dumps bucket")]
    assert ("thumbnails location", "/srv/media/thumbs") in [(k, b) for k, b, _ in found("thumbnails in /srv/media/thumbs")]
    # The control: a pronoun is in no container.
    assert not found("it is in the repo")


def test_owners_listed_after_a_lead_in_and_a_comma_are_each_read() -> None:
    got = found("Reviewers, for the record: maria maintains the importer; kenji owns the release scripts.")
    assert ("release scripts owner", "kenji") in {(k, b) for k, b, _ in got}, got
    spliced = found("maria owns the importer, kenji owns the release scripts")
    assert {("importer owner", "maria"), ("release scripts owner", "kenji")} <= {(k, b) for k, b, _ in spliced}, spliced
    # A relative clause after a comma is no new clause.
    assert not [b for k, b, _ in found("ask the infra team, who owns the cluster") if k.endswith("owner")]


def test_a_thing_said_to_be_someones_area_is_theirs() -> None:
    assert ("export service owner", "kofi", "Kofi owns the export service.") in found(
        "the export service is kofi's responsibility now")
    assert ("exporter owner", "@dkim", "@dkim owns the exporter.") in found("the exporter is @dkim's responsibility")
    # Negatives: nobody in particular, or a pronoun for the thing; the controls are above.
    assert not [k for k, _, _ in found("the api is everyone's area") if k.endswith("owner")]
    assert not [k for k, _, _ in found("it is ana's turf") if k.endswith("owner")]
    assert not [k for k, _, _ in found("memory safety is Rust's domain") if k.endswith("owner")]  # a language


def test_code_generation_is_a_task_with_its_own_command() -> None:
    assert ("codegen command", "make gen", "To generate code, run `make gen`.") in found(
        "to regenerate the client code run `make gen`")
    assert ("codegen command", "pnpm run gen:client") in [(k, b) for k, b, _ in found(
        "the api client comes out of codegen: `pnpm run gen:client`")]
    # The control: a build is still a build.
    assert ("build command", "make dist") in [(k, b) for k, b, _ in found("to build the bundle run `make dist`")]


def test_a_version_asked_for_with_please_is_the_projects_version() -> None:
    assert ("ruby version", "3.3") in [(k, b) for k, b, _ in found("ruby 3.3 only please, the gems need it")]
    assert not found("the changelog mentions Python 3.12")  # the control: a version merely mentioned


def test_where_messages_of_a_kind_are_sent_is_their_channel() -> None:
    assert ("deploy alerts channel", "#ops-pager", "Deploy alerts go to #ops-pager.") in found(
        "deploy alerts go to #ops-pager now.")
    assert ("weekly digest channel", "#general", "Weekly digest goes to #general.") in found(
        "we send the weekly digest to #general")
    assert ("invoices channel", "billing@acme.io") in [(k, b) for k, b, _ in found("invoices go to billing@acme.io")]
    # Negatives: a pronoun for the messages, or a destination said to be temporary.
    assert not [k for k, _, _ in found("it goes to #random") if k.endswith("channel")]
    assert not [k for k, _, _ in found("the alerts go to #ops for now but we will see") if k.endswith("channel")]


def test_a_command_said_to_be_the_replaced_one_is_not_the_command() -> None:
    assert not [b for k, b, _ in found("", "The image now runs `uv sync --frozen` instead of `pip install -r req.txt`.")
                if k == "install command"]
    assert ("ci command", "just test") in [(k, b) for k, b, _ in found("", "CI runs `just test` (was `make test`)")]


def test_a_value_shaped_like_an_identifier_ends_at_a_comma_and_yeah_is_a_filler() -> None:
    got = [(k, b) for k, b, _ in found("yeah the report tz is America/Denver, every store we have is out west")]
    assert ("report tz", "america/denver") in got, got


def test_a_value_said_to_stay_is_held() -> None:
    assert ("queue name", "jobs_main") in [(k, b) for k, b, _ in found("Queue name stays `jobs_main`.")]
    assert ("pool size", "12") in [(k, b) for k, b, _ in found("the pool size remains at 12.")]
    assert not found("the db stays slow")  # the control: a state, not a value


def test_a_cap_set_by_its_verb_is_a_limit() -> None:
    assert ("attachments limit", "10 mb", "Attachments are capped at 10 MB.") in found("cap attachments at 10 MB each")
    assert ("exports limit", "500 rows") in [(k, b) for k, b, _ in found("limit exports to 500 rows")]
    assert not found("cap it at 5")  # a pronoun caps nothing we can name


def test_a_short_lead_in_does_not_hide_a_retention_or_a_limit() -> None:
    assert ("audit rows retention", "90 days") in [(k, b) for k, b, _ in found("data rule: we keep audit rows for 90 days")]
    assert ("attachments limit", "10 mb") in [(k, b) for k, b, _ in found("one more thing: cap attachments at 10 MB")]


@pytest.mark.parametrize("said", [
    "todo: bump the runtime to node 22",
    "plan for the weekend: move the broker to rabbitmq",
    "tomorrow: raise the worker count to 12",
    "notes for tomorrow: 1) bump the runtime to node 22 2) rotate the webhook secret",
    "bump the runtime to node 22 tomorrow",
    "stuff still to do: 1) bump the runtime to node 22 2) move the broker to rabbitmq",
    "someday we should move the broker to rabbitmq",
    "my coworker always runs the suite with --fail-fast, drives me nuts",
])
def test_what_a_plan_or_tomorrow_heads_is_not_done(said: str) -> None:
    assert found(said) == [], found(said)


def test_a_change_without_a_plan_head_is_read() -> None:
    # positive controls for the plan heads above
    assert any(b == "22" for _, b, _ in found("heads up: the runtime is node 22 now"))
    assert any(b == "22" for _, b, _ in found("bump the runtime to node 22"))


def test_just_after_a_copula_is_the_adverb_unless_arguments_follow() -> None:
    assert found("the nightly build is just slow on the shared runner, nothing is broken") == []
    assert any(b == "just dist-all" for _, b, _ in found("the nightly build is just dist-all"))  # positive control


@pytest.mark.parametrize(("said", "key", "tool"), [
    ("don't commit a package-lock again, we're pnpm", "package manager", "pnpm"),
    ("we are a maven shop, keep it that way", "build tool", "maven"),
])
def test_a_team_saying_it_is_a_tools_users_chose_it(said: str, key: str, tool: str) -> None:
    assert (key, tool) in [(k, b) for k, b, _ in found(said)], found(said)


def test_we_are_with_no_tools_name_chooses_nothing() -> None:
    assert found("we are done with the ticket, ship it") == []
    assert not [k for k, _, _ in found("if we were maven people it would be simpler") if k == "build tool"]


@pytest.mark.parametrize("said", [
    "Ilse keeps getting connection refused running make verify locally",
    "`just release` fails on the arm runner with a linker error",
])
def test_a_command_reported_going_wrong_is_no_procedure(said: str) -> None:
    assert not [k for k, _, _ in found(said) if k.endswith("command")], found(said)


def test_a_command_said_plainly_is_a_procedure() -> None:
    # positive control for the reports above
    assert [k for k, _, _ in found("to verify locally, run `make verify`") if k.endswith("command")]


def test_a_word_of_going_wrong_inside_a_command_reports_nothing() -> None:
    assert [k for k, _, _ in found("CI runs `cargo build --errors-as-failures` before the tests") if k.endswith("command")]


@pytest.mark.parametrize(("said", "key", "tool"), [
    ("fwiw we're pnpm not yarn", "package manager", "pnpm"),
    ("we are a maven shop, dont suggest gradle", "build tool", "maven"),
])
def test_a_team_saying_it_is_a_tools_users_may_say_more_after_it(said: str, key: str, tool: str) -> None:
    assert (key, tool) in [(k, b) for k, b, _ in found(said)], found(said)


@pytest.mark.parametrize("said", [
    "can you put a line in the runbook that the worker listens on 7301?",
    "please document that the worker listens on 7301",
    "can u put a line in the runbook saying the worker listens on 7301",
])
def test_a_request_to_write_a_statement_down_states_it(said: str) -> None:
    assert ("worker port", "7301") in [(k, b) for k, b, _ in found(said)]


@pytest.mark.parametrize("said", [
    "could you check that the worker listens on 7301?",  # asks to verify: the speaker does not know
    "could you add a TODO that the worker should listen on 7301?",  # a plan written down
    "can you add a comment that this is a hack?",  # nothing about the project's settings
])
def test_a_request_to_check_or_to_plan_states_nothing(said: str) -> None:
    assert not [k for k, b, _ in found(said) if b == "7301" or k]


@pytest.mark.parametrize(("said", "key", "version"), [("Node: 22.4", "node version", "22.4"),
                                                       ("python: 3.13.1", "python version", "3.13.1")])
def test_a_runtime_and_its_version_typed_as_a_label_is_its_version(said: str, key: str, version: str) -> None:
    assert (key, version) in [(k, b) for k, b, _ in found(said)]


@pytest.mark.parametrize("said", ["Build: 2.3.1", "Step 2.1", "3.13.1"])
def test_a_label_that_names_no_runtime_is_no_version_of_one(said: str) -> None:
    assert [k for k, _, _ in found(said) if k.endswith("version")] == []
