"""Vocabulary of the TIDE generator: subjects, value pools and developer phrasings.

Every statement kind of every family has at least five wordings, written the way
developers type in a coding-agent chat (lower case, asides, ``fyi``), not in the shapes
any extractor prefers. ``{S}`` is the subject ("the API"), ``{v}`` the value, ``{old}``
the value being replaced. Values never contain each other's tokens within a stream (the
generator checks), so the presence of an old value in an injected block proves that a
stale fact was served.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Callable

ValueFn = Callable[[random.Random, str], str]


@dataclass(frozen=True)
class Family:
    """One kind of project fact (ports, package managers...) with its phrasings."""

    name: str
    instances: tuple[str, ...]  # subjects, each usable as {S}
    values: ValueFn  # (rng, subject) -> a fresh candidate value
    state: tuple[str, ...]  # first statement of a value
    change: tuple[str, ...]  # a new value replacing an old one (may name {old})
    question: tuple[str, ...]  # how a developer later asks for it
    canonical: str  # one self-contained sentence: engine-level memory text and oracle
    retractable: bool = False
    pools: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _pool(*names: str) -> ValueFn:
    return lambda rng, subject: rng.choice(names)


def _pool_by(table: dict[str, tuple[str, ...]]) -> ValueFn:
    return lambda rng, subject: rng.choice(table[subject])


def _port(rng: random.Random, subject: str) -> str:
    return str(rng.randint(3000, 9899))


def _host(rng: random.Random, subject: str) -> str:
    prefix = rng.choice(["db", "pg", "data", "store", "node", "svc", "box", "core", "edge", "vault"])
    zone = rng.choice(["stg", "prod", "int", "eu1", "us2", "ops", "ap3", "dc2"])
    domain = rng.choice(["acme.internal", "corp.lan", "infra.example.net", "svc.cluster.local", "hq.example.org"])
    return f"{prefix}-{rng.randint(1, 99):02d}.{zone}.{domain}"


_PATH_LEAVES = {
    "the database migrations": ("migrations", "alembic/versions", "schema/migrations", "sql/migrate", "migrate"),
    "the test fixtures": ("fixtures", "testdata", "tests/fixtures", "test_data", "samples"),
    "the OpenAPI schema files": ("openapi", "api/schema", "spec", "contracts", "schemas/http"),
    "the feature flag definitions": ("flags", "feature_flags", "toggles", "config/flags", "rollouts"),
    "the seed files": ("seeds", "seed_data", "fixtures/seed", "bootstrap", "initial_data"),
    "the deploy scripts": ("deploy", "ops/scripts", "scripts/release", "infra/bin", "tools/ship"),
}


def _path(rng: random.Random, subject: str) -> str:
    root = rng.choice(["db", "src", "app", "backend", "server", "lib", "config", "resources", "internal", "platform"])
    return f"{root}/{rng.choice(_PATH_LEAVES[subject])}"


PEOPLE = ("Priya", "Marco", "Chen", "Fatima", "Jonas", "Aiko", "Diego", "Olga", "Kwame", "Lena", "Ravi",
          "Sofia", "Tomas", "Yuki", "Amara", "Henrik", "Nadia", "Pablo", "Ingrid", "Mateo", "Zanele", "Bjorn")

_PKG = {
    "the frontend": ("npm", "pnpm", "yarn", "bun"),
    "the web app": ("npm", "pnpm", "yarn", "bun"),
    "the backend": ("pip", "poetry", "uv", "pdm", "hatch", "pipenv"),
    "the data scripts": ("pip", "poetry", "uv", "pdm", "hatch", "pipenv", "conda"),
}
_LINT = {
    "the Python code": ("ruff", "flake8", "pylint", "pyflakes", "pycodestyle", "prospector"),
    "the TypeScript code": ("eslint", "biome", "oxlint", "tslint", "xo"),
}
_VERSIONS = {
    "Python": ("3.9", "3.10", "3.11", "3.12", "3.13"),
    "Node": ("18.19", "18.20", "20.11", "20.18", "22.3", "22.11", "23.4"),
    "Postgres": ("13.14", "14.11", "15.6", "16.2", "16.4", "17.1"),
    "Go": ("1.20", "1.21", "1.22", "1.23", "1.24"),
}
_TESTCMD = ("make test", "make check", "pytest -q", "tox -e py", "nox -s tests", "just test",
            "./scripts/run-tests.sh", "hatch run test", "npm run test:unit", "pnpm vitest run",
            "bin/test --fast", "task test", "go test ./...", "cargo nextest run", "bazel test //...")
_STORES = ("Redis", "PostgreSQL", "Memcached", "DynamoDB", "S3", "RabbitMQ", "SQLite", "MongoDB",
           "Elasticsearch", "Kafka", "MinIO", "Cassandra", "OpenSearch", "NATS", "ClickHouse")
_CI = ("GitHub Actions", "GitLab CI", "CircleCI", "Jenkins", "Buildkite", "Drone", "Woodpecker",
       "Azure Pipelines", "TeamCity", "Travis CI")

FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family(
        "port",
        ("the API", "the frontend dev server", "the admin dashboard", "the metrics exporter",
         "the websocket gateway", "the docs site", "the auth service", "the gRPC server", "the webhook receiver"),
        _port,
        state=("{S} listens on {v}, locally and in the container",
               "fyi {S} runs on port {v}",
               "when you start {S} locally it's on localhost:{v}",
               "{S} binds to {v}, don't change that without telling ops",
               "we expose {S} on port {v}",
               "port for {S} is {v}"),
        change=("we had to move {S} to port {v}, {old} clashed with another container",
                "{S} port changed: it's {v} now",
                "starting today {S} listens on {v} instead of {old}",
                "I switched {S} over to {v}, please update your .env",
                "ops bumped {S} to port {v}",
                "heads up, {S} is on {v} from now on"),
        question=("which port does {S} use?", "what port is {S} on?", "remind me, what's the port for {S}?"),
        canonical="{S} listens on port {v}.",
    ),
    Family(
        "package manager", tuple(_PKG), _pool_by(_PKG),
        state=("we use {v} for {S}, the lockfile is committed",
               "{S} dependencies are installed with {v}",
               "please stick to {v} in {S}",
               "{S} is managed with {v}",
               "package manager for {S} is {v}"),
        change=("we're moving {S} from {old} to {v}",
                "{S} now uses {v}, I deleted the old lockfile",
                "switched {S} to {v} this morning",
                "from now on use {v} for {S}, not {old}",
                "we migrated {S} to {v} last sprint"),
        question=("which package manager does {S} use?", "what do we install dependencies of {S} with?",
                  "what do we use to manage packages in {S}?"),
        canonical="{S} uses {v} as its package manager.",
    ),
    Family(
        "test command", ("the unit tests", "the integration tests", "the end-to-end tests", "the smoke tests"),
        _pool(*_TESTCMD),
        state=("we run {S} with `{v}`",
               "to run {S} just do `{v}`",
               "{S}: `{v}` from the repo root",
               "the command for {S} is `{v}`",
               "CI and local both run {S} via `{v}`"),
        change=("{S} now run with `{v}`, the old command is gone",
                "we replaced `{old}` with `{v}` for {S}",
                "use `{v}` for {S} from now on",
                "I changed the command for {S} to `{v}`",
                "going forward {S} are run with `{v}`"),
        question=("how do I run {S}?", "what's the command for {S}?", "which command runs {S}?"),
        canonical="{S} are run with `{v}`.",
    ),
    Family(
        "branch", ("the default branch",), _pool("main", "master", "trunk", "develop", "mainline", "integration"),
        state=("our default branch is {v}",
               "PRs go to {v}, we don't do long-lived feature branches",
               "always branch off {v} and open the PR against it",
               "{v} is the mainline here, everything merges there",
               "merge into {v} once CI is green"),
        change=("we renamed the default branch to {v}",
                "heads up: PRs now target {v}, not {old}",
                "the default branch moved from {old} to {v}",
                "from now on everything merges into {v}",
                "we switched our mainline to {v} today"),
        question=("which branch do PRs go to?", "what's the default branch?", "which branch should I base my PR on?"),
        canonical="The default branch is {v}; PRs target it.",
    ),
    Family(
        "host", ("the staging database", "the production database", "the staging cache", "the build cache server",
                 "the internal package registry"),
        _host,
        state=("{S} lives at {v}",
               "connect to {v} for {S}",
               "{S} host is {v}",
               "fyi {S} is reachable at {v} over the VPN",
               "point your local config at {v} if you need {S}"),
        change=("{S} moved to {v} after the migration",
                "ops replaced the box, {S} is now at {v}",
                "update your config: {S} host changed to {v}",
                "{S} is served from {v} starting today",
                "we failed over {S} to {v}, the old host is decommissioned"),
        question=("what's the hostname of {S}?", "where does {S} run, which host?", "which host do I connect to for {S}?"),
        canonical="{S} is hosted at {v}.",
    ),
    Family(
        "linter", tuple(_LINT), _pool_by(_LINT),
        state=("we lint {S} with {v}",
               "{v} is our linter for {S}, run it before pushing",
               "lint {S} using {v}, nothing else",
               "{S} gets linted by {v} in CI",
               "the linter for {S} is {v}"),
        change=("we dropped {old} and lint {S} with {v} now",
                "{S} is linted with {v} from now on",
                "switched the linter for {S} to {v}",
                "replaced {old} with {v} for {S}",
                "going forward {v} lints {S}"),
        question=("which linter do we use for {S}?", "what lints {S}?", "how is {S} linted, which tool?"),
        canonical="{S} is linted with {v}.",
        retractable=True,
    ),
    Family(
        "ci", ("CI",), _pool(*_CI),
        state=("our CI runs on {v}",
               "{S} is {v}, the config lives in the repo",
               "builds go through {v}",
               "we use {v} for {S}",
               "every push triggers a {v} pipeline"),
        change=("we migrated {S} from {old} to {v}",
                "{S} moved to {v} this week",
                "we're on {v} for {S} now, {old} is shut down",
                "switched our pipelines over to {v}",
                "from now on {S} runs on {v}"),
        question=("what do we use for CI?", "which CI system runs our builds?", "where do our pipelines run?"),
        canonical="{S} runs on {v}.",
        retractable=True,
    ),
    Family(
        "owner", ("the billing module", "the auth service", "the mobile app", "the data pipeline", "the search service",
                  "the notifications service"),
        _pool(*PEOPLE),
        state=("{v} owns {S}, ask them before touching it",
               "{S} belongs to {v}",
               "anything in {S} needs a review from {v}, they own it",
               "owner of {S} is {v}",
               "{v} is responsible for {S}"),
        change=("{v} took over {S} from {old}",
                "{S} has a new owner: {v}",
                "{old} moved teams, so {v} owns {S} now",
                "ownership of {S} passed to {v}",
                "from now on {v} reviews everything in {S}"),
        question=("who owns {S}?", "who should review changes to {S}?", "who is responsible for {S}?"),
        canonical="{v} owns {S}.",
    ),
    Family(
        "version", tuple(_VERSIONS), _pool_by(_VERSIONS),
        state=("we're on {S} {v} everywhere",
               "{S} version is pinned to {v}",
               "target {S} {v}, don't use newer features",
               "prod runs {S} {v}",
               "the project needs {S} {v}, it's in the toolchain file"),
        change=("we upgraded {S} to {v}",
                "bumped {S} from {old} to {v} today",
                "{S} {v} is the new baseline",
                "we're moving to {S} {v}, {old} support is dropped",
                "the {S} version is {v} now"),
        question=("which {S} version do we target?", "what version of {S} are we on?", "which {S} do I need locally?"),
        canonical="The project uses {S} {v}.",
    ),
    Family(
        "path", tuple(_PATH_LEAVES), _path,
        state=("{S} live in {v}",
               "you'll find {S} under {v}",
               "put {S} in {v}",
               "{S} are kept in {v}",
               "{v} holds {S}"),
        change=("we moved {S} to {v}",
                "{S} live in {v} now, the old folder is deleted",
                "I relocated {S} from {old} to {v}",
                "{S} are under {v} from now on",
                "after the restructure {S} sit in {v}"),
        question=("where do {S} live?", "which folder has {S}?", "where should I put {S}?"),
        canonical="{S} live in {v}.",
    ),
    Family(
        "storage", ("user sessions", "background jobs", "uploaded files", "rate limit counters", "audit logs",
                    "webhook payloads"),
        _pool(*_STORES),
        state=("we store {S} in {v}",
               "{S} go into {v}",
               "{S} are kept in {v}",
               "{v} holds {S}",
               "{S} live in {v}, expiry is handled by the app"),
        change=("we moved {S} from {old} to {v}",
                "{S} are stored in {v} now",
                "migrated {S} over to {v}",
                "{v} replaced {old} for {S}",
                "starting this release {S} go to {v}"),
        question=("where do we store {S}?", "what holds {S}?", "which datastore keeps {S}?"),
        canonical="{S} are stored in {v}.",
        retractable=True,
    ),
]}

RETRACT = ("we no longer use {v} for {S}",
           "{v} is gone, we ripped it out of {S}",
           "drop {v} from {S}, we're not using it anymore",
           "we stopped using {v} for {S}",
           "{v} was removed from {S} last week",
           "no more {v} for {S}, it's been decommissioned")

# Propagation: a derived fact stated with the base value of its time. ``{v}`` is the base value.
DERIVED: dict[str, dict[str, object]] = {
    "port": {
        "subject": "the API",
        "state": ("the staging URL is https://staging.{dom}:{v}, same port as {S}",
                  "staging just proxies to {S}, so it's https://staging.{dom}:{v}",
                  "the health check in staging hits port {v}, i.e. the port of {S}",
                  "staging reuses the port of {S}, right now that's {v}",
                  "the load balancer forwards staging traffic to {v}, whatever {S} listens on"),
        "question": ("which port does the staging URL use?", "what port should I use for staging?",
                     "which port does the staging load balancer forward to?"),
        "oracle": "Staging uses the same port as {S}: {v}.",
        "stale_forms": ("https://staging.{dom}:{v}",),
    },
    "version": {
        "subject": "Python",
        "state": ("our Dockerfile uses python:{v}-slim, matching the {S} version",
                  "the base image follows {S}: python:{v}-slim",
                  "docker builds start FROM python:{v}-slim, same {S} as local",
                  "the container image tracks our {S} version, so it's python:{v}-slim",
                  "the container image pins {S} to whatever we use locally, currently python:{v}-slim"),
        "question": ("which Python version does the Docker image use?", "what Python is in our container image?",
                     "which python base image tag do we build from?"),
        "oracle": "The Docker image uses the project's {S} version, {v}.",
        "stale_forms": ("python:{v}-slim",),
    },
    "branch": {
        "subject": "the default branch",
        "state": ("deploys go out on every push to {v}",
                  "merging into {v} triggers the production deploy",
                  "the deploy pipeline watches {v}, our default branch",
                  "CD picks up whatever lands on {v}",
                  "prod is deployed from {v} automatically"),
        "question": ("which branch triggers the production deploy?", "what branch does the deploy pipeline watch?",
                     "pushing to which branch deploys prod?"),
        "oracle": "Production deploys from the default branch, {v}.",
        "stale_forms": (),
    },
}
DOMAINS = ("acme.dev", "shopfront.io", "ledgerly.app", "example.dev", "orbital.cloud", "pipewise.net")


def _alnum(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _hex(rng: random.Random, n: int) -> str:
    return _alnum(rng, n, "0123456789abcdef")


# Services with credentials: (service, env var, secret maker).
SECRET_SERVICES: tuple[tuple[str, str, Callable[[random.Random], str]], ...] = (
    ("Stripe", "STRIPE_SECRET_KEY", lambda r: "sk_live_" + _alnum(r, 24)),
    ("GitHub", "GITHUB_TOKEN", lambda r: "ghp_" + _alnum(r, 36)),
    ("AWS", "AWS_ACCESS_KEY_ID", lambda r: "AKIA" + _alnum(r, 16, string.ascii_uppercase + string.digits)),
    ("Slack", "SLACK_BOT_TOKEN", lambda r: f"xoxb-{r.randint(10**10, 10**11)}-{r.randint(10**10, 10**11)}-{_alnum(r, 24)}"),
    ("SendGrid", "SENDGRID_API_KEY", lambda r: f"SG.{_alnum(r, 22)}.{_alnum(r, 43)}"),
    ("Datadog", "DD_API_KEY", lambda r: _hex(r, 32)),
    ("Twilio", "TWILIO_AUTH_TOKEN", lambda r: _hex(r, 32)),
    ("the staging database", "DATABASE_PASSWORD",
     lambda r: f"{r.choice(['Tundra', 'Velvet', 'Copper', 'Maple', 'Quartz'])}-{r.choice(['Otter', 'Falcon', 'Comet', 'Lynx'])}-{r.randint(10, 99)}!"),
)
SECRET_STATE = ("here's the {svc} key so you can test locally: {secret}. the app reads it from {env}",
                "{svc} token is {secret}, put it in {env} in your .env",
                "use {secret} for {svc} for now, it goes in {env}",
                "set {env}={secret} and {svc} should work",
                "pasting the {svc} credential: {secret} (env var {env})")
SECRET_QUESTION = ("how do I configure {svc} locally?", "where does the app get the {svc} credential from?",
                   "what do I need to set up {svc}?")
SECRET_CANONICAL = "{svc} credential is read from the {env} environment variable."  # {svc} with its article

ACKS = ("Got it.", "Noted.", "Makes sense, noted.", "OK, I'll keep that in mind.", "Understood.", "Thanks, noted.")
PROJECTS = ("shop-api", "ledger", "atlas-web", "harbor", "pulse", "quarry", "beacon", "tidepool", "orchard",
            "lattice", "meridian", "foundry", "kestrel", "nimbus", "sable")
