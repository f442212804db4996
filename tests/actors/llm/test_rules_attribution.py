"""Values stay with the thing that holds them (issue 11): a port belongs to the subject of its part of
the clause, a tool name inside a path is no tool choice, code in backticks is no command, and a word
describing a variable is not its value. Each negative has a positive control in the same shape."""

from __future__ import annotations

import pytest

from actors.llm.rules import RulesClient
from engine.models import Unit

SCOPE = "project:p"
CLIENT = RulesClient()


def found(user: str, assistant: str = "") -> list[tuple[str, str]]:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant=assistant, request_id="r1")
    return [(c.key, c.text) for c in CLIENT.extract([unit], SCOPE)]


def ports(user: str, assistant: str = "") -> list[tuple[str, str]]:
    return [(k, t) for k, t in found(user, assistant) if k.endswith("port")]


@pytest.mark.parametrize(
    "said",
    [
        "Exporter stats are served on port 9411, reachable only inside the cluster.",
        "Added a second listener for 9411 (not attached to the load balancer).",
        "Stats come out on port 9411, behind the bastion host.",
    ],
)
def test_a_place_named_near_a_port_is_not_the_service(said: str) -> None:
    got = ports("", said)
    assert all("cluster" not in k and "bastion" not in k and "balancer" not in k for k, _ in got), got


def test_a_port_in_the_second_half_of_a_clause_belongs_to_that_half() -> None:
    got = ports("", "The staging Redis is published as `6379:6379`, but the cache config now falls back to 6380.")
    assert [k for k, _ in got] == ["cache port"] or all("redis" not in k for k, _ in got), got
    # control: the subject before the port in its own half is kept
    assert ports("", "The docs site binds to 5499.") == [("docs site port", "The docs site listens on port 5499.")]


def test_the_number_said_as_a_port_is_the_port() -> None:
    """"answers 204 on port 7311": a status code before the port is no port (an invented "listens on port 204")."""
    got = ports("", "The probe endpoint answers 204 on port 7311 once warm.")
    assert got and all("7311" in t and "204" not in t for _, t in got), got
    # controls: a move keeps the value it moves to, though only the old one is said after "port"; a number with
    # its own words of a port ("listens on") keeps it, whatever another part of the clause says after "port"
    assert [t for _, t in ports("we moved the relay from port 7311 to 7312")] == ["The relay listens on port 7312."]
    assert [t for _, t in ports("the relay listens on 7311 and exports stats on port 9102")][:1] == [
        "The relay listens on port 7311."]


def test_a_phrase_attached_after_the_port_still_names_it() -> None:
    assert ports("port 8181 is the billing dashboard") == [
        ("billing dashboard port", "The billing dashboard listens on port 8181.")
    ]


@pytest.mark.parametrize(
    "said",
    [
        "New `App.KafkaLive` view at `/kafka/topics/:name`, we use it from the admin page.",
        "Moved the handler to `/elasticsearch/reindex/:id`; the ops team will use it now.",
        "We use the module at `lib/redis/pool_helpers.rb` for everything queue related.",
    ],
)
def test_a_tool_name_inside_a_path_is_no_tool_choice(said: str) -> None:
    assert [t for _, t in found("", said) if t.startswith("The project uses")] == []


def test_a_tool_name_in_prose_beside_a_path_is_still_a_choice() -> None:
    got = found("the pool code lives in src/cache/pool.ts, and we use Redis for caching")
    assert ("cache", "The project uses Redis as its cache.") in got
    assert ("cache", "The project uses Valkey as its cache.") in found("we moved from Redis/Memcached to Valkey for caching")


@pytest.mark.parametrize(
    "said",
    [
        "installing it is only `use Tracer.Endpoint` in the web module",
        "add the migration: `add_column :users, :nickname, :string, null: true` and run it",
        "to build it, call `Builder.new(opts).run` from the task",
    ],
)
def test_code_in_backticks_is_not_a_command(said: str) -> None:
    assert [k for k, _ in found(said) if k.endswith("command")] == []


def test_a_shell_line_named_as_a_command_is_still_read() -> None:
    assert ("deploy command", "To deploy, run `kamal deploy -d production`.") in found(
        "to deploy we run `kamal deploy -d production` from the repo root"
    )


@pytest.mark.parametrize(
    "said",
    [
        "no idea why the emails bounce, MAILER_DSN is configured fine on the box",
        "`STATUS_PIN` is pin 21 on the new board, unchanged on the old one",
    ],
)
def test_a_word_describing_a_variable_is_not_its_value(said: str) -> None:
    assert [k for k, _ in found(said) if k.endswith("env var")] == []


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("LOG_FORMAT is json", "json"),
        ("LOG_FORMAT is json in staging", "json"),
        ("`LOG_FORMAT` is `logfmt` for now", "logfmt"),
        ("QUEUE_CONCURRENCY is 12 everywhere", "12"),
    ],
)
def test_a_value_after_is_is_still_read(said: str, value: str) -> None:
    got = [t for k, t in found(said) if k.endswith("env var")]
    assert len(got) == 1 and f"`{value}`" in got[0], got


def test_a_dotted_task_that_opens_a_command_line_is_no_host() -> None:
    said = "The setup alias runs `db.reset --force` and `db.seed` before the suite."
    assert [k for k, _ in found("", said) if k.endswith("host")] == []
    # control: a host in backticks on its own is still a host
    assert ("search host", "The search host is search.internal.") in found("the search host is `search.internal`")


def test_a_hyphenated_word_is_not_cut_at_a_filler_it_starts_with() -> None:
    texts = [t for _, t in found("", "- Remember-me tokens expire after 14 days for shoppers.")]
    assert all(not t.startswith("-") for t in texts) and all("Remember-me" in t for t in texts), texts
    texts = [t for _, t in found("", "- So-called preview builds are kept for 7 days.")]
    assert all(not t.startswith("-") for t in texts), texts


def test_a_word_before_port_names_whose_port_it_is() -> None:
    assert [k for k, _ in ports("relay port changes to 4443/tcp, firewall too.")] == ["relay port"]
    # positive controls: a qualifier of the port names nothing, and a clause naming no service keeps the old default
    assert [k for k, _ in ports("the new port is 4443")] == ["api port"]
    assert [k for k, _ in ports("it runs on 4443 now")] == ["api port"]


def test_a_port_inside_an_address_belongs_to_its_host_and_keeps_the_address() -> None:
    got = ports("we are switching tracing to a self-hosted Tempo at http://tempo.obs.lan:4318 instead of the SaaS")
    assert [k for k, _ in got] == ["tempo port"], got
    assert "tempo.obs.lan:4318" in got[0][1]
    # positive control: a clause that names its service keeps it, whatever the address says
    assert [k for k, _ in ports("postgres is on pg-7.internal:5433 now")] == ["database port"]


def test_an_address_the_subject_only_uses_is_not_the_subjects_port() -> None:
    got = ports("", "The checkout widget calls the pricing feed at https://feed.quotes-example.org:9443/v1 once a minute.")
    assert [k for k, _ in got] == ["feed port"], got
    # positive controls: a subject said to be at the address keeps it; port talk keeps the subject
    assert [k for k, _ in ports("the docs site is now at https://help.acme-example.io:8090")] == ["docs site port"]
    assert [k for k, _ in ports("the staging API now listens on https://api-st.acme-example.io:8443")] == ["staging api port"]


def test_a_client_of_a_port_does_not_listen_on_it() -> None:
    """The subject before a verb of reaching a server (points at, connects to, talks to) uses the port."""
    assert ports("the checkout widget talks to localhost:7100 for prices") == []
    # The verb's object, when it names a service, is the listener.
    assert ports("the worker talks to the billing service on 7001") == [
        ("billing port", "The billing service listens on port 7001.")]
    # The controls: the subject that listens, and a noun that only looks like a verb.
    assert ports("the docs site binds to 5499") == [("docs site port", "The docs site listens on port 5499.")]
    assert ports("the api serves requests on port 8080") == [("api port", "The API server listens on port 8080.")]


def test_an_address_a_client_is_pointed_at_keeps_its_host() -> None:
    got = ports("", "The status page shows a badge image pointed at `https://uptime.example.org:8555/b.svg`.")
    assert got == [("uptime port", "The uptime service is at https://uptime.example.org:8555/b.svg.")], got


def test_an_address_in_a_store_is_its_own_value_not_the_stores_name() -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user="the bucket that holds exports is s3://acme-exports.",
                assistant="", request_id="r1")
    assert [c.belief for c in CLIENT.extract([unit], SCOPE)] == ["s3://acme-exports"]
    named = Unit(id="u2", project="p", session="s", turn=1, ts_ms=1000, user="the cache is Redis.", assistant="", request_id="r2")
    assert [c.belief for c in CLIENT.extract([named], SCOPE)] == ["redis"]  # the control: a store named alone


def test_a_credential_is_named_by_the_kind_of_secret_its_variable_holds() -> None:
    def said(user: str) -> list[tuple[str, str]]:
        unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, user=user, assistant="", request_id="r1")
        return [(c.key, c.text) for c in CLIENT.extract([unit], SCOPE)]

    assert said("the db password goes in PG_PASSWORD") == [
        ("db credential", "The db password is read from the PG_PASSWORD environment variable.")]
    assert ("maps credential", "The maps API key is read from the MAPS_API_KEY environment variable.") in said(
        "use the maps key from MAPS_API_KEY")
    # A phrase never runs back over the end of a sentence: "... by hand. Key ..." names no "hand" service.
    got = said("we hit the vendor's api by hand. Key goes in VENDOR_SDK_KEY, read it from there")
    assert got and all("hand" not in k for k, _ in got), got


def test_an_instruction_to_run_a_thing_on_a_port_gives_its_port() -> None:
    assert ports("locally run the docs preview on 4100, 4000 is taken") == [
        ("docs preview port", "The docs preview listens on port 4100.")]
    assert ports("run the migration on 2024 data") == []  # the control: a number that is no port


@pytest.mark.parametrize("said", ["Changed both to edge.quarrel.dev.", "Pointed each at edge.quarrel.dev."])
def test_a_quantifier_is_no_subject(said: str) -> None:
    """"changed both to X": "both" names what an earlier sentence named; no memory is about "the both"."""
    assert not any(t.lower().startswith(("the both", "the each")) for _, t in found("", said)), found("", said)
    assert any(k.startswith("second region") for k, _ in found("the second region is eu-west-2"))  # an ordinal qualifies


@pytest.mark.parametrize("verb", ["answers", "replies", "returns"])
def test_a_verb_of_answering_ends_the_subject_of_a_port(verb: str) -> None:
    """"the health probe answers with a 204 on port 7301": the verb is no part of whose port it is."""
    assert ports(f"the health probe {verb} with a 204 on port 7301") == [
        ("health probe port", "The health probe listens on port 7301.")]


def test_a_port_a_command_forwards_to_is_no_listener_of_the_project() -> None:
    """A flag naming where a command sends (``--forward-to``, ``--target``) gives the port of its destination,
    which no sentence said the project listens on; a flag of the command's own address still does."""
    assert ports("relay the webhooks with `hookcli listen --forward-to localhost:4242/in`") == []
    assert ports("run `metricsd --target http://127.0.0.1:8125` in another tab") == []
    # a short flag or another long flag may give the port the command serves on
    assert [p for k, p in ports("the site runs via `php -S localhost:8010 -t public`")] == [
        "The site listens on port 8010."]
    # the controls: the command's own port, and a port said in prose
    assert ports("`uvicorn main:app --port 8002` runs the api") == [("api port", "The API server listens on port 8002.")]
    assert ports("the api listens on 8080") == [("api port", "The API server listens on port 8080.")]


def test_what_is_done_to_a_subject_is_part_of_its_setting() -> None:
    """"X are capped at N" and "X are scanned by Y" are two settings of one subject: neither replaces the other,
    while a later cap replaces the cap."""
    capped = found("Attachments are capped at 20 MB.")
    scanned = found("Attachments are scanned by VirusTotal.")
    assert capped and scanned and capped[0][0] != scanned[0][0], (capped, scanned)
    assert found("Attachments are now capped at 40 MB.")[0][0] == capped[0][0]
    # a verb of changing or bounding a value names no setting of its own
    assert found("The worker concurrency is bumped to 8.")[0][0] == "worker concurrency"
    assert found("Attachments are limited to 30 MB.")[0][0] == "attachments"
    # the control: a value that is no participle keeps the subject's key
    assert found("The session timeout is 45 minutes.")[0][0] == "session timeout"


def test_a_port_a_service_owns_is_qualified_by_what_it_is_for() -> None:
    """"the build box's SSH port is 2200" and "the build box's dashboard port is 8800" are two ports of one
    machine: the first keeps what it is for in its key, so that neither replaces the other."""
    ssh = ports("The build server's SSH port is 2200.")
    assert ssh == [("build ssh port", "The build server SSH listens on port 2200.")], ssh
    assert ports("The build server listens on 8800.") == [("build port", "The build server listens on port 8800.")]
    assert [k for k, _ in ports("The staging host's admin port is 9000.")] == ["staging admin port"]  # no word twice




def test_a_port_named_by_its_owner_in_either_order_is_the_owners() -> None:
    """"the scheduler's port is 7311", "7311 is the scheduler's port" and "7311 is the port of the scheduler" all
    say whose port it is; none may fall back to the default API server (a value glued to the wrong subject)."""
    want = [("scheduler port", "The scheduler listens on port 7311.")]
    assert ports("the scheduler's port is 7311") == want
    assert ports("7311 is the scheduler's port") == want
    assert ports("7311 is the port of the scheduler") == want
    assert ports("the port for the scheduler is 7311") == want
    # controls: a port with no owner said is still the API's, and a person's port is not the project's
    assert ports("the port is 7311") == [("api port", "The API server listens on port 7311.")]
    assert ports("Yusuf's port is 7311") == []


def test_one_more_port_of_something_unnamed_is_nobodys() -> None:
    """"Added a second port mapping for 9310" says whose port it is not: never the API server's by default (a later
    statement of the API's own port would otherwise be superseded), and no subject "second"."""
    assert ports("Task definition updated with a second port mapping for 9310.") == []
    assert ports("we opened an extra port, 9310, on the box") == []
    # controls: one more port of a named thing, and a port with no owner said
    assert ports("the exporter gets a second port, 9310") == [("exporter port", "The exporter listens on port 9310.")]
    assert ports("it runs on 9310") == [("api port", "The API server listens on port 9310.")]


def test_a_port_tried_or_clashed_with_is_anothers() -> None:
    """"the importer is trying port 6390" (a client attempting a connection) and "to avoid clashing with the host's
    MariaDB on 3306" name ports that the subject does not listen on."""
    assert ports("The importer is trying port 6390, which is the broker's default.") == []
    assert ports("compose maps it to 3307 to avoid clashing with a system MariaDB on 3306") == []
    # controls: the subject's own port, and a move made to avoid a clash
    assert ports("the importer listens on 6390") == [("importer port", "The importer listens on port 6390.")]
    assert ports("the importer was moved to port 6391 to avoid clashing with grafana") == \
        [("importer port", "The importer listens on port 6391.")]
def test_a_splice_whose_value_is_code_is_two_clauses() -> None:
    """"sqlite for local runs, db file is `var/app.db`": the second statement is read too, though its value is code."""
    got = found("sqlite for local runs, db file is `var/app.db`")
    assert ("db file", "The db file is `var/app.db`.") in got, got


def test_a_tool_after_a_comma_is_not_the_object_of_the_verb_before_it() -> None:
    """The verb of choosing must reach the tool without crossing into another comma's stretch."""
    got = found("I moved my local db to 5434, the other repo's docker db took 5432")
    assert all(k != "container runtime" for k, _ in got), got
    # controls: the verb and the tool in one stretch, and a one-word aside between commas
    assert [k for k, _ in found("we moved the api to Docker")] == ["api container runtime"]
    assert [k for k, _ in found("we switched, finally, to pnpm")] == ["package manager"]


def test_a_decided_move_onto_a_named_place_keeps_the_address() -> None:
    """"notes from the sync: we agreed to move the scans off Artifactory onto the shared bucket `b2://scans-v2` (...)":
    the lead-in, the decision, the aside and the tool naming whose bucket it is are no part of the value, and a
    tool's name moved off is not retired (that would reach its every other use)."""
    got = found("notes from the sync: we agreed to move all the scans off Artifactory onto the Wasabi bucket "
                "`b2://scans-v2` (the old box goes away in May)")
    assert ("scans", "The scans are the Wasabi bucket `b2://scans-v2`.") in got, got
    assert all(k != "object storage" for k, _ in got), got  # Wasabi only says whose bucket it is
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, request_id="r1", assistant="",
                user="we agreed to move the scans onto the bucket `b2://scans-v2`")
    assert [c.belief for c in CLIENT.extract([unit], SCOPE) if c.key == "scans"] == ["b2://scans-v2"]
    assert all(not t.startswith("No longer current") for _, t in got), got
    # control: a tool chosen outright is still a choice
    assert [k for k, _ in found("we moved the scans to S3")] != []


@pytest.mark.parametrize(("said", "key", "value"), [
    ("we use Postgres for `orders`", "database", "postgres"),  # a code span after a preposition: still a choice
    ("we migrated, as planned, to Postgres", "database", "postgres"),  # an aside between commas cuts nothing
])
def test_a_choice_is_kept_whatever_code_or_aside_follows(said: str, key: str, value: str) -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, request_id="r1", assistant="", user=said)
    assert [(c.key, c.belief) for c in CLIENT.extract([unit], SCOPE)] == [(key, value)]


@pytest.mark.parametrize("said", ["set the timeout to 30 seconds in `config.yaml`", "changed the healthcheck to GET /healthz"])
def test_a_value_followed_by_a_file_or_a_request_path_is_no_place(said: str) -> None:
    unit = Unit(id="u1", project="p", session="s", turn=1, ts_ms=1000, request_id="r1", assistant="", user=said)
    assert all(c.belief not in {"config.yaml", "/healthz"} for c in CLIENT.extract([unit], SCOPE))


@pytest.mark.parametrize("said", ["we picked the dark theme, Postgres kept crashing", "we use tabs, Prettier reformats them"])
def test_a_tool_in_the_next_clause_is_not_chosen(said: str) -> None:
    assert found(said) == []


@pytest.mark.parametrize("said", ["the failing test is on line 118", "the outage is on us-east-1", "the standup is on day 3"])
def test_on_a_number_of_no_pin_or_host_is_no_value(said: str) -> None:
    assert found(said) == []


def test_a_move_into_a_part_of_the_code_is_no_setting() -> None:
    assert found("we moved the cron into the worker process") == []


def test_a_value_on_a_pin_or_code_is_the_place() -> None:
    """"the relay that drives the pump is on GPIO 5": the value is the pin; "on" before a plain word is no
    place ("the build is on fire")."""
    assert found("the relay that drives the pump is on GPIO 5") == [
        ("relay drives pump", "The relay that drives the pump is on GPIO 5.")]
    assert found("the docs are on `site-pages`") == [("docs", "The docs are on `site-pages`.")]
    assert found("the build is on fire") == [] and found("the team is on leave") == []


@pytest.mark.parametrize("said", [
    "Marta's ledger proxy listens on 7311 for her experiments",
    "my coworker's ledger proxy listens on 7311",
    "their ledger proxy listens on 7311, ours is elsewhere",
])
def test_a_setting_owned_by_someone_else_is_not_the_projects(said: str) -> None:
    assert not [k for k, _ in found(said) if k], found(said)
    assert ("ledger proxy port", "The ledger proxy listens on port 7311.") in found("the ledger proxy listens on 7311")
    assert [k for k, _ in found("Kafka's broker port is 7311 here") if k] == ["broker port"]  # a tool's, not a person's
    assert [k for k, _ in found("Staging's ledger proxy listens on 7311") if k]  # a part of the setup's


def test_a_ui_or_client_of_another_thing_is_not_the_projects_frontend() -> None:
    assert ports("the broker's management UI listens on 15673") != [("frontend port", "The frontend dev server runs on port 15673.")]
    assert ports("the mqtt client listens on 18830") == [] or ports("the mqtt client listens on 18830")[0][0] != "frontend port"
    assert ports("the UI listens on 5174") == [("frontend port", "The frontend dev server runs on port 5174.")]  # control
    assert ports("our client is served on 5174") == [("frontend port", "The frontend dev server runs on port 5174.")]


def test_a_port_after_a_verb_of_sending_belongs_to_the_receiver() -> None:
    assert ports("the audit hook forwards payloads to the chat relay on port 3979") == [
        ("chat relay port", "The chat relay listens on port 3979.")]
    assert [k for k, _ in ports("the gateway proxies to the quota service on 9012")] == ["quota port"]
    assert [k for k, _ in ports("the quota service listens on 9012")] == ["quota port"]  # control


@pytest.mark.parametrize("said", [
    "Bartek keeps Postgres on his laptop on port 6544 because of another client's database",
    "the queue consumer runs on 7311 on her workstation",
    "the staging dsn sits in Mireille's .env as postgres://stage-db.lan/app",
])
def test_a_value_placed_on_someone_elses_machine_is_theirs(said: str) -> None:
    assert not any(v in text for _, text in found(said) for v in ("6544", "7311", "stage-db.lan")), found(said)


def test_a_value_on_the_projects_machines_is_read() -> None:
    # positive controls: the same values with no one else's place
    assert any("6544" in text for _, text in found("we keep Postgres on port 6544 now"))
    assert any("7311" in text for _, text in found("the queue consumer listens on 7311"))


def test_a_third_persons_habit_is_not_the_projects_choice() -> None:
    assert not any("npm" in text.lower() for _, text in found("Ines looks after the kiosk app and she runs everything through npm"))
    assert not any("black" in text.lower() for _, text in found("he prefers black for formatting"))
    # positive controls: the project's own choices in the same shape
    assert any("npm" in text for _, text in found("the kiosk app runs everything through npm"))
    assert any("ruff" in text for _, text in found("he prefers black for formatting but we use ruff format"))


def test_a_value_said_of_someone_elses_thing_is_theirs() -> None:
    said = "Odile runs her own broker on 7884 since 7883 is taken on her box, so her .env has BROKER_PORT=7884"
    assert not any("7884" in text for _, text in found(said)), found(said)
    # positive controls: a possessive after the value, or not the clause's subject, keeps the project's change
    assert any("7070" in text for _, text in found("we moved the api to port 7070 at her request"))
    assert any("7884" in text for _, text in found("the .env has BROKER_PORT=7884 now"))

