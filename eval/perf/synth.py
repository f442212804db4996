"""Synthetic but realistic inputs for ``dynmem bench perf``: memories, queries and a long history.

Memories are developer facts of the kind extraction keeps ("The billing service listens on
port 8143.", "Run the orders integration tests with `make test-int` ..."), made from about
thirty sentence templates filled with services, components, tools, paths and numbers, so
that texts are distinct and vary in wording and length. Everything is deterministic in the
seed. Every memory is active and normal-tier: a store of size N puts N vectors in FAISS and
N rows in the lexical index.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

from engine.keys import fingerprint
from engine.models import Kind, Memory, Pool
from engine.scopes import project_scope
from engine.state import stable_id

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY = 86_400_000

SERVICES = [
    "auth", "billing", "search", "orders", "inventory", "catalog", "payments", "shipping", "notifications",
    "gateway", "reporting", "analytics", "checkout", "accounts", "pricing", "recommendations", "media", "export",
    "import", "scheduler", "audit", "webhooks", "ledger", "refunds", "tax", "coupons", "reviews", "wishlist",
    "sessions", "admin", "storefront", "mailer", "sms", "geo", "fraud", "quotes", "subscriptions", "invoicing",
    "returns", "warehouse", "crm", "support", "feature-flags", "identity", "uploads", "thumbnails", "metrics",
    "tracing", "cache-warmer", "sitemap", "feeds", "partners", "loyalty", "gift-cards", "currency", "i18n",
    "chat", "docs", "status-page", "backoffice",
]
COMPONENTS = ["worker", "API", "consumer", "cron job", "admin UI", "GraphQL layer", "CLI", "migration runner",
              "event handler", "sync job", "client SDK", "health check", "rate limiter", "cache layer"]
DATABASES = ["Postgres", "MySQL", "Redis", "MongoDB", "SQLite", "DynamoDB", "ClickHouse", "Elasticsearch", "Cassandra"]
TOOLS = ["pytest", "ruff", "mypy", "black", "pnpm", "poetry", "uv", "make", "tox", "nox", "bazel", "docker compose",
         "alembic", "terraform", "helm", "kubectl", "pre-commit", "eslint", "prettier", "vitest", "jest", "cargo"]
LANGS = ["Python 3.12", "Python 3.11", "Go 1.22", "Node 20", "Node 22", "TypeScript 5.4", "Rust 1.78", "Java 21",
         "Kotlin 2.0", "Ruby 3.3"]
ENVS = ["staging", "production", "the dev cluster", "the preview environments", "CI", "the load-test cluster"]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Maya",
          "Nils", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
QUEUES = ["Kafka", "RabbitMQ", "SQS", "NATS", "Redis streams", "Pub/Sub"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
ENTITIES = ["invoice", "order", "customer", "cart", "shipment", "refund", "payout", "session", "product", "coupon",
            "review", "subscription", "ticket", "address", "payment method"]

# (template, kind). Fields: svc, comp, db, tool, lang, env, person, queue, day, entity, n, m, port, path, ver.
TEMPLATES: list[tuple[str, Kind]] = [
    ("The {svc} {comp} listens on port {port} in {env}.", Kind.FACT),
    ("The {svc} service stores {entity} records in {db}, table {svc_}_{entity_}s.", Kind.FACT),
    ("Run the {svc} tests with `{tool} {path}` before pushing.", Kind.PROCEDURE),
    ("We decided to move the {svc} {comp} from {db} to {db2} by release {ver}.", Kind.DECISION),
    ("{person} owns the {svc} {comp}; ask them before changing its schema.", Kind.FACT),
    ("The {svc} {comp} retries failed {entity} events {n} times with a backoff of {m} seconds.", Kind.FACT),
    ("{entity_cap} events from {svc} go through the {queue} topic {svc_}.{entity_}.v{n}.", Kind.FACT),
    ("Deploys of {svc} to {env} happen on {day}s after the {n}:00 standup.", Kind.PROCEDURE),
    ("Use {tool}, not {tool2}, in the {svc} repository.", Kind.PREFERENCE),
    ("The {svc} {comp} is written in {lang} and pinned in {path}.", Kind.FACT),
    ("The {svc} cache entries for {entity}s expire after {n} minutes.", Kind.FACT),
    ("Secrets for {svc} in {env} live in Vault under secret/{svc_}/{entity_}-{n}.", Kind.FACT),
    ("The {svc} rate limit is {n}00 requests per minute per API key in {env}.", Kind.FACT),
    ("Migrations for {svc} live in {path} and run with `{tool} upgrade`.", Kind.PROCEDURE),
    ("The {svc} {comp} times out after {m} seconds when {db} is slow.", Kind.FACT),
    ("{person} prefers small pull requests for {svc}, at most {n}00 changed lines.", Kind.PREFERENCE),
    ("The nightly {svc} backup starts at 0{m}:{n}0 UTC and keeps {n} days of {entity} snapshots.", Kind.FACT),
    ("Feature flag {svc_}_{entity_}_v{n} gates the new {entity} flow in {svc}.", Kind.FACT),
    ("The {svc} {comp} logs to {path} and rotates files every {n} hours.", Kind.FACT),
    ("Bug: the {svc} {comp} returns 500 when a {entity} has no {entity2}; workaround in {path}.", Kind.NOTE),
    ("The {svc} API is versioned under /api/v{n}/{entity_}s and the old v{m} routes are deprecated.", Kind.FACT),
    ("Local development of {svc} needs {db} on port {port}; start it with `{tool} up`.", Kind.PROCEDURE),
    ("We chose {queue} over {queue2} for {svc} because of ordering guarantees per {entity}.", Kind.DECISION),
    ("The {svc} {comp} health endpoint is /healthz on port {port}.", Kind.FACT),
    ("Coverage for {svc} must stay above {n}{m} percent or CI fails.", Kind.FACT),
    ("The {svc} dashboard in Grafana is named '{svc} {entity} latency {n}'.", Kind.NOTE),
    ("The {svc} service reads its config from {path} and the env var {SVC}_{ENTITY}_LIMIT={n}{m}.", Kind.FACT),
    ("{person} and {person2} review every change to the {svc} {comp}.", Kind.FACT),
    ("The {svc} {entity} export job writes CSV files to s3://acme-{svc_}-exports/{entity_}/{n}.", Kind.FACT),
    ("Release {ver} of {svc} dropped support for {lang}.", Kind.FACT),
]

QUESTIONS = [
    "which port does the {svc} {comp} listen on?",
    "where does {svc} keep {entity} data?",
    "how do I run the {svc} tests?",
    "what database will the {svc} {comp} use after the migration?",
    "who owns the {svc} {comp}?",
    "how many times does {svc} retry a failed {entity} event?",
    "which topic carries {entity} events from {svc}?",
    "when do we deploy {svc} to {env}?",
    "which package manager or tool should I use in the {svc} repo?",
    "what language is the {svc} {comp} written in?",
    "how long are {svc} cache entries for {entity}s kept?",
    "where are the {svc} secrets for {env}?",
    "what is the rate limit of the {svc} API?",
    "how do I apply the {svc} database migrations?",
    "why does the {svc} {comp} time out?",
    "how big can a pull request for {svc} be?",
    "when does the {svc} backup run?",
    "which feature flag controls the new {entity} flow in {svc}?",
    "where are the {svc} {comp} logs?",
    "is there a known bug with {entity}s in the {svc} {comp}?",
    "which version of the {svc} API should I call?",
    "what do I need to run {svc} locally?",
    "why did we pick {queue} for {svc}?",
    "what is the health check URL of the {svc} {comp}?",
    "what coverage does {svc} need in CI?",
    "which Grafana dashboard shows {svc} latency?",
    "where does {svc} read its configuration from?",
    "who reviews changes to the {svc} {comp}?",
    "where does the {svc} {entity} export go?",
    "which runtimes does the latest {svc} release support?",
]
UNRELATED = [
    "what's a good name for a variable holding retry counts?", "explain the difference between a mutex and a semaphore",
    "how do I center a div with flexbox?", "write a haiku about compilers", "what is the capital of Australia?",
    "summarise the plot of Hamlet", "how does TCP slow start work?", "what time zone is UTC+9?",
]


def _fields(rng: random.Random) -> dict[str, str]:
    svc = rng.choice(SERVICES)
    entity, entity2 = rng.sample(ENTITIES, 2)
    db, db2 = rng.sample(DATABASES, 2)
    tool, tool2 = rng.sample(TOOLS, 2)
    queue, queue2 = rng.sample(QUEUES, 2)
    person, person2 = rng.sample(PEOPLE, 2)
    slug = svc.replace("-", "_")
    return {
        "svc": svc, "svc_": slug, "SVC": slug.upper(), "comp": rng.choice(COMPONENTS), "db": db, "db2": db2,
        "tool": tool, "tool2": tool2, "lang": rng.choice(LANGS), "env": rng.choice(ENVS), "person": person,
        "person2": person2, "queue": queue, "queue2": queue2, "day": rng.choice(DAYS), "entity": entity,
        "entity_": entity.replace(" ", "_"), "entity_cap": entity.capitalize(), "ENTITY": entity.replace(" ", "_").upper(),
        "entity2": entity2, "n": str(rng.randint(1, 9)), "m": str(rng.randint(1, 9)), "port": str(rng.randint(1024, 65535)),
        "path": rng.choice(["src", "services", "apps", "deploy", "tests", "config"]) + f"/{slug}/"
        + rng.choice(["main", "settings", "schema", "ci", "migrations", "handlers"]) + rng.choice([".py", ".toml", ".yaml", "/"]),
        "ver": f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
    }


def memory_texts(n: int, seed: int = 0) -> Iterator[tuple[str, Kind]]:
    """``n`` distinct (text, kind) pairs, the same prefix for the same seed whatever ``n``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    while len(seen) < n:
        template, kind = rng.choice(TEMPLATES)
        text = template.format(**_fields(rng))
        if text not in seen:
            seen.add(text)
            yield text, kind


def make_memories(project: str, n: int, seed: int = 0, start: int = 0) -> list[Memory]:
    """Memories ``start .. n-1`` of the deterministic sequence of ``project`` (nested: size 10k contains size 1k)."""
    scope = project_scope(project)
    out: list[Memory] = []
    for i, (text, kind) in enumerate(memory_texts(n, seed)):
        if i < start:
            continue
        r = random.Random(f"{seed}:{i}")
        t = T0 + r.randint(0, 180) * DAY + r.randint(0, DAY - 1)
        fp = fingerprint(scope, "", "", text)
        step = r.randint(1, max(1, n))
        pool = Pool.M if r.random() < 0.02 else (Pool.A if r.random() < 0.3 else Pool.C)
        out.append(Memory(
            id=stable_id("m", scope, fp), scope=scope, text=text, fingerprint=fp, kind=kind, pool=pool,
            value=round(r.uniform(0.1, 1.5), 3), value_step=step, created_step=step, last_hit_step=step,
            evidence=r.randint(1, 4), source_unit_ids=(stable_id("u", project, i),), valid_from_ms=t,
            last_evidence_ms=t, recorded_at_ms=t,
        ))
    return out


def queries(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct recall queries: developer questions about the same services, one in ten unrelated."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        if rng.random() < 0.1:
            q = rng.choice(UNRELATED) + f" (#{len(out)})"
        else:
            q = rng.choice(QUESTIONS).format(**_fields(rng))
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


def repeated_history(source: Path, dest: Path, turns: int) -> int:
    """Write ``turns`` lines to ``dest`` by repeating ``source``: new request ids, sessions and shifted times.

    Returns the number of lines written.
    """
    from datetime import datetime, timezone

    from engine.history import parse_ts

    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    stamps = [parse_ts(r["ts"]) for r in rows if r.get("ts")]
    span = (max(stamps) - min(stamps) + DAY) if stamps else DAY
    written = 0
    with dest.open("w", encoding="utf-8") as fh:
        rep = 0
        while written < turns:
            for i, row in enumerate(rows):
                if written >= turns:
                    break
                new = dict(row)
                new["request_id"] = f"{row.get('request_id') or i}-rep{rep}"
                new["session"] = f"{row.get('session', 'default')}-rep{rep}"
                if row.get("ts"):
                    shifted = datetime.fromtimestamp((parse_ts(row["ts"]) + rep * span) / 1000, tz=timezone.utc)
                    new["ts"] = shifted.isoformat().replace("+00:00", "Z")
                fh.write(json.dumps(new, ensure_ascii=False) + "\n")
                written += 1
            rep += 1
    return written
