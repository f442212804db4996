"""Decisions said in one breath with something else (issue 11): a decision announced after a long
lead-in, a comma splice after it, a future copula, a status word before the setting. Wording is our
own; each negative has a positive control in the same shape."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from actors.llm.rules_text import clauses
from engine.models import Kind, Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str, Kind]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.belief, c.kind) for c in CLIENT.extract([unit], SCOPE)]


def asserted(user: str) -> set[str]:
    """The values a user's turn states as holding (a value it says is gone is not among them)."""
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant="", request_id="r1")
    return {c.belief for c in CLIENT.extract([unit], SCOPE) if not c.negated}


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


def test_a_choice_of_a_name_no_vocabulary_knows_is_keyed_by_what_it_is_chosen_as() -> None:
    got = found("we went with Quillon-7 as the tokenizer, the old one choked on emoji.")
    assert ("tokenizer", "quillon-7", Kind.DECISION) in got, got
    # a lead-in that names the subject of the decision keys it when the clause does not
    led = found("tokenizer decision: we're going with Quillon-7.")
    assert ("tokenizer", "quillon-7", Kind.DECISION) in led, led
    # a proposal, a refusal, or a choice that says neither what it is for nor under which lead-in: nothing
    assert not any(b == "quillon-7" for _, b, _ in found("we should go with Quillon-7 as the tokenizer."))
    assert not any(b == "quillon-7" for _, b, _ in found("we're not going with Quillon-7 as the tokenizer."))
    assert not any(b == "quillon-7" for _, b, _ in found("we went with Quillon-7, it was fine."))


def test_a_part_using_a_named_thing_is_read_and_keyed_only_with_its_purpose() -> None:
    got = found("", "The importer uses `csv_stream` for large uploads.")
    assert ("importer large uploads", "csv_stream", Kind.FACT) in got, got
    bare = found("the dashboard uses Chartwell2.")
    assert ("", "chartwell2", Kind.FACT) in bare, bare  # no purpose: no key, so a second thing used replaces nothing
    # what code is made of, in a reply, is no part of the project; nor a plain word after "uses"
    assert found("", "The handler uses `ctx_done` to stop.") == []
    assert not any(b == "it" for _, b, _ in found("the dashboard uses it."))


def test_a_lead_in_before_a_clause_with_its_own_subject_is_no_part_of_its_key() -> None:
    got = found("some background that is not written down anywhere: the gateways are Teltonika RUT241.")
    assert ("gateways", "teltonika rut241", Kind.FACT) in got, got


def test_a_change_in_arrow_shorthand_is_read_with_its_new_value() -> None:
    got = found("fyi broker port 1883 -> 8883, reconnect your clients")
    assert any(b == "8883" for _, b, _ in got), got
    assert "1883" not in asserted("fyi broker port 1883 -> 8883, reconnect your clients")
    bumped = found("bumped deno 1.44 → 1.46 this morning")
    assert ("deno version", "1.46", Kind.DECISION) in bumped, bumped
    word = found("cache backend memcached -> dragonfly, less ops work")
    assert ("cache backend", "dragonfly", Kind.DECISION) in word and "memcached" not in asserted(
        "cache backend memcached -> dragonfly, less ops work"), word
    # a sequence of steps, an arrow inside code or with no value after it, is no change
    assert found("release flow: tag → build → sign → upload") == []
    assert not any(b in {"no", "b"} for _, b, _ in found("the queue size is 40 -> no wait, the a->b call is wrong"))


def test_the_items_of_an_inline_list_are_clauses_of_their_own() -> None:
    assert clauses("two changes: 1) the relay port is 7400 2) the cron runs hourly") == [
        "two changes:", "the relay port is 7400", "the cron runs hourly"]
    assert clauses("the relay port is 7400 (see 2) below)") != []  # a marker inside a parenthesis stays where it is


def test_a_version_another_thing_supports_is_not_the_projects_version() -> None:
    got = found("", "Yes, Wagtail 6 supports Django 4.2 and 5.0, and no code change is needed.")
    assert not any(k == "django version" for k, _, _ in got), got
    assert any(k == "django version" and b == "5.0" for k, b, _ in found("we're on django 5.0 now"))  # control


def test_a_thing_of_someone_else_is_no_setting_of_the_project() -> None:
    assert not any(k.startswith("his ") or k.startswith("her ") for k, _, _ in found(
        "Marek pasted his gateway config, his gateway region is AS923 for the Tokyo test."))
    assert any(k == "gateway region" for k, _, _ in found("the gateway region is EU868 for all field units."))  # control


def test_a_chat_abbreviation_is_no_part_of_a_value() -> None:
    assert ("lease time", "45 min", Kind.FACT) in found("the lease time is 45 min btw, the old 30 was too short")
    assert ("lease time", "45 min", Kind.FACT) in found("the lease time is 45 min")  # control


def test_a_runtime_and_its_version_are_no_command() -> None:
    got = found("worker build: deno 1.46 in .tool-versions, same on the build box")
    assert not any(k.endswith("command") for k, _, _ in got), got
    assert ("deno version", "1.46", Kind.FACT) in got, got  # a label, then the versioned name
    # a person's own setup is not the project's
    assert not any(k == "deno version" for k, _, _ in found("don't bump it, Kasia has deno 1.40 on her laptop"))


def test_a_value_named_first_and_then_identified_is_read_the_other_way_round() -> None:
    got = found("ci-9.ops.lan is the nightly build box")
    assert any(b == "ci-9.ops.lan" and k.startswith("nightly build") for k, b, _ in got), got
    pointed = found("add ci-9.ops.lan to your known hosts, that's the nightly build box")
    assert any(b == "ci-9.ops.lan" and k.startswith("nightly build") for k, b, _ in pointed), pointed
    # a judgement is no part of the project, and a plain word is not pointed back to
    assert found("PR-917 is the culprit") == []
    assert not any("nightly" in k for k, _, _ in found("restart it, that's the nightly build box"))


def test_a_possessive_ending_the_clause_says_whose_a_part_is() -> None:
    assert ("ingest worker owner", "tamsin", Kind.FACT) in found("the ingest worker is Tamsin's")
    assert not any(k.endswith("owner") for k, _, _ in found("the outage was Tamsin's fault"))


def test_a_short_arrow_line_under_a_label_is_a_change() -> None:
    got = found("the relay: 7400 -> 7411")
    assert any(b == "7411" for _, b, _ in got) and "7400" not in asserted("the relay: 7400 -> 7411"), got
    assert found("17 23 -> 31") == []  # a paste of numbers names nothing


@pytest.mark.parametrize("said", [
    "deno 1.44 -> 1.46 is planned for the next sprint",  # a plan
    "proposal: broker port 1883 -> 8883",  # a proposal under its lead-in
    "Kasia's laptop: deno 1.44 -> 1.46",  # someone's own setup
    "bumped deno 1.44 -> 1.46 on my machine only",  # scoped to one machine
    "i thought the broker port changed 1883 -> 8883 but not sure",  # a hedge
    "p95 latency 900ms -> 150ms after the index",  # a measurement
    "the build 1.44 -> 1.46 broke the exporter",  # an event
])
def test_an_arrow_that_states_no_change_of_the_project_is_left_alone(said: str) -> None:
    assert not ({"1.46", "8883", "150ms"} & asserted(said)), found(said)


def test_what_the_readings_of_this_round_must_not_invent() -> None:
    # a secret is never read the other way round, nor a judgement or an old thing
    assert found("s3cr3t-Pa55 is the staging password") == []
    assert found("postgres is the bottleneck") == []
    assert not any("legacy" in k for k, _, _ in found("we used to ssh into gw-2.lan, that's the legacy gateway"))
    # a say in a matter is nobody's part of the project; care while someone is away is no ownership
    assert found("the decision is Rosa's") == []
    assert not any(k.endswith("owner") for k, _, _ in found("Ana maintains the runners while Ben is on leave"))
    assert ("runners owner", "ana", Kind.FACT) in found("Ana maintains the runners")  # control
    # another party's thing, and a list of things to do, are not the project's
    assert not any(b == "graph_fed2" for _, b, _ in found("the proposal uses graph_fed2 for the gateway"))
    assert len(clauses("todo: 1) the relay port is 6390 2) the keys are rotated")) == 1  # a list of things to do
    assert len(clauses("done: 1) the relay port is 6390 2) the keys are rotated")) == 3  # control
    # a hedge stays with the statement
    assert any("iirc" in b for _, b, _ in found("the lease time is 45 min iirc")) or \
        not any(b == "45 min" for _, b, _ in found("the lease time is 45 min iirc"))


def test_a_value_named_first_as_the_place_for_something_is_read_the_other_way_round() -> None:
    """"Valkey is the primary store for the rate limits" says what the rate limits' store is, as "the primary store for
    the rate limits is Valkey" does; "src/seeds is the home of the fixtures" says where they live."""
    assert ("primary store for rate limits", "tallystore", Kind.FACT) in \
        found("TallyStore is the primary store for the rate limits")
    assert any(b == "valkey" for _, b, _ in found("Valkey is the primary store for the rate limits"))
    assert any(b == "src/seeds" for _, b, _ in found("src/seeds is the home of the fixtures"))
    # controls: a judgement, a secret and an old thing named first stay unread, with or without what they are for
    assert found("valkey is the bottleneck for the checkout") == []
    assert found("s3cr3t-Pa55 is the password for staging") == []
    assert found("db-3.lan is the old database for the reports") == []


def test_an_address_whose_scheme_names_a_tool_is_the_value_itself() -> None:
    """"exports go to gs://pond-raw" stores the exports at that address: the tool its scheme names ("gs", "s3") is
    no choice of the project's object storage that would lose the bucket."""
    assert found("the nightly exports go to s3://pond-raw.") == \
        [("export storage", "s3://pond-raw", Kind.DECISION)]
    assert found("the bucket for nightly exports is s3://pond-raw") == \
        [("bucket for nightly exports", "s3://pond-raw", Kind.FACT)]
    # control: the tool named on its own is the choice
    assert found("the nightly exports are stored in S3") == [("export storage", "s3", Kind.DECISION)]


def test_a_part_fronted_before_it_is_names_what_the_part_is_on() -> None:
    """"for the api it's uv" is "the api uses uv"; "for the record it's fine" names no part and no tool."""
    assert ("api package manager", "uv") in [(k, b) for k, b, _ in found("for the api it's uv, don't commit other lockfiles")]
    assert found("for the record it's fine") == []


def test_what_a_tool_works_on_named_after_a_part_is_the_parts() -> None:
    """"the api deps use uv" is the api's package manager: the deps are what a package manager works on, no part."""
    assert ("api package manager", "uv") in [(k, b) for k, b, _ in found("the api deps use uv")]
    assert ("api package manager", "uv") in [(k, b) for k, b, _ in found("the api uses uv")]  # control
