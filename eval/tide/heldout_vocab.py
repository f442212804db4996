"""Held-out vocabulary of the TIDE generator (``--variant heldout``).

Written by someone who never read the extractor or the engine, to measure how much of the
shipped scores comes from the shipped phrasings. Same families, subjects, dimensions and
probe structure as :mod:`eval.tide.vocab`; everything a developer *says* is new:

- statements, changes, retractions, derived facts, secrets and questions are fresh
  paraphrases in a casual voice (lower case, abbreviations, arrows, facts mentioned in
  passing inside a longer request), and about a quarter of them are ``"user || assistant"``
  pairs where the user only asks and the assistant's reply is what states the value;
- subjects are said through casual aliases (``{s}``: "the ws gw", "pg", "bg jobs"), the
  formal subject ``{S}`` appearing in canonical sentences and some replies;
- tool and technology pools hold different, less common real names of the same type
  (package managers, linters, CI systems, datastores, test commands, versions, people);
  ports, hosts and paths are random values of the same shapes from different parts.

Each seed draws its own subset of the wordings (:func:`draw`), so seeds 0, 7 and 13 are
three different draws of the same held-out pool.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from eval.tide.generator import Vocab
from eval.tide.vocab import Family, ValueFn


def _pool(*names: str) -> ValueFn:
    return lambda rng, subject: rng.choice(names)


def _pool_by(table: dict[str, tuple[str, ...]]) -> ValueFn:
    return lambda rng, subject: rng.choice(table[subject])


def _port(rng: random.Random, subject: str) -> str:
    return str(rng.randint(2000, 9999))


def _host(rng: random.Random, subject: str) -> str:
    prefix = rng.choice(["ora", "kiln", "wren", "heron", "pike", "moss", "flint", "reed", "tarn", "briar"])
    zone = rng.choice(["fra", "ams", "iad", "sjc", "lhr", "nrt", "syd", "gru"])
    domain = rng.choice(["corp.example.com", "internal.example.io", "infra.test", "priv.example.net",
                         "ops.example.org"])
    return f"{prefix}-{rng.randint(1, 99):02d}.{zone}.{domain}"


_PATH_LEAVES: dict[str, tuple[str, ...]] = {
    "the database migrations": ("evolutions", "dbmate", "changesets", "schema_history", "flyway/sql"),
    "the test fixtures": ("golden", "testfiles", "spec/support/data", "cassettes", "test_assets"),
    "the OpenAPI schema files": ("apispec", "openapi3", "interface/http", "docs/spec", "idl"),
    "the feature flag definitions": ("switches", "flagsets", "experiments", "gates", "config/toggles_v2"),
    "the seed files": ("sample_rows", "demo_data", "populate", "dev_seed", "starter_data"),
    "the deploy scripts": ("ship", "rollout", "ops/deploy.d", "release_tools", "runbooks/bin"),
}


def _path(rng: random.Random, subject: str) -> str:
    root = rng.choice(["pkg", "core", "srv", "repo", "code", "api", "modules", "etc", "var", "shared"])
    return f"{root}/{rng.choice(_PATH_LEAVES[subject])}"


PEOPLE = ("Wendell", "Saoirse", "Thandiwe", "Ignacio", "Radek", "Ottilie", "Kofi", "Emeka", "Linnea", "Bartosz",
          "Mireille", "Anouk", "Dagny", "Ilkka", "Soraya", "Eamon", "Leilani", "Beatriz", "Tjarda", "Oren")

_PKG: dict[str, tuple[str, ...]] = {
    "the frontend": ("jspm", "cnpm", "volta", "deno", "tnpm"),
    "the web app": ("jspm", "cnpm", "volta", "deno", "tnpm"),
    "the backend": ("rye", "pixi", "flit", "pip-tools", "micromamba"),
    "the data scripts": ("rye", "pixi", "flit", "pip-tools", "micromamba", "mamba"),
}
_LINT: dict[str, tuple[str, ...]] = {
    "the Python code": ("pylama", "bandit", "vulture", "pydocstyle", "semgrep"),
    "the TypeScript code": ("jshint", "jslint", "quick-lint-js", "rome", "jscs"),
}
_VERSIONS: dict[str, tuple[str, ...]] = {
    "Python": ("3.8.18", "3.9.20", "3.10.15", "3.11.10", "3.12.7", "3.13.1"),
    "Node": ("16.20.2", "18.20.4", "19.9.0", "20.15.1", "21.7.3", "22.9.0"),
    "Postgres": ("11.22", "12.20", "13.16", "14.13", "15.8", "16.5"),
    "Go": ("1.18.10", "1.19.13", "1.20.14", "1.21.13", "1.22.8", "1.23.2"),
}
_TESTCMD = ("nose2 -v", "ward test", "python -m unittest -q", "npx ava", "gotestsum --format dots", "earthly +test",
            "mage test", "rake spec", "uvu tests", "bats test/", "stestr run", "pants test ::")
_STORES = ("KeyDB", "Dragonfly", "ScyllaDB", "CockroachDB", "FoundationDB", "Valkey", "RethinkDB", "Pulsar",
           "SeaweedFS", "Couchbase", "TiKV", "Aerospike", "Beanstalkd", "DuckDB", "NSQ")
_CI = ("Concourse", "Bamboo", "Semaphore", "AppVeyor", "Tekton", "Cirrus CI", "GoCD", "Zuul", "Codefresh",
       "Bitbucket Pipelines")
_BRANCHES = ("canary", "stable", "devel", "rolling", "nightly")

# Casual ways to name each subject in what people type ({s}); {S} stays the formal subject.
ALIASES: dict[str, tuple[str, ...]] = {
    # ports
    "the API": ("the api", "our api", "api"),
    "the frontend dev server": ("the fe dev server", "the frontend devserver", "the local frontend server"),
    "the admin dashboard": ("the admin dash", "admin ui", "the admin panel"),
    "the metrics exporter": ("the metrics exporter", "the prom exporter", "the metrics endpoint"),
    "the websocket gateway": ("the ws gateway", "the websocket gw", "ws gw"),
    "the docs site": ("the docs site", "docs", "the docs server"),
    "the auth service": ("auth svc", "the auth service", "authsvc"),
    "the gRPC server": ("the grpc server", "grpc", "the grpc svc"),
    "the webhook receiver": ("the webhook receiver", "the hooks listener", "webhook rx"),
    # package managers
    "the frontend": ("the fe", "frontend", "the frontend repo"),
    "the web app": ("the webapp", "web", "the web app"),
    "the backend": ("the be", "backend", "the backend repo"),
    "the data scripts": ("the data scripts", "the etl scripts", "our data stuff"),
    # test commands
    "the unit tests": ("unit tests", "the unit suite", "units"),
    "the integration tests": ("integration tests", "the integ suite", "integ tests"),
    "the end-to-end tests": ("e2e tests", "the e2e suite", "end to end tests"),
    "the smoke tests": ("smoke tests", "the smoke suite", "smokes"),
    # branch
    "the default branch": ("the default branch", "the base branch", "default br"),
    # hosts
    "the staging database": ("the staging db", "stg db", "the stg database"),
    "the production database": ("the prod db", "prod database", "the primary db in prod"),
    "the staging cache": ("the staging cache", "stg cache", "the cache in staging"),
    "the build cache server": ("the build cache", "the remote cache box", "build cache server"),
    "the internal package registry": ("the internal registry", "our pkg registry", "the private registry"),
    # linters
    "the Python code": ("the python code", "our py code", "the .py files"),
    "the TypeScript code": ("the ts code", "the typescript", "our .ts files"),
    # ci
    "CI": ("ci", "our ci", "the build system"),
    # owners ("the auth service" is both a port and an owner subject: one entry above)
    "the billing module": ("billing", "the billing code", "the billing module"),
    "the mobile app": ("the mobile app", "mobile", "the ios/android app"),
    "the data pipeline": ("the data pipeline", "the etl", "data pipe"),
    "the search service": ("search", "the search svc", "search service"),
    "the notifications service": ("notifs", "the notification service", "notifications"),
    # versions
    "Python": ("python", "py", "cpython"),
    "Node": ("node", "nodejs", "node.js"),
    "Postgres": ("postgres", "pg", "postgresql"),
    "Go": ("go", "golang", "go toolchain"),
    # paths
    "the database migrations": ("the migrations", "db migrations", "migration files"),
    "the test fixtures": ("the fixtures", "test fixtures", "fixture files"),
    "the OpenAPI schema files": ("the openapi specs", "the api schema files", "openapi yamls"),
    "the feature flag definitions": ("the feature flags", "flag defs", "the flag definitions"),
    "the seed files": ("the seeds", "seed data", "the seed files"),
    "the deploy scripts": ("deploy scripts", "the deploy stuff", "the release scripts"),
    # storage
    "user sessions": ("sessions", "user sessions", "login sessions"),
    "background jobs": ("bg jobs", "the job queue", "background jobs"),
    "uploaded files": ("uploads", "user uploads", "uploaded files"),
    "rate limit counters": ("rate limit counters", "the rate limiter state", "ratelimit counters"),
    "audit logs": ("audit logs", "the audit trail", "audit events"),
    "webhook payloads": ("webhook payloads", "incoming webhooks", "webhook bodies"),
}

FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family(
        "port",
        ("the API", "the frontend dev server", "the admin dashboard", "the metrics exporter",
         "the websocket gateway", "the docs site", "the auth service", "the gRPC server", "the webhook receiver"),
        _port,
        state=("can you add a readiness probe to {s}? it's on {v} inside the pod too",
               "{s} -> :{v} (local + docker)",
               "quick one: why does curl localhost:{v} hang? that's {s}, it was fine yesterday",
               "if you're writing the compose file, {s} needs {v} mapped straight through",
               "ok so {s} is on {v}. now can you look at the cors errors",
               "fwiw {s} uses {v}, ops reserved that one for us",
               "what port did we give {s} again? || It's {v}: {S} binds there locally and in the container.",
               "set up the nginx upstream for {s} pls, the service itself listens on {v}",
               "{s} is {v}. don't ask me why, it predates me",
               "tried hitting {s} on {v} from the other laptop and the firewall ate it, any idea?"),
        change=("{old} was taken by the vpn client so {s} is on {v} now",
                "can you move {s} off {old}? it fights with my local postgres container || "
                "Done. {S} now listens on {v}; I updated docker-compose.yml and the .env example.",
                "{s}: {old} -> {v}, merged in the ops PR",
                "pls update the readme, {s} port is {v} since the infra change",
                "whoever needs {s} locally: it's on {v} after today's deploy, {old} won't answer anymore",
                "the load test kept colliding with {s}, pick a free port for it? || "
                "Moved {S} from {old} to {v} and fixed the two configs that hardcoded the old one.",
                "ok {s} finally got its own port, {v}. can you fix the e2e env to match",
                "changed my mind on {s}, let's put it on {v} instead of {old}",
                "{s} now answers on {v}, make sure the healthcheck follows",
                "the platform team renumbered everything, {s} landed on {v}"),
        question=("{s} port?", "what port is {S} listening on these days?",
                  "which port should my local config use for {S}?", "remind me where {S} listens, port-wise"),
        canonical="{S} is served on port {v}.",
    ),
    Family(
        "package manager", tuple(_PKG), _pool_by(_PKG),
        state=("in {s} it's {v}, don't run anything else or the lockfile gets mangled",
               "can you add a date library to {s}? use {v} obviously",
               "{s} deps go through {v}",
               "heads up for when you touch {s}: {v} only, the ci image doesn't even have the others",
               "how do i add a dev dependency in {s}? || "
               "In {S} you add it with {v}; the lockfile it writes is checked in, so commit that too.",
               "{v} for {s}. and please stop suggesting alternatives lol",
               "the readme for {s} is outdated but we install with {v} there",
               "i bootstrapped {s} with {v}, so stick with that when adding stuff",
               "can you regenerate the lockfile for {s}? it's a {v} project",
               "{s} = {v} for installs, the rest of the toolchain doesn't matter"),
        change=("ripped {old} out of {s}, it's {v} from here on",
                "{s} is a {v} project now, the old lockfile is gone",
                "can you migrate {s} off {old}? installs take forever || "
                "Done: {S} now installs with {v}. I removed the {old} lockfile and updated the CI step.",
                "we gave up on {old} for {s} and went with {v}",
                "new setup in {s}: {v} for everything dependency related",
                "fyi {s} switched installers, {v} now. nuke your local deps folder and reinstall",
                "{s}: {old} is out, {v} is in",
                "could you port {s}'s install scripts to {v}? || "
                "Ported. {S} uses {v} now and {old} is no longer referenced anywhere.",
                "after the toolchain meeting {s} moved to {v}",
                "update the contributing doc, {s} installs with {v} now"),
        question=("what do i install {S} deps with?", "which package manager is {S} on?",
                  "{s}: which tool for installing packages?", "how do we add dependencies in {S}, which tool?"),
        canonical="Dependencies of {S} are installed with {v}.",
    ),
    Family(
        "test command", ("the unit tests", "the integration tests", "the end-to-end tests", "the smoke tests"),
        _pool(*_TESTCMD),
        state=("{s}: `{v}`",
               "how do i kick off {s} locally? || From the repo root: `{v}`. CI runs {S} the same way.",
               "ran {s} with {v} and three failed, can you look",
               "{s} are just `{v}`, nothing fancy",
               "before you push, `{v}` has to be green, that's {s}",
               "can you add the new fixtures and then run {s}? it's {v} from the root",
               "fyi ci literally runs `{v}` for {s}, so do the same locally",
               "for {s} i usually do {v} and grab a coffee",
               "no make target for {s}, you call `{v}` directly",
               "pls wire {s} into the pre-push hook, the command is `{v}`"),
        change=("{s} moved off `{old}`, it's `{v}` now",
                "`{old}` is dead for {s}, use `{v}`",
                "can you make {s} run with {v}? the old runner is flaky || "
                "Switched: {S} now run with `{v}`; `{old}` is removed from the docs and CI.",
                "new way to run {s}: `{v}`. i updated the ci yaml already",
                "after the tooling cleanup {s} go through `{v}`",
                "{s} → `{v}` (was `{old}`)",
                "can you port {s} to the new runner and delete the old wrapper? || "
                "Done. {S} are now run with `{v}`; the wrapper around `{old}` is deleted.",
                "we don't do `{old}` for {s} anymore, it's `{v}`",
                "just so you know {s} need `{v}` now, please update your muscle memory",
                "replaced the runner for {s} with `{v}` today"),
        question=("how are {S} run here?", "{s} cmd?", "what's the invocation for {S} these days?",
                  "which command kicks off {S}?"),
        canonical="To run {S}, use `{v}`.",
    ),
    Family(
        "branch", ("the default branch",), _pool(*_BRANCHES),
        state=("PRs against {v} pls, nothing else gets reviewed",
               "branch off {v} for the fix, that's where everything lands",
               "can you rebase my branch? it's drifted || "
               "Rebased onto {v}, the default branch; two conflicts resolved in the tests.",
               "{v} is the branch everyone merges into here",
               "we only keep {v} long term, feature branches die after merge",
               "open the pr into {v} when you're done, squash merge",
               "{s} = {v}",
               "quick q, did you base this on {v}? that's {s}",
               "cherry-pick it onto {v}, that's what ci protects",
               "{v} is protected, so go through a pr"),
        change=("renamed {old} to {v}, update your remotes",
                "target {v} now, {old} is frozen",
                "can you flip the repo's default branch? || "
                "Done: the default branch is {v} now; open PRs against {old} were retargeted.",
                "{s} changed to {v} this morning, rebase if your pr still points at {old}",
                "we're merging into {v} from now, {old} is read-only",
                "{old} → {v} as the default br, the github setting is updated",
                "everything lands on {v} going forward",
                "heads up, {s} is {v} now",
                "new base branch: {v}. the rename script ran overnight",
                "can you update the ci triggers after the branch rename? || "
                "Updated the triggers: they watch {v}, which replaced {old} as the default branch."),
        question=("what do i target my PR at?", "which branch is the default one?", "what branch do i rebase on?",
                  "where do PRs get merged?"),
        canonical="PRs are opened against {v}, the default branch.",
    ),
    Family(
        "host", ("the staging database", "the production database", "the staging cache", "the build cache server",
                 "the internal package registry"),
        _host,
        state=("{s} is {v}",
               "ssh tunnel to {v} if you need {s}",
               "can you point the migration job at {s}? host is {v}",
               "my client keeps timing out on {v}, that's {s}, can you check the connection settings",
               "the env file needs {v} for {s}, otherwise it falls back to localhost",
               "{s} sits on {v}, behind the vpn",
               "where's {s} hosted? || {S} runs on {v}; you need the VPN to reach it.",
               "use {v} for {s} in the integration config pls",
               "fyi {v} = {s}. the dns name is ugly but it works",
               "grafana shows {v} ({s}) at 90% cpu, anything in our code hammering it?"),
        change=("{s} got moved to {v}, {old} is being wiped",
                "infra migrated {s}, new host {v}",
                "swap {old} for {v} everywhere we reference {s}",
                "{s} failed over last night, it's {v} now",
                "can you update our configs for the new {s} box? || "
                "Updated: {S} is now {v} in every env file; {old} no longer appears.",
                "{s} lives on {v} since the dc move",
                "old host for {s} ({old}) is gone, use {v}",
                "{s}: new hostname {v}, ping me if it doesn't resolve",
                "after the rebuild {s} answers at {v}",
                "can you chase down why {s} is unreachable? || "
                "The host changed: {S} was moved from {old} to {v}. I updated the connection string."),
        question=("what host is {S} on?", "{s} hostname?", "where do i connect for {S}?",
                  "which machine serves {S}?"),
        canonical="{S} runs on the host {v}.",
    ),
    Family(
        "linter", tuple(_LINT), _pool_by(_LINT),
        state=("{v} runs on {s} in the pre-commit hook, so keep it happy",
               "can you fix whatever {v} is complaining about in {s}?",
               "lint pass for {s} = {v}",
               "we only trust {v} for {s}, ignore the editor's built-in warnings",
               "what's failing in the lint job? || {v} flagged four issues in {S}; it's the only linter that job runs.",
               "{s} has to pass {v} before review",
               "pls add a {v} config for {s}, we never committed one",
               "run {v} over {s} and tell me how bad it is",
               "{s} gets checked with {v}, ci fails otherwise",
               "the lint step for {s}? just {v}"),
        change=("{old} was too noisy, {s} is on {v} now",
                "swapped {old} for {v} on {s}",
                "can you replace {old} in {s}'s lint setup? we want something else || "
                "Replaced: {S} is linted by {v} now; {old} and its config are removed.",
                "{s} lint: {v} from today",
                "we retired {old}, {v} does the linting for {s}",
                "new linter on {s}: {v}, expect a bunch of new warnings",
                "{s} moved to {v} for linting, ci already updated",
                "migrate the lint config of {s} pls || "
                "Migrated: {v} now lints {S}; I dropped the {old} rules that had no equivalent.",
                "dropped {old}. {s} goes through {v}",
                "heads up, {v} replaces the old linter on {s}"),
        question=("what's the linter on {S}?", "{s}, which lint tool?", "which tool do we lint {S} with?",
                  "what checks {S} for lint errors?"),
        canonical="Lint checks of {S} run through {v}.",
        retractable=True,
    ),
    Family(
        "ci", ("CI",), _pool(*_CI),
        state=("{s} is {v}, config's in the repo root",
               "can you add a lint stage to our {v} config?",
               "the {v} job for the api is red again, can you look",
               "builds run on {v}, if you need secrets ask ops",
               "which ci are we on? || We build on {v}; the pipeline config is checked into the repo.",
               "we're a {v} shop for ci",
               "{v} runs every push, including drafts",
               "pls cache the deps in {v}, builds take 12 min",
               "fyi {s} = {v}. the dashboard link is in the wiki",
               "can you speed up {s}? it's {v} and the docker step is slow"),
        change=("we moved {s} off {old}, it's {v} now",
                "{v} took over from {old} for builds",
                "can you port the pipeline off {old}? we're switching || "
                "Ported: builds now run on {v}; the {old} config is deleted.",
                "{s} migration done, everything runs on {v}",
                "the {old} license ran out so {s} lives on {v}",
                "new ci: {v}. old jobs are archived",
                "pipelines are on {v} since monday",
                "could you translate our {old} jobs for the new system? || "
                "Translated all jobs; CI runs on {v} from now on.",
                "we switched {s} to {v}",
                "builds go through {v} now, {old} is read-only"),
        question=("what ci do we use?", "where do builds run?", "which ci system is it?", "what runs our pipelines?"),
        canonical="Continuous integration runs on {v}.",
        retractable=True,
    ),
    Family(
        "owner", ("the billing module", "the auth service", "the mobile app", "the data pipeline", "the search service",
                  "the notifications service"),
        _pool(*PEOPLE),
        state=("{v} owns {s}, loop them in on anything there",
               "can you draft a pr for {s}? {v} will review, it's their area",
               "{s} is {v}'s baby",
               "ask {v} about {s}, they own it",
               "who should i ping about {s}? || {v} owns {S}, so they're the reviewer to ping.",
               "{s} → {v} (owner)",
               "{v} maintains {s}, don't merge without their ok",
               "for {s} the codeowner is {v}",
               "pls add {v} as reviewer, {s} is theirs",
               "i think {v} wrote most of {s} and still owns it, check with them first"),
        change=("{old} handed {s} over to {v}",
                "{s} is {v}'s now, {old} moved to platform",
                "can you update codeowners for {s}? ownership changed || "
                "Updated CODEOWNERS: {v} owns {S} now instead of {old}.",
                "new owner of {s}: {v}",
                "{v} picked up {s} after the reorg",
                "reviews for {s} go to {v} from now on",
                "{old} left, so {v} inherited {s}",
                "{s} changed hands, {v} has it",
                "please stop tagging {old} on {s}, it's {v}'s area now",
                "swap the reviewer on {s} prs pls || Done, {S} PRs now request {v} instead of {old}."),
        question=("who's in charge of {S}?", "who do i ask about {S}?", "whose review do i need for {S}?",
                  "{s}, who's the owner?"),
        canonical="{S} is owned by {v}.",
    ),
    Family(
        "version", tuple(_VERSIONS), _pool_by(_VERSIONS),
        state=("{s} {v} locally, same as prod",
               "can you check this works on {s} {v}? that's what we ship",
               "we pin {s} at {v}, the toolchain file has it",
               "don't use anything newer than {s} {v}",
               "what {s} does the project want? || {S} {v}; it's pinned in the toolchain file.",
               "the servers run {s} {v}, keep that in mind for syntax",
               "{s} version: {v}",
               "target {s} {v} for the new service too",
               "installed {s} {v} on the build agents, that's our baseline",
               "ci matrix only has {s} {v}, which is what we support"),
        change=("bumped {s} to {v}, {old} is eol",
                "we're on {s} {v} now",
                "can you upgrade {s} for us? {old} is getting old || "
                "Upgraded {S} from {old} to {v}: toolchain file, Dockerfile and CI matrix.",
                "{s} {old} → {v}",
                "support for {s} {old} is dropped, min is {v}",
                "ops rolled {s} {v} to all the boxes",
                "new baseline {s} {v}, please test against it",
                "could you bump the {s} pin? || Bumped: {S} is pinned to {v} now (it was {old}).",
                "moved us to {s} {v} over the weekend",
                "toolchain file says {s} {v} since this morning"),
        question=("what {S} version are we on?", "which {s} do i install?", "{S} version for this project?",
                  "what's our {S} baseline?"),
        canonical="{S} {v} is the version this project targets.",
    ),
    Family(
        "path", tuple(_PATH_LEAVES), _path,
        state=("{s} are in {v}",
               "drop the new one into {v} with the rest of {s}",
               "can you add a case for refunds? {s} live under {v}",
               "{v} has all {s}, don't scatter them",
               "where do i put {s}? || In {v}; that's where all of {S} are kept.",
               "grep {v} if you're looking for {s}",
               "{s} → {v}",
               "fyi {s} sit in {v}, the loader globs that folder",
               "can you tidy up {v}? it's where {s} are and it's a mess",
               "the tool reads {s} from {v}, so put them there"),
        change=("moved {s} from {old} to {v}",
                "{s} are in {v} now, {old} is gone",
                "can you relocate {s}? {old} is a weird spot || Moved {S} from {old} to {v} and fixed the loader path.",
                "after the monorepo shuffle {s} ended up in {v}",
                "{s} folder is {v} now, update imports",
                "new home for {s}: {v}",
                "i git mv'd {s} to {v} this morning",
                "{old} → {v} for {s}",
                "pls move {s} so the tooling finds them || Done: {S} are under {v} now; {old} is empty and removed.",
                "from today {s} go in {v}"),
        question=("where are {S}?", "what folder holds {S}?", "where do i find {S}?", "{s}, which dir?"),
        canonical="The folder for {S} is {v}.",
    ),
    Family(
        "storage", ("user sessions", "background jobs", "uploaded files", "rate limit counters", "audit logs",
                    "webhook payloads"),
        _pool(*_STORES),
        state=("{s} go to {v}",
               "{v} holds {s}, ttl is set by the app",
               "can you add an index for {s}? they're in {v}",
               "we keep {s} in {v}, ops runs it",
               "where do {s} end up? || In {v}; the app writes {S} there directly.",
               "{s}? {v}. been that way since launch",
               "pls write a cleanup job for {s} in {v}",
               "{v} is where {s} live",
               "the {v} cluster is full of {s}, can you check retention",
               "{s} → {v}, don't put them anywhere else"),
        change=("{s} moved to {v}, {old} is being drained",
                "we swapped {old} for {v} for {s}",
                "can you migrate {s} off {old}? it keeps falling over || "
                "Migrated: {S} are written to {v} now; {old} is no longer used for them.",
                "{s} land in {v} since the last release",
                "{v} replaced {old} as the store for {s}",
                "new backend for {s}: {v}",
                "{s} are on {v} now, update the runbook",
                "we cut {s} over to {v} yesterday",
                "please repoint {s}, we're retiring {old} || Repointed: {S} go to {v}; the {old} client code is deleted.",
                "{s}: {old} out, {v} in"),
        question=("where do {S} go?", "what store holds {S}?", "which database has {S}?", "{s} are kept where?"),
        canonical="{S} are persisted in {v}.",
        retractable=True,
    ),
]}

RETRACT = ("ditch {v} for {s}, nobody uses it",
           "{v} is history for {s}",
           "pulled {v} out of {s} entirely",
           "can you remove {v} from {s}? we're done with it || Removed {v} from {S} and deleted its config.",
           "no {v} on {s} anymore, fyi",
           "we killed {v} for {s} last sprint",
           "forget about {v} for {s}, that's been dropped",
           "{s} doesn't have {v} anymore, i uninstalled it",
           "stop using {v} in {s}, we turned it off")
RETRACT_ACKS = ("ok, gone.", "removed.", "sure, dropping it.", "noted, it's out.")

DERIVED: dict[str, dict[str, object]] = {
    "port": {
        "subject": "the API",
        "state": ("stg url is https://stg.{dom}:{v}, it just mirrors the api port",
                  "the staging env proxies to {s}, so https://stg.{dom}:{v}",
                  "staging healthcheck pings :{v}, i.e. whatever {s} uses",
                  "stg reuses the port of {s}, which is {v} atm",
                  "the staging lb sends traffic to {v}, same as {s}",
                  "bookmark https://stg.{dom}:{v} for staging, the port follows the api"),
        "question": ("what port does stg use?", "which port for the staging url?", "port for the staging env?"),
        "oracle": "The staging environment follows the port of {S}: {v}.",
        "stale_forms": ("https://stg.{dom}:{v}",),
    },
    "version": {
        "subject": "Python",
        "state": ("the docker image is built FROM python:{v}-alpine to match our python",
                  "base image tracks {s}: python:{v}-alpine",
                  "container uses python:{v}-alpine, same as local",
                  "Dockerfile pins python:{v}-alpine, keep it in sync with {s}",
                  "image tag is python:{v}-alpine because that's our py version"),
        "question": ("which python does the container image use?", "what's the base image tag of the docker build?",
                     "python version inside docker?"),
        "oracle": "The container image is built on {S} {v}, matching the project.",
        "stale_forms": ("python:{v}-alpine",),
    },
    "branch": {
        "subject": "the default branch",
        "state": ("anything merged to {v} ships to prod automatically",
                  "prod deploys whenever {v} moves",
                  "the cd job is wired to {v}",
                  "release automation follows {v}, which is {s}",
                  "push to {v} and it's live in ten minutes"),
        "question": ("which branch ships to prod?", "what branch does cd deploy from?",
                     "merging where triggers the prod release?"),
        "oracle": "Production is deployed from {v}, the default branch.",
        "stale_forms": (),
    },
}
DOMAINS = ("fernhill.dev", "brightloop.io", "quillstack.app", "example.test", "northwind.cloud", "tessera.net")


def _alnum(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _hex(rng: random.Random, n: int) -> str:
    return _alnum(rng, n, "0123456789abcdef")


def _uuid(rng: random.Random) -> str:
    return "-".join(_hex(rng, n) for n in (8, 4, 4, 4, 12))


SECRET_SERVICES: tuple[tuple[str, str, Callable[[random.Random], str]], ...] = (
    ("Mailgun", "MAILGUN_API_KEY", lambda r: "key-" + _hex(r, 32)),
    ("Sentry", "SENTRY_AUTH_TOKEN", lambda r: "sntrys_" + _alnum(r, 40)),
    ("Linear", "LINEAR_API_KEY", lambda r: "lin_api_" + _alnum(r, 40)),
    ("Postmark", "POSTMARK_SERVER_TOKEN", _uuid),
    ("Cloudflare", "CLOUDFLARE_API_TOKEN", lambda r: _alnum(r, 40)),
    ("Algolia", "ALGOLIA_ADMIN_KEY", lambda r: _hex(r, 32)),
    ("Mapbox", "MAPBOX_ACCESS_TOKEN", lambda r: f"pk.{_alnum(r, 60)}.{_alnum(r, 22)}"),
    ("PgBouncer", "PGBOUNCER_PASSWORD",
     lambda r: f"{r.choice(['Juniper', 'Basalt', 'Saffron', 'Cobalt', 'Heather'])}"
               f"{r.choice(['Walrus', 'Kite', 'Marten', 'Ibis'])}{r.randint(100, 999)}!"),
)
SECRET_STATE = ("my {svc} key for local testing is {secret}, the code picks it up from {env}",
                "can you get the {svc} integration running? export {env}={secret} first",
                "{env} → {secret} (that's {svc}, don't commit it)",
                "dumping this here so i don't lose it: {svc} = {secret}, env var {env}",
                "{svc} creds: {secret}. app expects them in {env}",
                "the {svc} test fails bc {env} is empty, set it to {secret}",
                "put {secret} in your .env as {env} and {svc} calls should stop 401ing",
                "why is {svc} rejecting us? i set {env} to {secret} || "
                "The {svc} client reads {env}; the value looks right, so it's probably the key's scope. "
                "I won't store it in the repo.")
SECRET_QUESTION = ("how does the app authenticate to {svc}?", "which env var holds the {svc} credential?",
                   "what do i need for {svc} locally?")
SECRET_CANONICAL = "{svc} credential lives in the {env} environment variable."  # {svc} with its article
SECRET_ACKS = ("ok, keeping that out of git.", "thanks, it stays in your local env only.",
               "got it, i won't write it anywhere in the repo.")

ACKS = ("ok.", "sure thing.", "cool, will do.", "ack.", "alright.", "on it.", "sounds good.", "yep, noted.")
PROJECTS = ("marmot", "copperline", "saltmarsh", "juniper-api", "wayfinder", "loom", "bramble", "petrel", "cinder",
            "halyard", "ostrich", "fjord", "sextant", "tamarack", "wicket")

# How many wordings of each pool a seed draws.
DRAW = {"state": 5, "change": 5, "question": 3, "retract": 4, "derived_state": 3, "derived_question": 2,
        "secret_state": 4, "secret_question": 2, "acks": 5}


def _some(rng: random.Random, xs: tuple[str, ...], k: int) -> tuple[str, ...]:
    return tuple(rng.sample(xs, min(k, len(xs))))


def draw(seed: int) -> Vocab:
    """The held-out vocabulary of ``seed``: a seeded subset of every wording pool."""
    rng = random.Random(f"tide-heldout-wordings:{seed}")
    families = {name: Family(f.name, f.instances, f.values, state=_some(rng, f.state, DRAW["state"]),
                             change=_some(rng, f.change, DRAW["change"]),
                             question=_some(rng, f.question, DRAW["question"]), canonical=f.canonical,
                             retractable=f.retractable)
                for name, f in FAMILIES.items()}
    derived = {k: dict(spec, state=_some(rng, spec["state"], DRAW["derived_state"]),  # type: ignore[arg-type]
                       question=_some(rng, spec["question"], DRAW["derived_question"]))  # type: ignore[arg-type]
               for k, spec in DERIVED.items()}
    return Vocab(families, derived, DOMAINS, PROJECTS, _some(rng, RETRACT, DRAW["retract"]), RETRACT_ACKS,
                 SECRET_SERVICES, _some(rng, SECRET_STATE, DRAW["secret_state"]),
                 _some(rng, SECRET_QUESTION, DRAW["secret_question"]), SECRET_CANONICAL, SECRET_ACKS,
                 _some(rng, ACKS, DRAW["acks"]), ALIASES, rng_prefix="tide-heldout")
