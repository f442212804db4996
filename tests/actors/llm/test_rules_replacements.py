"""Replacements said with a verb of replacing, and clauses a sentence takes as given (session 24).

Wording written for these tests; none of it comes from an evaluation history.
"""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Candidate, Unit


def extract(user: str, assistant: str = "OK.", profile: str = "developer") -> list[Candidate]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_767_225_600_000, user=user, assistant=assistant,
                request_id="r1")
    return RulesClient(profile).extract([unit], "project:p")


@pytest.mark.parametrize(("said", "chosen", "given_up"), [
    ("we swapped Mailgun out for Postmark", "postmark", "mailgun"),
    ("I swapped out Jest for Vitest", "vitest", "jest"),
    ("we replaced Karma with Vitest a while ago", "vitest", "karma"),
    ("Grafana Agent got replaced by Alloy", "alloy", "grafana agent"),
    ("Jest was replaced by Vitest", "vitest", "jest"),  # a one-word subject in the passive
    ("Vitest replaced Jest last month", "vitest", "jest"),
    ("we ditched Travis for Buildkite (the queue times were awful)", "buildkite", "travis"),
])
@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_a_replacement_chooses_the_new_thing_and_retires_the_old(said: str, chosen: str, given_up: str,
                                                                 profile: str) -> None:
    found = extract(said, profile=profile)
    kept = [c for c in found if not c.negated]
    assert [c.belief for c in kept] == [chosen]
    assert [c.belief for c in found if c.negated] == [given_up]
    # no memory's text names what was given up: it is no answer to "what do we use for X?"
    assert given_up not in kept[0].text.lower()


def test_a_replacement_with_a_time_after_it_is_no_command() -> None:
    # "Vitest last sprint" was read as the test command: the time closes the clause, it is no value
    found = extract("we replaced Jest with Vitest last sprint")
    assert [(c.key, c.belief, c.negated) for c in found] == [("", "jest", True), ("test framework", "vitest", False)]


def test_a_replacement_of_a_port_is_still_read_as_the_port() -> None:
    # the control: "from X to Y" stays with the readings that know what changed (a port, a version, a host)
    found = extract("We moved the api from 8080 to 9090.")
    assert [(c.key, c.belief) for c in found if not c.negated] == [("api port", "9090")]


@pytest.mark.parametrize("said", [
    "we replaced jest last sprint",  # no new thing
    "It replaced Jest",  # a pronoun names nothing
    "Dana replaced the API tokens",  # a capital subject may be a person
    "we ditched Jest for good",  # for how long, not for what: only the removal
    "let's ditch the cache for now",
    "we trade accuracy for speed",  # no named things
    "swap the order for clarity",
    "swap the config for a new one",
    "we dropped support for Safari 14",  # "drop X for Y" is no replacement verb here
    "can we replace Sentry with GlitchTip?",  # a question states nothing
])
def test_what_is_no_replacement_chooses_nothing(said: str) -> None:
    assert [c for c in extract(said) if not c.negated] == []


@pytest.mark.parametrize(("said", "no_key"), [
    ("we replaced Postgres 14 with Postgres 16", "postgres 14"),  # versions: the version readings' turn
    ("replaced the host db1.internal with db2.internal", "host db1.internal"),  # hosts: the host readings'
])
def test_a_replacement_of_versions_or_hosts_is_not_keyed_by_the_old_value(said: str, no_key: str) -> None:
    assert no_key not in [c.key for c in extract(said)]


@pytest.mark.parametrize(("said", "key", "value"), [
    ("now that the exports bucket is acme-exports-eu, the old links break", "exports bucket", "acme-exports-eu"),
    ("because the staging db is now pg-stg-2, the seeds need a rerun", "staging db", "pg-stg-2"),
    ("since we traded Mailgun for Postmark, bounces arrive on another webhook", "mailgun", "postmark"),
])
def test_a_clause_taken_as_given_is_read_on_its_own(said: str, key: str, value: str) -> None:
    assert (key, value) in [(c.key, c.belief) for c in extract(said)]


@pytest.mark.parametrize("said", [
    "if the image resizer runs on port 7070, the health check fails",  # a condition asserts nothing
    "when we move the docs site to docs.acme.dev, the old links will 404",
])
def test_a_condition_is_not_taken_as_given(said: str) -> None:
    assert extract(said) == []


@pytest.mark.parametrize(("said", "value", "retired"), [
    ("btw the exports bucket is now acme-exports-eu, not acme-exports", "acme-exports-eu", ["acme-exports"]),
    ("the staging db is now pg-stg-2 instead of pg-stg-1", "pg-stg-2", ["pg-stg-1"]),
    ("the log level is now info, not debug", "info", []),  # a plain word is cut from the value but retires nothing
    ("the worker pool size is 8 instead of 4", "8", []),  # and so is a short number: "4" names too much else
])
def test_a_closing_contrast_is_no_part_of_the_value(said: str, value: str, retired: list[str]) -> None:
    found = extract(said)
    kept = [c for c in found if not c.negated]
    assert [c.belief for c in kept] == [value]
    assert [c.belief for c in found if c.negated] == retired
    assert ", not" not in kept[0].text and "instead of" not in kept[0].text


@pytest.mark.parametrize(("said", "key", "value"), [
    ("ok the artifact store got moved to store-3.lan yesterday", "artifact store host", "store-3.lan"),  # "got" is no part of the subject
    ("the search index is now idx-v4 as of last week", "search index", "idx-v4"),  # when it changed is no part of the value
    ("we replaced Karma with Vitest last sprint, so please update the docs", "test framework", "vitest"),
])
def test_when_a_change_happened_is_no_part_of_it(said: str, key: str, value: str) -> None:
    assert [(c.key, c.belief) for c in extract(said) if not c.negated] == [(key, value)]


def test_each_clause_of_a_labelled_line_keeps_its_label() -> None:
    table = ("Summary:\n\n| Area | Current |\n|---|---|\n| CI | Woodpecker; nightly builds run `just nightly` |\n"
             "| Storage | MinIO at minio.lab.local |")
    found = [(c.key, c.belief) for c in extract("write down what runs where", table)]
    assert ("ci name", "woodpecker") in found and ("ci command", "just nightly") in found


def test_a_clause_the_label_leaves_no_statement_is_read_as_said() -> None:
    # "Next steps: the staging db is now X" reads as a plan; the clause alone states the move
    found = extract("what's left?", "- Next steps: rerun seeds; the staging db is now pg-stg-2")
    assert ("staging db", "pg-stg-2") in [(c.key, c.belief) for c in found]


def test_a_middle_dot_separates_the_labelled_parts_of_a_line() -> None:
    # "Repo: X · CI: Y" is two labelled facts: the CI is not the repo's aside
    doc = "```markdown\n# Onboarding\n\nRepo: git.acme.dev/acme/mono · CI: Woodpecker\n\nStaging: https://stg.acme.dev\n```"
    found = [(c.key, c.belief) for c in extract("write the onboarding doc", doc)]
    assert ("ci name", "woodpecker") in found


@pytest.mark.parametrize(("said", "key", "chosen", "given_up"), [
    ("the marketing site sits on Netlify instead of Vercel", "deploy target", "netlify", "vercel"),
    ("the checkout worker sits on Koyeb instead of Heroku", "deploy target", "koyeb", "heroku"),  # a name no list knows
    ("we use Biome instead of ESLint now", "linter", "biome", "eslint"),  # "now" says when, it is no part of a value
])
def test_a_thing_chosen_instead_of_a_known_tool_takes_its_purpose(said: str, key: str, chosen: str, given_up: str) -> None:
    kept = [c for c in extract(said) if not c.negated]
    assert [(c.key, c.belief) for c in kept] == [(key, chosen)]  # the key a later change of that purpose reaches
    assert given_up not in kept[0].text.lower()


@pytest.mark.parametrize("said", [
    "my sister lives in Lyon instead of Paris",  # no tool on either side
    "the demo runs on my laptop instead of the server",
    "we write crash dumps to a file instead of sentry",  # a phrase of function words is no thing chosen
])
def test_instead_of_with_any_verb_needs_a_known_tool(said: str) -> None:
    assert extract(said) == []
    assert extract("the checkout worker sits on Koyeb instead of Heroku") != []  # control


def test_a_deploy_that_passed_is_no_choice_of_deploy_target() -> None:
    """"the deploy is fine now and the heroku dyno can go": the noun "deploy" chooses nothing; the verb does."""
    assert extract("deploy looks fine today the spare heroku dyno can go") == []
    assert [c.belief for c in extract("we deploy the api to Heroku")] == ["heroku"]  # control
    # the label and the verb with the tool as its subject still choose
    assert [c.belief for c in extract("Deploy target: Fly.io")] == ["fly.io"]
    assert [c.belief for c in extract("Kubernetes hosts every service")] == ["kubernetes"]


@pytest.mark.parametrize(("said", "kept"), [
    ("after a week on pnpm we're staying on npm", "npm"),
    ("we tried vitest but are sticking with jest", "jest"),
])
def test_a_choice_kept_is_the_thing_after_the_verb_of_keeping(said: str, kept: str) -> None:
    assert [c.belief for c in extract(said) if not c.negated] == [kept]


@pytest.mark.parametrize("said", ["we're ripping out mocha for vitest", "ripping mocha out for vitest before the release",
                                  "dropping mocha for vitest"])
def test_a_thing_ripped_out_or_dropped_for_another_chooses_the_other(said: str) -> None:
    chosen = [c for c in extract(said) if not c.negated]
    assert [(c.key, c.belief) for c in chosen] == [("test framework", "vitest")], chosen


def test_a_thing_dropped_for_a_while_is_no_replacement() -> None:
    assert not [c for c in extract("drop mocha for now") if not c.negated]
