"""Development paraphrase set of the TIDE generator: new wordings and value pools per family.

Written from the task brief and :mod:`eval.tide.vocab` only (plus the ``Vocab`` dataclass of
:mod:`eval.tide.generator`), without looking at any extractor, any test or the held-out
vocabulary. It is a *development* set: its individual failures may be read and used to
improve the memory system, while the held-out set stays unread.

Same families, subjects, placeholders and canonical meanings as :mod:`eval.tide.vocab`;
every ``state``/``change``/``question`` wording, retraction, secret and acknowledgement is
a fresh paraphrase (clipped Slack style, arrows, changes mentioned in passing inside a
longer request, changes done by a teammate, passive voice, casual questions), and every
value pool (tools, CI systems, stores, people, test commands, domains, projects, hosts,
paths, versions, ports) is disjoint from the shipped one. ``{S}`` is the subject, ``{v}``
the value, ``{old}`` the value being replaced. :func:`draw` picks a deterministic subset
and order of the wordings per seed.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence

from eval.tide.generator import Vocab
from eval.tide.vocab import Family, _alnum, _hex, _pool, _pool_by

def _port(rng: random.Random, subject: str) -> str:
    low, high = rng.choice(((1025, 2999), (10000, 19999)))
    return str(rng.randint(low, high))


def _host(rng: random.Random, subject: str) -> str:
    prefix = rng.choice(["pgsql", "maria", "kv", "bld", "artif", "rds", "cache", "regy", "srv", "hx"])
    zone = rng.choice(["fra1", "sfo2", "lon3", "syd1", "ams2", "iad4", "blr1", "tor1"])
    domain = rng.choice(["corp.example.com", "int.northwind.io", "lab.internal", "priv.example.net",
                         "infra.fabrikam.dev"])
    return f"{prefix}{rng.randint(1, 60)}.{zone}.{domain}"


_PATH_LEAVES = {
    "the database migrations": ("db_migrations", "flyway/sql", "liquibase/changelog", "evolutions",
                                "schema_changes"),
    "the test fixtures": ("spec/fixtures", "__fixtures__", "golden", "mocks/data", "test-assets"),
    "the OpenAPI schema files": ("swagger", "api-specs", "oas3", "openapi-defs", "http-contracts"),
    "the feature flag definitions": ("featureflags", "flagdefs", "experiments", "switches", "launch-gates"),
    "the seed files": ("seeders", "dbseed", "demo_data", "seed-sql", "starter_rows"),
    "the deploy scripts": ("deployment", "cd-scripts", "shipit", "ops-deploy", "rollout-bin"),
}


def _path(rng: random.Random, subject: str) -> str:
    root = rng.choice(["pkg", "services", "code", "api", "web", "infra", "etc", "modules", "shared", "apps"])
    return f"{root}/{rng.choice(_PATH_LEAVES[subject])}"


PEOPLE = ("Greta", "Mei", "Rashid", "Ilse", "Tariq", "Camila", "Anders", "Hana", "Dmitri", "Beatriz", "Kofi",
          "Elif", "Niamh", "Arjun", "Lucia", "Emeka", "Astrid", "Farid", "Noor", "Kenji", "Sunniva", "Thandiwe")
# Teammates named inside wordings: never owners, so a wording never carries an owner value.
TEAMMATES = ("Joaquin", "Maeve", "Sanjay", "Oskar", "Talia", "Bongani", "Wren")

_PKG = {
    "the frontend": ("deno", "jspm", "cnpm", "vlt", "bower"),
    "the web app": ("deno", "jspm", "cnpm", "vlt", "bower"),
    "the backend": ("rye", "pip-tools", "flit", "pixi", "mamba", "buildout"),
    "the data scripts": ("rye", "pip-tools", "flit", "pixi", "mamba", "buildout", "spack"),
}
_LINT = {
    "the Python code": ("pylama", "bandit", "pydocstyle", "vulture", "flakeheaven", "semgrep"),
    "the TypeScript code": ("jshint", "jslint", "rome", "quick-lint-js", "ts-standard"),
}
_VERSIONS = {
    "Python": ("3.8.20", "3.9.21", "3.10.16", "3.11.11", "3.12.8", "3.13.2", "3.14.0"),
    "Node": ("16.20", "18.17", "19.9", "20.9", "21.7", "22.14", "23.8"),
    "Postgres": ("11.22", "12.20", "13.18", "14.15", "15.10", "16.6", "17.4"),
    "Go": ("1.16", "1.17", "1.18", "1.19", "1.25"),
}
_TESTCMD = ("make unit", "pytest -x --ff", "python -m unittest discover", "tox -p auto", "nox -R",
            "npx playwright test", "cypress run --headless", "bundle exec rspec", "./gradlew check",
            "mvn verify", "ctest --output-on-failure", "jest --ci", "vitest --silent", "behave", "rake spec")
_STORES = ("Valkey", "KeyDB", "CockroachDB", "MariaDB", "Couchbase", "ScyllaDB", "Firestore", "Bigtable",
           "etcd", "Pulsar", "Ceph", "TiDB", "Aerospike", "DragonflyDB", "Azure Blob Storage")
_CI = ("Bitbucket Pipelines", "AppVeyor", "Semaphore", "Concourse", "Tekton", "Argo Workflows", "Bamboo",
       "Codefresh", "AWS CodeBuild", "Google Cloud Build", "Harness", "Earthly")
_BRANCHES = ("stable", "devel", "primary", "rolling", "nightly", "canary")

FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family(
        "port",
        ("the API", "the frontend dev server", "the admin dashboard", "the metrics exporter",
         "the websocket gateway", "the docs site", "the auth service", "the gRPC server", "the webhook receiver"),
        _port,
        state=("{S} is up on :{v}",
               "quick note, {S} comes up on {v} once you boot it on your machine",
               "{S}: port {v}",
               "if you open localhost:{v} you should land on {S}",
               "the compose file maps {S} to {v}, host side and container side",
               "{v} is the port {S} grabs, keep that one free",
               "can you add a README section for {S}? it serves on {v} and needs the .env copied first",
               "docker ps should list {S} on {v}"),
        change=("{S}: {old} -> {v}",
                "Joaquin put {S} on {v} yesterday because something else grabbed {old}",
                "while you're in the compose file, bump {S} to {v}, {old} is taken by the new proxy",
                "{S}'s port was remapped: {v}",
                "port clash, so {S} sits on {v} now",
                "fwiw {S} isn't on {old} anymore, it's {v}",
                "we ended up putting {S} on {v}",
                "{S} was reassigned to {v} in the last infra PR"),
        question=("what's {S} served on again, port-wise?",
                  "quick one: {S} port?",
                  "which port do I curl to reach {S}?",
                  "if I want to hit {S} on my machine, what port?",
                  "what does {S} bind to?",
                  "where's {S} listening, which port?",
                  "I keep forgetting the port number of {S}, what is it?"),
        canonical="{S} is served on port {v}.",
    ),
    Family(
        "package manager", tuple(_PKG), _pool_by(_PKG),
        state=("{S} -> {v}, don't mix in other tools",
               "deps for {S} are pulled with {v}",
               "we treat {S} as a {v} project, lockfile's checked in",
               "for {S} it's {v}, please don't commit any other lockfile",
               "install {S} with {v} or the lockfile drifts",
               "could you add a CONTRIBUTING note that {S} deps are handled by {v}?",
               "installs for {S} are done with {v}",
               "we standardised on {v} for {S}"),
        change=("{S}: {old} -> {v}",
                "Maeve ported {S} to {v} last week, the {old} lockfile is gone",
                "also, while you're touching the deps, regenerate the lockfile for {S} with {v}; we're off {old}",
                "{S} got switched to {v}",
                "we dumped {old}; installs for {S} run on {v} these days",
                "as of this week, installs in {S} go via {v}",
                "the {old} setup in {S} got replaced by {v}",
                "moving forward, {v} handles deps in {S}"),
        question=("what do I install {S} deps with?",
                  "{S}: which package tool?",
                  "which tool pulls in packages for {S}?",
                  "before I add a dep to {S}, which installer do I use?",
                  "what's the package tool for {S} again?",
                  "what runs installs in {S}?"),
        canonical="Dependencies of {S} are managed with the {v} package manager.",
    ),
    Family(
        "test command", ("the unit tests", "the integration tests", "the end-to-end tests", "the smoke tests"),
        _pool(*_TESTCMD),
        state=("{S}: `{v}`",
               "`{v}` kicks off {S}",
               "for {S} I always do `{v}`, works in CI too",
               "{S} are invoked via `{v}`",
               "can you wire up a pre-push hook? {S} should be triggered with `{v}`",
               "when you want {S}, `{v}` is the entry point",
               "type `{v}` to execute {S}",
               "`{v}` is how {S} get executed"),
        change=("{S}: `{old}` -> `{v}`",
                "Sanjay rewired {S}, they launch via `{v}` now",
                "and fix the Makefile docs while you're there: {S} use `{v}`, `{old}` is retired",
                "{S} were moved onto `{v}`",
                "`{old}` is dead; `{v}` drives {S}",
                "we changed how {S} get kicked off, it's `{v}` these days",
                "{S} got a new entry point: `{v}`",
                "swap `{old}` for `{v}` when you kick off {S}"),
        question=("how do I kick off {S}?",
                  "what's the invocation for {S}?",
                  "{S} — what do I type to execute them?",
                  "which command should I use to launch {S} on my machine?",
                  "how are {S} executed these days?",
                  "I want {S} green before pushing, what's the incantation?"),
        canonical="{S} are executed with `{v}`.",
    ),
    Family(
        "branch", ("the default branch",), _pool(*_BRANCHES),
        state=("all work lands in {v}, that's our base",
               "open PRs against {v}",
               "{v} is where feature branches come from and go back to",
               "base branch: {v}",
               "we cut branches from {v} and merge back when green",
               "can you rebase this onto {v} before opening the PR? that's {S} here",
               "{S} of the repo is {v}",
               "PR target is {v}, always"),
        change=("{S}: {old} -> {v}",
                "Talia renamed {old} to {v} over the weekend, retarget your PRs",
                "{S} is {v} as of today",
                "fix the CI badge link while you're at it, {S} got renamed, {old} is now {v}",
                "{old} is frozen, new PRs go against {v}",
                "we retired {old} as {S}; use {v}",
                "{S} was switched to {v}",
                "PRs should be opened against {v} now rather than {old}"),
        question=("what do I target my PR at?",
                  "which branch is {S}?",
                  "base branch for PRs?",
                  "where does this go once it's approved?",
                  "what branch do I cut mine from?",
                  "{S} — what's it called here?"),
        canonical="{S} is {v}, and pull requests are opened against it.",
    ),
    Family(
        "host", ("the staging database", "the production database", "the staging cache", "the build cache server",
                 "the internal package registry"),
        _host,
        state=("{S}: {v}",
               "{S} is at {v}, VPN required",
               "you can reach {S} on {v}",
               "add {v} to your local settings, that's {S}",
               "{v} is {S}",
               "for anything touching {S}, the hostname is {v}",
               "could you update the sample settings file? {S} is {v}",
               "{S} resolves to {v} inside the network"),
        change=("{S}: {old} -> {v}",
                "Oskar did the move last night: {S} lives on {v}, {old} is being wiped",
                "{S} was moved onto {v}",
                "also bump the hostname in the helm values, {S} is {v} as of this morning",
                "new box for {S}: {v}",
                "{old} got retired; {S} answers on {v}",
                "fresh address for {S}: {v}",
                "cutover done, {S} points to {v}"),
        question=("which box does {S} sit on?",
                  "{S} hostname?",
                  "where do I point my client for {S}?",
                  "what's the address of {S} these days?",
                  "which machine serves {S}?",
                  "need to get into {S}, hostname please?"),
        canonical="{S} runs on the host {v}.",
    ),
    Family(
        "linter", tuple(_LINT), _pool_by(_LINT),
        state=("{S} gets checked with {v}",
               "lint for {S}: {v}",
               "run {v} on {S} before you push",
               "{v} is what we use on {S}, its config is committed alongside the code",
               "{S} has to pass {v}",
               "please add a CI step that runs {v} over {S}",
               "{S} is checked by {v}, nothing fancy",
               "we've set up {v} for {S}"),
        change=("{S} lint: {old} -> {v}",
                "Wren swapped {old} for {v} on {S} yesterday",
                "{S} is checked by {v} these days, the {old} config was deleted",
                "while you fix those imports, note {S} goes through {v} now rather than {old}",
                "{old} got swapped out; {S} uses {v}",
                "linting for {S} is {v}'s job now",
                "the lint job for {S} calls {v} now",
                "we adopted {v} for {S}"),
        question=("what's the linter on {S}?",
                  "which tool checks {S} style?",
                  "{S} lint tool?",
                  "what should I run to lint {S}?",
                  "which linter is set up on {S}?",
                  "before I push edits in {S}, what linter do I need?"),
        canonical="{S} is checked by the linter {v}.",
        retractable=True,
    ),
    Family(
        "ci", ("CI",), _pool(*_CI),
        state=("{S} = {v}",
               "pipelines are on {v}",
               "{v} does our builds and checks",
               "we're a {v} shop for {S}",
               "can you add a job for the docs build? {S} is {v}, config's in the usual folder",
               "every PR gets built by {v}",
               "{v} handles {S}",
               "our {S} provider is {v}"),
        change=("{S}: {old} -> {v}",
                "Bongani finished moving {S} to {v}, {old} is switched off",
                "{S} was migrated onto {v}",
                "port the lint job too, since {S} is {v} now and not {old}",
                "we left {old}; builds happen in {v}",
                "{S} is a {v} thing now, {old} got the boot",
                "{S} lives in {v} as of this sprint",
                "pipelines were ported to {v}"),
        question=("what's our {S}?",
                  "where do builds happen?",
                  "{S} provider — which one?",
                  "what executes the pipelines?",
                  "where do I look when a PR check fails, which {S}?",
                  "{S} platform?"),
        canonical="{S} pipelines run on {v}.",
        retractable=True,
    ),
    Family(
        "owner", ("the billing module", "the auth service", "the mobile app", "the data pipeline", "the search service",
                  "the notifications service"),
        _pool(*PEOPLE),
        state=("{S} is {v}'s",
               "{v} is the go-to for {S}, loop them in on PRs",
               "ping {v} if {S} acts up",
               "{S}: {v} owns it",
               "{S} is maintained by {v}",
               "get {v} to sign off on anything touching {S}",
               "update CODEOWNERS so {S} points at {v}",
               "{v} looks after {S}"),
        change=("{S} owner: {old} -> {v}",
                "{old} handed {S} off to {v}",
                "{S} is {v}'s now",
                "{S} was reassigned to {v}",
                "also update CODEOWNERS: {S} goes to {v}, not {old}",
                "{v} inherited {S}",
                "{S} is maintained by {v} these days",
                "after the reorg, ping {v} about {S}"),
        question=("who's the owner on {S}?",
                  "whose is {S}?",
                  "who do I ping about {S}?",
                  "who needs to approve PRs in {S}?",
                  "{S} — who maintains it?",
                  "who looks after {S}?"),
        canonical="{S} is owned by {v}.",
    ),
    Family(
        "version", tuple(_VERSIONS), _pool_by(_VERSIONS),
        state=("{S}: {v}",
               "we pin {S} at {v}",
               "{v} is the {S} we build against",
               "make sure you have {S} {v} installed on your machine",
               "{S} is {v} in every environment",
               "can you set up the devcontainer with {S} {v}?",
               "we standardise on {S} {v}",
               "the .tool-versions file locks {S} at {v}"),
        change=("{S}: {old} -> {v}",
                "Joaquin moved us to {S} {v} yesterday",
                "{S} got bumped to {v}",
                "{old} is EOL for us, {S} {v} from here",
                "rebuild your containers, {S} is {v} now and the {old} images are gone",
                "{S} {v} is live everywhere",
                "min {S} is {v} after the bump",
                "refresh the CI image too, it still has {S} {old}; we need {v}"),
        question=("what {S} do we run?",
                  "which {S} should my setup have?",
                  "what's the {S} pin?",
                  "which release of {S} are we targeting?",
                  "what {S} do I need installed?",
                  "{S} — which version again?"),
        canonical="The project targets {S} {v}.",
    ),
    Family(
        "path", tuple(_PATH_LEAVES), _path,
        state=("{S} -> {v}",
               "{S} are in {v}",
               "look under {v} for {S}",
               "{v} is the home of {S}",
               "anything new for {S} belongs in {v}, please",
               "when you add {S}, drop them in {v}",
               "can you fix the loader? {S} sit under {v} and it's looking elsewhere",
               "{S} are located at {v}"),
        change=("{S}: {old} -> {v}",
                "Maeve moved {S} into {v} during the cleanup",
                "{S} were relocated to {v}",
                "fix the import paths too, {S} left {old}, they're under {v}",
                "{old} is gone; {S} are in {v}",
                "new home for {S}: {v}",
                "{S} now reside in {v}",
                "we shuffled {S} into {v}"),
        question=("where are {S} these days?",
                  "what directory are {S} in?",
                  "path to {S}?",
                  "if I'm adding to {S}, which dir?",
                  "in which dir do I find {S}?",
                  "{S} — where are they?"),
        canonical="{S} are located in {v}.",
    ),
    Family(
        "storage", ("user sessions", "background jobs", "uploaded files", "rate limit counters", "audit logs",
                    "webhook payloads"),
        _pool(*_STORES),
        state=("{S} -> {v}",
               "{S} are persisted in {v}",
               "we put {S} into {v}",
               "{v} is the backing store for {S}",
               "{S}: {v}, TTLs are handled app-side",
               "could you add a health check for {v}? that's where {S} end up",
               "{S} get written to {v}",
               "{S} are parked in {v}"),
        change=("{S}: {old} -> {v}",
                "Sanjay migrated {S} off {old} onto {v}",
                "{S} are persisted in {v} these days",
                "update the retention docs while you're at it: {S} land in {v} now, not {old}",
                "{S} were moved into {v}",
                "we swapped the store for {S}, it's {v}",
                "{old} is out for {S}; {v} took its place",
                "since the last deploy {S} get written to {v}"),
        question=("where do {S} end up?",
                  "what's the backing store for {S}?",
                  "{S} — what store?",
                  "where are {S} persisted?",
                  "what system holds onto {S}?",
                  "if I need to inspect {S}, which store do I open?"),
        canonical="{S} are persisted in {v}.",
        retractable=True,
    ),
]}

RETRACT = ("{S}: {v} is history, don't set it up",
           "{v} is out of the picture for {S}, pulled for good",
           "{v} was retired for {S} last sprint",
           "Oskar decommissioned {v}, so that's gone for {S}",
           "{v} isn't part of the setup for {S} anymore",
           "kill any {v} config for {S}, we're done with it",
           "{S} -> no {v}. it's been scrapped",
           "while you're cleaning up, strip {v} references for {S}; we got rid of it")
RETRACT_ACKS = ("Okay, treating it as gone.", "Alright, I won't rely on it.", "Sure, scrubbed from my notes.",
                "Roger, it's out.")

# Propagation: a derived fact stated with the base value of its time. ``{v}`` is the base value.
DERIVED: dict[str, dict[str, object]] = {
    "port": {
        "subject": "the API",
        "state": ("staging URL: https://staging.{dom}:{v} (mirrors {S}'s port)",
                  "for staging just use https://staging.{dom}:{v}, it's {S}'s port",
                  "staging's health probe targets {v} because that's where {S} listens",
                  "the staging ingress forwards to {v}, mirroring {S}",
                  "https://staging.{dom}:{v} is staging; the port follows {S}",
                  "when you test against staging, go to https://staging.{dom}:{v}; it shares {S}'s port",
                  "staging piggybacks on {S}'s port, so {v} for now"),
        "question": ("staging port?", "which port do I use to hit staging?",
                     "what's the staging ingress forwarding to, port-wise?",
                     "if I open staging in the browser, which port?", "staging — which port?",
                     "port number for the staging environment?"),
        "oracle": "Staging is served on the port of {S}, {v}.",
        "stale_forms": ("https://staging.{dom}:{v}",),
    },
    "version": {
        "subject": "Python",
        "state": ("Dockerfile: FROM python:{v}-slim, in sync with {S}",
                  "the image is python:{v}-slim so it matches our {S} pin",
                  "containers build on python:{v}-slim to mirror our {S}",
                  "our base image mirrors the {S} pin: python:{v}-slim",
                  "our container build is kept in lockstep with {S}; today that means python:{v}-slim",
                  "FROM line says python:{v}-slim, bump it whenever {S} moves"),
        "question": ("which Python does our Docker image ship?", "what's the FROM tag in our Dockerfile?",
                     "Docker image Python version?", "the slim python tag we use — which one?",
                     "which interpreter version ships inside our container?", "the Dockerfile's Python — which version?"),
        "oracle": "The Docker image follows the project's {S} version, {v}.",
        "stale_forms": ("python:{v}-slim",),
    },
    "branch": {
        "subject": "the default branch",
        "state": ("prod deploys fire on every merge to {v}",
                  "the CD pipeline listens to {v}",
                  "anything landing in {v} ships to production",
                  "deploy automation keys off {v}, which is {S}",
                  "pushing to {v} rolls out to prod",
                  "production gets cut from {v}, no manual step"),
        "question": ("which branch ships to prod?", "what does CD deploy from?",
                     "merging into what triggers a prod deploy?", "which branch feeds production?",
                     "the deploy job follows which branch?", "where do I merge to get something into prod?"),
        "oracle": "Production is deployed from {S}, {v}.",
        "stale_forms": (),
    },
}
DOMAINS = ("brightcart.io", "fernhill.app", "quillstack.dev", "roundtable.cloud", "tallyhq.net", "mosswood.dev")


# Services with credentials: (service, env var, secret maker).
SECRET_SERVICES: tuple[tuple[str, str, Callable[[random.Random], str]], ...] = (
    ("OpenAI", "OPENAI_API_KEY", lambda r: "sk-proj-" + _alnum(r, 48)),
    ("GitLab", "GITLAB_TOKEN", lambda r: "glpat-" + _alnum(r, 20)),
    ("Sentry", "SENTRY_AUTH_TOKEN", lambda r: "sntrys_" + _alnum(r, 44)),
    ("Mailgun", "MAILGUN_API_KEY", lambda r: "key-" + _hex(r, 32)),
    ("Cloudflare", "CLOUDFLARE_API_TOKEN", lambda r: _alnum(r, 40)),
    ("Mapbox", "MAPBOX_ACCESS_TOKEN", lambda r: f"pk.{_alnum(r, 36)}.{_alnum(r, 22)}"),
    ("Linear", "LINEAR_API_KEY", lambda r: "lin_api_" + _alnum(r, 40)),
    ("the analytics warehouse", "WAREHOUSE_PASSWORD",
     lambda r: f"{r.choice(['Saffron', 'Glacier', 'Ember', 'Indigo', 'Basil'])}"
               f"-{r.choice(['Heron', 'Badger', 'Nebula', 'Walrus'])}#{r.randint(100, 999)}"),
)
SECRET_STATE = ("{svc} key for local testing: {secret} -> belongs in {env}",
                "{env}={secret} (that's {svc})",
                "dropping the {svc} secret here so you can try it: {secret}. {env} is where it's read from",
                "here you go, {svc}: {secret}; export it as {env}",
                "can you get the {svc} integration working? creds are {secret}, the code expects {env}",
                "{svc} creds -> {env}: {secret}",
                "Talia shared the {svc} token with me, it's {secret}, set it as {env}",
                "for {svc} put {secret} into {env} and restart")
SECRET_QUESTION = ("{svc} login for the app — where is it configured?", "where do {svc} creds go?",
                   "{svc} auth — which env var?", "what env var holds the {svc} secret?",
                   "how do I get {svc} working on my machine?", "what's needed to run {svc} on my laptop?",
                   "which variable does the code read for {svc}?")
SECRET_CANONICAL = "{svc} credential is supplied through the env var {env}."  # {svc} with its article
SECRET_ACKS = ("Cool, that never goes into git.", "Understood, the literal value stays on your machine.",
               "Sure — only the variable name goes in code.", "Thanks; won't commit that.")

ACKS = ("Cool.", "Sounds good.", "Roger that.", "Ack.", "Alright, will remember.", "Okay, good to know.",
        "Sure thing.")
PROJECTS = ("ferry", "juniper", "halyard", "marlin", "basalt", "thistle", "wicket", "cobalt", "lantern",
            "spindle", "gantry", "osprey", "tessera", "vellum", "brambleway")


def _pick(rng: random.Random, wordings: Sequence[str], k: int) -> tuple[str, ...]:
    """``k`` of ``wordings`` (all of them if fewer) in a seed-specific order."""
    return tuple(rng.sample(list(wordings), min(k, len(wordings))))


def _strings(spec: dict[str, object], key: str) -> tuple[str, ...]:
    value = spec[key]
    assert isinstance(value, tuple)
    return tuple(str(x) for x in value)


def draw(seed: int) -> Vocab:
    """The development vocabulary of ``seed``: six wordings per list, chosen and ordered per seed."""
    rng = random.Random(f"dev-{seed}")
    families = {name: dataclasses.replace(fam, state=_pick(rng, fam.state, 6), change=_pick(rng, fam.change, 6),
                                          question=_pick(rng, fam.question, 6))
                for name, fam in FAMILIES.items()}
    derived: dict[str, dict[str, object]] = {
        kind: {**spec, "state": _pick(rng, _strings(spec, "state"), 5),
               "question": _pick(rng, _strings(spec, "question"), 5)}
        for kind, spec in DERIVED.items()}
    return Vocab(
        families=families,
        derived=derived,
        domains=DOMAINS,
        projects=_pick(rng, PROJECTS, len(PROJECTS)),
        retract=_pick(rng, RETRACT, 6),
        retract_acks=_pick(rng, RETRACT_ACKS, len(RETRACT_ACKS)),
        secret_services=SECRET_SERVICES,
        secret_state=_pick(rng, SECRET_STATE, 6),
        secret_question=_pick(rng, SECRET_QUESTION, 6),
        secret_canonical=SECRET_CANONICAL,
        secret_acks=_pick(rng, SECRET_ACKS, len(SECRET_ACKS)),
        acks=_pick(rng, ACKS, len(ACKS)),
        rng_prefix="tidedev",
    )
