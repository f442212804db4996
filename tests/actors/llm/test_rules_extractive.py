"""The rules client's grounded readings and its "extractive" profile (issue 11)."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from actors.llm.rules_extract import (
    _VALUE_SHAPE,
    _durable,
    _subject_key,
    without_asides,
    without_old_values,
    without_retired_parts,
)
from actors.llm.rules_text import split_trailing_requests
from engine.keys import value_kind
from engine.models import Unit


def extract(user: str, assistant: str = "OK.", profile: str = "developer") -> list[tuple[str, str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_767_225_600_000, user=user, assistant=assistant,
                request_id="r1")
    return [(c.text, c.key, c.belief) for c in RulesClient(profile).extract([unit], "project:p")]


def test_a_deploy_target_never_becomes_an_invented_command() -> None:
    found = extract("The deploy target for this project is fly.io in region ams.")
    assert not any("`fly`" in text for text, _, _ in found)
    assert any(belief == "fly.io" for _, _, belief in found)  # positive control: the target is kept


@pytest.mark.parametrize("user", ["ugh marco is complaining: the nightly job failed again",
                                  "the build is failing again", "lol the deploy took 14 minutes today"])
@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_chatter_and_complaints_yield_no_memory(user: str, profile: str) -> None:
    assert extract(user, profile=profile) == []


def test_an_environment_value_is_the_value_not_the_verb() -> None:
    assert extract("LOG_LEVEL is set to debug in staging")[0][2] == "debug"


def test_a_bare_command_stops_before_an_adverbial() -> None:
    assert [b for _, _, b in extract("To deploy, run helm by hand, we don't use argo anymore")][:1] == ["helm"]


def test_a_time_of_day_is_no_port() -> None:
    assert not any(key.endswith("port") for _, key, _ in extract("the nightly backups now run at 04:00"))


def test_the_extractive_profile_keeps_the_speakers_own_clause() -> None:
    said = "backups run every night at 02:30 UTC"
    # a schedule with a clock time is kept in the speaker's words by both profiles (session 6)
    assert extract(said) == [("Backups run every night at 02:30 UTC.", "backups time", "02:30")]
    kept = extract(said, profile="extractive")
    assert kept == [("Backups run every night at 02:30 UTC.", "backups time", "02:30")]
    later = extract("the backups now run at 04:00", profile="extractive")
    assert later[0][1] == "backups time"  # the same subject and kind of value: a later change supersedes


def test_the_extractive_profile_keeps_no_question_report_or_pronoun_subject() -> None:
    for user in ["is the api on 3000?", "I fixed the bug in src/api/users.py", "it runs on 3.12 now i think"]:
        assert extract(user, profile="extractive") == [], user


def test_a_polite_request_the_assistant_carried_out_is_a_fact() -> None:
    done = extract("can you switch the linter over to biome?", "Done: removed eslint, biome now lints and formats.")
    assert ("linter", "biome") in [(k, b) for _, k, b in done]


def test_a_request_of_ours_without_a_question_mark_carried_out_is_a_fact() -> None:
    done = extract("also can we get on ruby 3.4, the runners are still on 3.3", "Done: `.ruby-version` is 3.4 and CI runs 3.4.")
    assert ("ruby version", "3.4") in [(k, b) for _, k, b in done], done
    declined = extract("also can we get on ruby 3.4, the runners are still on 3.3",
                       "I'd hold off on 3.4: two gems we rely on don't build on it yet.")
    assert ("ruby version", "3.4") not in [(k, b) for _, k, b in declined], declined


@pytest.mark.parametrize("reply", ["I'd rather not: biome doesn't support our vue files yet.",
                                   "Should I also drop prettier?", "Looking into it."])
def test_a_request_declined_questioned_or_not_done_is_no_fact(reply: str) -> None:
    assert not any(b == "biome" for _, _, b in extract("can you switch the linter over to biome?", reply))


def test_an_environment_word_keeps_its_own_port_key() -> None:
    staging = extract("could you move the staging db to port 6543?", "Updated: staging Postgres now listens on 6543.")
    assert [(k, b) for _, k, b in staging] == [("staging database port", "6543")]
    plain = extract("the db runs on 5433 now")
    assert [(k, b) for _, k, b in plain] == [("database port", "5433")]  # positive control


@pytest.mark.timeout(120)  # a hang guard, not a speed target: these took minutes with quadratic patterns
@pytest.mark.parametrize("text", ["x" * 200_000, "port " + "x " * 100_000, "`" + "a" * 200_000])
def test_a_turn_at_the_size_limit_is_read_without_hanging(text: str) -> None:
    assert extract(text, text[:50_000], profile="extractive") == []
    assert extract("the api listens on 8080 " + text[:300]) != []  # positive control: a normal clause still reads


def test_an_environment_word_is_said_once() -> None:
    (text, key, _), = extract("staging: the api listens on 7070 there too")
    assert key == "staging api port" and text.lower().count("staging") == 1, text


@pytest.mark.parametrize(("said", "value"), [("the nightly export lands in gs://acme-exports-eu", "gs://acme-exports-eu"),
                                             ("release notes go to #release-train", "#release-train"),
                                             ("the sandbox db got relocated to db-sbx.corp.lan", "db-sbx.corp.lan")])
def test_urls_channels_and_hosts_are_values_by_their_shape(said: str, value: str) -> None:
    assert [m.group(0) for m in _VALUE_SHAPE.finditer(said)] == [value]


def test_the_extractive_profile_keeps_a_durable_clause_with_a_url() -> None:
    kept = extract("the nightly export lands in gs://acme-exports-eu", profile="extractive")
    assert len(kept) == 1 and "gs://acme-exports-eu" in kept[0][0]
    assert extract("what's in #release-train today?", profile="extractive") == []  # a question still states nothing


@pytest.mark.parametrize(("said", "kept", "old"), [
    ("api port changes from 8081 to 9090", "api port changes to 9090", ("8081",)),
    ("CI now runs `uv run pytest` (previously `poetry run pytest`)", "CI now runs `uv run pytest`", ("poetry run pytest",)),
    ("we deploy with kamal instead of capistrano", "we deploy with kamal", ("capistrano",)),
    ("staging moved: stg-1.corp.lan -> stg-2.corp.lan", "staging moved: stg-2.corp.lan", ("stg-1.corp.lan",)),
    ("the queue is named `jobs-v2`", "the queue is named `jobs-v2`", ()),  # positive control: nothing replaced
])
def test_a_replaced_value_is_cut_from_the_clause_and_named(said: str, kept: str, old: tuple[str, ...]) -> None:
    assert without_old_values(said) == (kept, old)


def test_a_replaced_value_becomes_a_removal_that_retires_it() -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_767_225_600_000,
                user="the nightly export now lands in gs://acme-new instead of gs://acme-old", assistant="OK.", request_id="r1")
    found = RulesClient("extractive").extract([unit], "project:p")
    removal = [c for c in found if c.negated]
    assert [c.belief for c in removal] == ["gs://acme-old"]
    kept = [c for c in found if not c.negated]
    assert kept and all("acme-old" not in c.text for c in kept) and any("gs://acme-new" in c.text for c in kept)


@pytest.mark.parametrize(("said", "kept", "gone"), [
    ("build logs go to #ci-noise now, #ci-old got archived", "build logs go to #ci-noise now", ("#ci-old",)),
    ("moment is deprecated and dates go through `date-fns`", "dates go through `date-fns`", ("moment",)),
    ("the cache sits on cache-2.lan; cache-1.lan has been decommissioned", "the cache sits on cache-2.lan",
     ("cache-1.lan",)),
    ("Sentry is dead", "", ("Sentry",)),
    # positive controls: nothing is gone, or what is gone names nothing distinctive
    ("the worker runs on `celery` and reads from redis", "the worker runs on `celery` and reads from redis", ()),
    ("the old dashboard is gone, use the new one", "the old dashboard is gone, use the new one", ()),
    ("it is gone now, we use nats", "it is gone now, we use nats", ()),
    ("the flag `--gone-soon` is set in prod", "the flag `--gone-soon` is set in prod", ()),
])
def test_a_part_that_says_a_value_is_gone_is_cut_and_named(said: str, kept: str, gone: tuple[str, ...]) -> None:
    assert without_retired_parts(said) == (kept, gone)


def test_a_clause_with_a_new_value_and_a_retired_one_keeps_the_new_and_retires_the_old() -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1_767_225_600_000,
                user="error reports go to glitchtip.corp.lan now, sentry.corp.lan got shut down", assistant="OK.",
                request_id="r1")
    found = RulesClient("extractive").extract([unit], "project:p")
    assert [c.belief for c in found if c.negated] == ["sentry.corp.lan"]
    kept = [c.text for c in found if not c.negated]
    assert kept and all("sentry" not in t for t in kept) and any("glitchtip.corp.lan" in t for t in kept)


# ---------------------------------------------------------------- issue 11, session 4 (W11x)

@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_a_statement_before_a_closing_request_is_read_alone(profile: str) -> None:
    said = "heads up, the billing team moved the ledger db to ledger-2.corp.example — could you fix the seed script?"
    found = extract(said, "Sure, on it.", profile=profile)
    assert any("ledger-2.corp.example" in text for text, _, _ in found)
    # negative: the request alone states nothing
    assert extract("could you fix the seed script?", "Sure, on it.", profile=profile) == []


def test_split_trailing_requests_needs_a_statement_before_the_request() -> None:
    assert split_trailing_requests(["ok, can you rerun it?"]) == ["ok, can you rerun it?"]
    assert split_trailing_requests(["the cache now lives on mc-3.lan, can you update the docs?"]) == [
        "the cache now lives on mc-3.lan.", "can you update the docs?"]
    assert split_trailing_requests(["the cache now lives on mc-3.lan"]) == ["the cache now lives on mc-3.lan"]


@pytest.mark.parametrize("profile", ["developer", "extractive"])
@pytest.mark.parametrize("said", ["Dana floated moving the job queue to RabbitMQ", "priya suggested pnpm for the monorepo",
                                  "someone proposed pinning node to 22.4 on the build agents"])
def test_a_reported_proposal_yields_no_memory(said: str, profile: str) -> None:
    assert extract(said, profile=profile) == []


@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_an_accepted_choice_is_kept_where_a_proposal_is_not(profile: str) -> None:
    # positive controls of the test above: the same values stated as what holds
    assert ("package manager", "pnpm") in [(k, b) for _, k, b in extract("we use pnpm for the monorepo", profile=profile)]
    assert any("rabbitmq" in b for _, _, b in extract("the job queue moved to RabbitMQ", profile=profile))


def test_a_unit_or_a_stopword_is_no_replaced_value() -> None:
    text, old = without_old_values("one flush every ~9 h -> ~800 flushes a year per sector")
    assert old == () and "9 h" in text
    assert without_old_values("the worker pool goes from 4 -> 8")[1] == ("4",)  # positive control


def test_asides_in_parentheses_are_cut_only_when_they_are_clauses() -> None:
    assert without_asides("the broker listens on 5673 (the old one still holds 5672 on the shared box)") == (
        "the broker listens on 5673")
    assert without_asides("release notes go to the wiki (team/releases)") == "release notes go to the wiki (team/releases)"


def test_an_aside_with_another_value_never_reaches_the_memory() -> None:
    found = extract("the broker listens on 5673 (the old one still holds 5672 on the shared box)", profile="extractive")
    assert found and not any("5672" in text for text, _, _ in found)
    assert any("5673" in text or b == "5673" for text, _, b in found)


def test_a_removed_module_path_retires_its_package_name() -> None:
    text, gone = without_retired_parts("`gitlab.com/acme/brindle` is removed from the lockfile")
    assert "gitlab.com/acme/brindle" in gone and "brindle" in gone
    assert without_retired_parts("`brindle` is removed from the lockfile")[1] == ("brindle",)  # no path, no tail
    assert without_retired_parts("`src/app` is removed")[1] == ("src/app",)  # a local path is no module


def test_the_place_a_thing_moved_off_is_not_its_value() -> None:
    found = extract("we moved the build artifacts off `nas-2.lan` onto the new bucket `gs://acme-artifacts`",
                    profile="extractive")
    stated = [(t, b) for t, _, b in found if not t.startswith("No longer current")]
    # read as a move of a named subject (both profiles): the address is the value, the place moved off is no part of it
    assert stated == [("The build artifacts are the new bucket `gs://acme-artifacts`.", "gs://acme-artifacts")]
    # the place it moved off is retired (a distinctive one: a tool's name would retire its every other use)
    assert [b for t, _, b in found if t.startswith("No longer current")] == ["nas-2.lan"]
    # positive control: the same store named as the destination is the value
    assert any(b == "artifactory" for _, _, b in extract("we moved the build artifacts onto Artifactory",
                                                         profile="extractive"))


def test_a_lead_in_before_a_colon_does_not_hide_a_durable_statement() -> None:
    body = "the staging cluster now runs in eu-west-3 with three nodes"
    lead = "notes from the infra sync: " + body
    assert _durable(body, "user") and _durable(lead, "user")
    assert not _durable("notes from the infra sync: can we talk later", "user")  # negative control


@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_a_version_value_gets_the_version_key_whatever_the_reading(profile: str) -> None:
    kv = extract("the minimum zig is 0.11", profile=profile)
    assert [(k, b) for _, k, b in kv] == [("minimum zig version", "0.11")]
    # a reason after the value is no part of it
    why = extract("the minimum zig is 0.12 because the allocator API changed", profile=profile)
    assert [(k, b) for _, k, b in why] == [("minimum zig version", "0.12")]
    # negative control: a value that is not a version keeps the plain key
    assert [k for _, k, _ in extract("the minimum zig is `zig-nightly`", profile=profile)] == ["minimum zig"]


def test_the_extractive_kind_of_a_version_is_version() -> None:
    said = extract("the ingest workers use protocol 3.1 for uploads", profile="extractive")
    assert [(k, b) for _, k, b in said] == [("ingest workers version", "3.1")]
    # a count or a time of day keeps its own kind
    assert [value_kind(v) for v in ("3.1", "v2.0.1", "12", "02:30", "40gb")] == [
        "version", "version", "number", "time", "number"]


def test_a_comparison_is_no_attribute() -> None:
    assert extract("the builds are way faster than drone now") == []
    assert extract("the builds are slower than before") == []
    assert [k for _, k, _ in extract("the build runner is `drone-7`")] == ["build runner"]  # positive control


def test_a_move_off_a_place_with_no_destination_names_it_replaced() -> None:
    assert without_old_values("we migrated the cron jobs off jenkins last spring") == (
        "we migrated the cron jobs last spring", ("jenkins",))
    # negative: "off" that is no move ("kick off") names nothing
    assert without_old_values("kick off builds every night") == ("kick off builds every night", ())


def test_a_closing_contrast_names_the_value_not_chosen() -> None:
    assert without_old_values("logs go through vector, not fluentd") == ("logs go through vector", ("fluentd",))
    assert without_old_values("the result is fine, not great") == ("the result is fine, not great", ())  # an evaluation


def test_a_list_of_removed_things_retires_each() -> None:
    assert without_retired_parts("Removed `libquux`, `third/quux`, the `quux` build flag from the Makefile") == (
        "", ("libquux", "third/quux", "quux"))
    assert without_retired_parts("(b) removed `old.cfg` from the repo") == ("", ("old.cfg",))
    # negative: a removed common noun retires nothing
    assert without_retired_parts("removed the TODO from the route") == ("removed the TODO from the route", ())


@pytest.mark.parametrize("profile", ["developer", "extractive"])
def test_a_pasted_environment_file_states_nothing(profile: str) -> None:
    pasted = "for reference, the old box had:\nQUEUE_PORT=7070\nQUEUE_URL=amqp://mq-old:5672\n"
    assert not any("7070" in t or "mq-old" in t for t, _, _ in extract(pasted, profile=profile))
    # positive control: one assignment said in a sentence is a statement
    said = extract("QUEUE_PORT=7071 on the new box", profile=profile) + extract("set QUEUE_PORT to 7071", profile=profile)
    assert any(b == "7071" for _, _, b in said)


def test_an_estimate_is_no_fact_to_keep() -> None:
    for said in ["At one sync every 4 minutes that is one write every ~9 h per block",
                 "the nightly export takes roughly 40 minutes on the big shard"]:
        assert extract(said, "Noted.", profile="extractive") == [], said
    # positive control: the exact setting, without an estimate, is kept
    assert extract("the nightly export job exports everything to s3://acme-exports/nightly", profile="extractive")


def test_a_value_called_old_is_retired() -> None:
    found = extract("so the old 2.9 V limit was already too low under load", profile="extractive")
    assert found == [("No longer current: 2.9.", "", "2.9")]
    # negative: an old thing with no distinctive value names nothing to retire
    assert extract("the old dashboard is still up", profile="extractive") == []
    # positive control: the same value without "old" is a statement, not a retirement
    kept = extract("the brown-out limit is 2.9 V on every board", profile="extractive")
    assert kept and not kept[0][0].startswith("No longer current")


def test_the_extractive_key_is_the_subject_and_the_kind_of_the_value() -> None:
    # the subject before a verb of no closed list, an adverb between them or not
    first = extract("the sync worker polls every 30 seconds", profile="extractive")
    later = extract("the sync worker now polls every 90 seconds", profile="extractive")
    assert [k for _, k, _ in first] == [k for _, k, _ in later] == ["sync worker number"]
    # the speaker as subject: the verb's object is what the clause is about
    assert _subject_key("we moved the thumbnail sweep to 04:10", "04:10") == ("thumbnail sweep time", "04:10")
    assert _subject_key("bumped the upload cap to 64mb", "64mb") == ("upload cap number", "64mb")
    # a phrase after the object's preposition qualifies it: no key, so two qualified subjects never merge
    assert _subject_key("we raised the retry limit on the mobile client to 7", "7") == ("", "")
    assert _subject_key("we moved the cleanup job in the eu cluster to 04:10", "04:10") == ("", "")
    # negative controls: another pronoun, or no determiner before the noun phrase, gives no key
    assert [k for _, k, _ in extract("it polls every 30 seconds", profile="extractive")] in ([], [""])
    assert [k for _, k, _ in extract("sync worker polls every 30 seconds", profile="extractive")] in ([], [""])


def test_a_copular_clause_asserts_its_complement_not_a_name_in_its_subject() -> None:
    said = extract("the cache in front of the Wagtail site is nuster", profile="extractive")
    assert [b for _, _, b in said] == ["nuster"]
    # so that a later removal of that value, with no key, retires it by its value
    gone = extract("drop nuster from the Wagtail site, we don't use it anymore", profile="extractive")
    assert any(b == "nuster" for _, _, b in gone)
    # negative controls: an evaluative word closing the clause is no value; a past copula is no current value
    assert extract("the Wagtail cache setup is great", profile="extractive") == []
    assert [b for _, _, b in extract("the cache in front of the Wagtail site was nuster", profile="extractive")] \
        != ["nuster"]


def test_an_aside_with_a_copula_of_its_own_is_cut_closed_or_left_open() -> None:
    assert without_asides("the relay answers on :7446 (7445 is the legacy relay)") == "the relay answers on :7446"
    assert without_asides("the relay answers on :7446 (7445 is the legacy relay") == "the relay answers on :7446"
    # negative controls: a short aside that only qualifies the value stays
    assert without_asides("logs go to loki (per pod)") == "logs go to loki (per pod)"



def test_a_clause_kept_as_said_never_restates_what_its_turn_removed() -> None:
    reply = "Removed the `coupon_engine` module and its hooks from CheckoutView; 14 tests went with it."
    found = extract("drop the coupon_engine module and all its hooks, I want nothing left in CheckoutView",
                    reply, profile="extractive")
    assert ("The project no longer uses the coupon_engine module.", "", "coupon_engine module") in found
    assert not any("coupon_engine" in text for text, _, _ in found if not text.startswith("The project no longer"))
    # positive control: a reply that keeps the module is kept as said
    kept = extract("tidy up CheckoutView please", reply.replace("Removed", "Moved").replace("from", "into"),
                   profile="extractive")
    assert any(text.startswith("Moved the `coupon_engine` module") for text, _, _ in kept)
    # and the reply alone says the module is gone (``actors.llm.removal``), so it is not kept as said
    alone = extract("tidy up CheckoutView please", reply, profile="extractive")
    assert ("No longer current: coupon_engine.", "", "coupon_engine") in alone
    assert not any("coupon_engine" in text for text, _, _ in alone if not text.startswith("No longer current"))


@pytest.mark.parametrize(("said", "key", "value"), [
    ("switch the logger to slog", "logger", "slog"),
    ("the job queue was changed to beanstalkd", "job queue", "beanstalkd"),
    ("we switched the tracer over to zipkin-lite", "tracer", "zipkin-lite"),
])
def test_a_change_verb_needs_no_known_name_for_its_new_value(said: str, key: str, value: str) -> None:
    assert [(k, b) for _, k, b in extract(said)] == [(key, value)]


def test_a_move_to_a_place_is_no_new_value() -> None:
    assert extract("move the app to Toronto") == []


@pytest.mark.parametrize("said", ["the logger is slog", "the tracer is zipkin"])
def test_a_bare_copula_still_needs_a_known_name_or_shape(said: str) -> None:
    # the control: without a change verb an unknown plain word stays unread ("the build is failing")
    assert extract(said) == []


@pytest.mark.parametrize(("said", "key", "value", "old"), [
    ("swap eslint for biome", "linter", "biome", "eslint"),  # was read as ESLint, the value given up
    ("we're ditching jest for vitest", "test framework", "vitest", "jest"),
    ("we traded redis for memcached last month", "cache", "memcached", "redis"),
    ("jest -> vitest", "test framework", "vitest", "jest"),
    ("moved from poetry to uv", "package manager", "uv", "poetry"),  # a known tool keys by its category, not the old name
])
def test_a_thing_given_up_for_another_chooses_the_other(said: str, key: str, value: str, old: str) -> None:
    # the value given up is retired (a removal with no key), and no memory's text names it
    found = extract(said)
    assert [(k, b) for _, k, b in found] == [("", old), (key, value)]
    assert old not in found[1][0].lower()


def test_a_swap_of_things_that_are_no_tools_reads_nothing() -> None:
    assert extract("swap the config for a new one") == []


@pytest.mark.parametrize(("said", "key", "value"), [
    ("core dumps end up in /var/crash/kiln", "core dumps location", "/var/crash/kiln"),
    ("nightly exports land in /srv/exports", "nightly exports location", "/srv/exports"),
    ("checkpoints get written to /scratch/ckpt", "checkpoints location", "/scratch/ckpt"),
])
def test_any_verb_of_placing_says_where_a_thing_lives(said: str, key: str, value: str) -> None:
    assert [(k, b) for _, k, b in extract(said)] == [(key, value)]


def test_a_thing_landing_somewhere_without_a_path_is_no_location() -> None:
    assert extract("the fix lands in prod tomorrow") == []


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("the build hosts are UTC+1 while the retired builders were UTC", "the build hosts are UTC+1"),
        ("the pool size is 24, whereas the old pool was 40 before March", "the pool size is 24"),
    ],
)
def test_a_contrast_in_the_past_tense_is_no_part_of_the_statement(said: str, kept: str) -> None:
    assert without_asides(said) == kept
    assert without_asides(kept) == kept  # positive control: a statement with no contrast is left alone
    moved = "the pool size is 24, but the pool was moved to the db-7 box"
    assert without_asides(moved) == moved  # "but" with a past passive states what holds now


@pytest.mark.parametrize(("said", "named"), [
    ("That's the `pager_widget` overlay from `HomeScaffold`.",
     "The pager widget is the `pager_widget` overlay from `HomeScaffold`."),
    ("It's the `cache_dir` default from `Settings` in /srv/app.",
     "The cache dir is the `cache_dir` default from `Settings` in /srv/app."),
    ("They're the two retry knobs in `worker.toml` at /etc/worker.",
     "The retry knobs are the two in `worker.toml` at /etc/worker."),
])
def test_a_clause_whose_subject_points_back_is_no_memory(said: str, named: str) -> None:
    assert extract(said, profile="extractive") == []
    assert extract(named, profile="extractive") != []  # positive control: with its subject named it is kept


def test_a_contrast_is_no_part_of_a_read_value() -> None:
    found = extract("the deploy region is eu-central-2 whereas the old region was us-west-1")
    assert ("eu-central-2" in {belief for _, _, belief in found}
            and not any("us-west-1" in text for text, _, _ in found))


def test_the_extractive_profile_keeps_no_clause_about_someone_elses_thing() -> None:
    assert extract("their Postgres is exposed on 6544 and their Grafana on 3300", profile="extractive") == []
    assert extract("the analytics vendor's warehouse sits on 6544 on his side", profile="extractive") == []
    # positive control: the same clause about our own thing is kept
    assert any("6544" in text for text, _, _ in extract("our Postgres is exposed on 6544 and Grafana on 3300",
                                                         profile="extractive"))
