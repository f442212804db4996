"""Measure the offline embedders: cold load, throughput, RSS, paraphrase margin, 12-question top-1.

Run from the repository root::

    .venv/bin/python -m eval.perf.embedders

Writes ``eval/results/embedders.md``. Each embedder is measured in a fresh subprocess so
that cold load and RSS are not flattered by the one measured before it.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from actors.embedder import make_embedder

RESULTS = Path(__file__).resolve().parents[1] / "results" / "embedders.md"
RERUN = ".venv/bin/python -m eval.perf.embedders"

# Twelve project facts as a memory would store them, and one question per fact in the
# words a developer would use later (little word overlap on purpose).
FACTS = [
    "The API server listens on port 9090.",
    "We deploy to production with a GitHub Actions workflow triggered by tags.",
    "Database migrations live in db/migrations and run with alembic upgrade head.",
    "The staging Postgres password is kept in Vault under secret/staging/db.",
    "Use pnpm, not npm, for installing JavaScript dependencies in this repo.",
    "Integration tests need Docker running because they start Redis in a container.",
    "Logs are shipped to Grafana Loki and kept for 14 days.",
    "The user session cookie expires after 30 minutes of inactivity.",
    "Feature flags are managed through LaunchDarkly.",
    "The nightly backup job runs at 02:00 UTC and writes to an S3 bucket.",
    "Code style is enforced by ruff with a line length of 100.",
    "The mobile app talks to the backend through GraphQL, not REST.",
]
QUESTIONS = [
    "Which port does the backend use?",
    "How do we ship a release to prod?",
    "Where are the schema changes and how do I apply them?",
    "Where can I find the credentials for the staging database?",
    "Which package manager should I use for node modules?",
    "Why do the integration tests fail when docker is stopped?",
    "How long do we retain log data?",
    "When does a logged-in user get signed out automatically?",
    "How do we toggle features on and off?",
    "When are backups taken and where are they stored?",
    "What linter and max line width do we use?",
    "What protocol does the phone app use to call the server?",
]
# (text, paraphrase, unrelated): the paraphrase must sit closer than the unrelated line.
PARAPHRASES = [
    ("the api listens on port 9090", "which port does the backend use?", "we use pnpm for packages"),
    ("run the tests with pytest -q", "how do I execute the test suite?", "the logo is blue"),
    ("the build fails because node 16 is too old", "CI breaks since our Node version is outdated",
     "the cache expires after an hour"),
    ("we store user sessions in redis", "where are login sessions kept?", "the docs are written in markdown"),
    ("deploys happen every friday afternoon", "when do we release to production?",
     "the database uses utf8 collation"),
    ("rename the config file to settings.toml", "the configuration file should be called settings.toml",
     "the frontend uses react hooks"),
    ("the staging server is out of disk space", "staging ran out of storage", "add a unit test for the parser"),
    ("don't commit secrets to git", "never push credentials into the repository", "the timeout is 30 seconds"),
    ("the login endpoint returns 500 when the password is empty", "empty password makes /login crash with a server error",
     "we moved the docs to a wiki"),
    ("bump the version before tagging a release", "increase the version number prior to creating the release tag",
     "postgres runs in a docker container"),
    ("the linter complains about unused imports", "ruff flags imports that are never used",
     "the payment webhook retries three times"),
    ("memory usage spikes when we load the whole csv", "reading the entire csv file blows up RAM",
     "the design review is on monday"),
]

_SUBJECTS = ["the api", "the worker", "the scheduler", "our CI job", "the auth service", "the web app",
             "the cache layer", "the migration", "the test suite", "the docker image", "the billing module",
             "the search index", "the CLI", "the nightly job", "the staging cluster", "the parser"]
_VERBS = ["fails", "times out", "crashes", "is slow", "leaks memory", "returns 500", "hangs", "passes again",
          "needs a restart", "logs too much", "was refactored", "was rolled back"]
_TAILS = ["after the last deploy", "when the payload is empty", "on python 3.12", "under load",
          "since we bumped numpy", "on the arm runners", "if the env var is missing", "in production only",
          "when two requests race", "because the lock file is stale", "with the new config", "on fridays"]
_ASIDES = ["", " I think it is the retry logic.", " can you take a look?", " see PR 4821.",
           " the stack trace points at utils/io.py line 88.", " let's pin the version for now.",
           " we should add a regression test before fixing it, and also document the workaround in the"
           " README so that people who hit it on their laptops know what to do."]


def devchat_sentences(n: int = 500, seed: int = 7) -> list[str]:
    """Deterministic developer-chat lines of mixed length (about 8-45 word pieces)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_TAILS)}.{rng.choice(_ASIDES)}"
        for _ in range(n)
    ]


def top1_hits(embedder_name: str) -> list[bool]:
    """For each question, whether its own fact is the nearest of the twelve."""
    emb = make_embedder(embedder_name)
    sims = emb.embed(QUESTIONS) @ emb.embed(FACTS).T
    return [int(np.argmax(row)) == i for i, row in enumerate(sims)]


def paraphrase_margins(embedder_name: str) -> list[float]:
    """cos(text, paraphrase) - cos(text, unrelated) for each triple."""
    emb = make_embedder(embedder_name)
    margins = []
    for text, para, other in PARAPHRASES:
        a, p, o = emb.embed([text, para, other])
        margins.append(float(a @ p - a @ o))
    return margins


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def measure(embedder_name: str) -> dict[str, object]:
    """Measure one embedder in this process (call it in a fresh one)."""
    sentences = devchat_sentences()
    rss0 = _rss_kib()
    t0 = time.perf_counter()
    emb = make_embedder(embedder_name)
    emb.embed(["warm up the lazy load"])
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = emb.embed(sentences)
    encode_s = time.perf_counter() - t0
    rss1 = _rss_kib()
    single = np.stack([emb.embed([s])[0] for s in sentences[:50]])
    hits = top1_hits(embedder_name)
    margins = paraphrase_margins(embedder_name)
    return {
        "name": emb.name,
        "load_s": load_s,
        "sentences_per_s": len(sentences) / encode_s,
        "rss_delta_mib": (rss1 - rss0) / 1024,
        "top1": sum(hits),
        "misses": [QUESTIONS[i] for i, hit in enumerate(hits) if not hit],
        "margin_min": min(margins),
        "margin_mean": sum(margins) / len(margins),
        "batch_vs_single_max_diff": float(np.abs(vectors[:50] - single).max()),
    }


def render(rows: list[dict[str, object]], argv: list[str]) -> str:
    lines = [
        "# Offline embedders",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, Python "
        f"{platform.python_version()}, numpy {np.__version__}; single run, expect about ±30%.",
        "Cold load includes the first embed call. Throughput: 500 developer-chat sentences,",
        "batch size 32. RSS delta: resident memory after the 500 minus before construction.",
        "",
        "| embedder | cold load (s) | sentences/s | RSS delta (MiB) | 12-question top-1 |"
        " paraphrase margin min / mean | batch vs single max diff |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['load_s']:.2f} | {r['sentences_per_s']:.0f} | "
            f"{r['rss_delta_mib']:.0f} | {r['top1']}/12 | "
            f"{r['margin_min']:.3f} / {r['margin_mean']:.3f} | {r['batch_vs_single_max_diff']:.1e} |"
        )
    lines += ["", "Questions whose own fact was not the nearest:", ""]
    for r in rows:
        misses = r["misses"]
        assert isinstance(misses, list)
        lines.append(f"- {r['name']}: " + ("; ".join(misses) if misses else "none"))
    lines += ["", "Rerun:", "", "```", " ".join([RERUN, *argv]).strip(), "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--one", help="measure one embedder in this process and print JSON")
    parser.add_argument("--embedders", default="minilm,hash", help="comma-separated names")
    parser.add_argument("--out", type=Path, default=RESULTS, help="markdown file to write")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0
    rows = []
    for name in args.embedders.split(","):
        done = subprocess.run(
            [sys.executable, "-m", "eval.perf.embedders", "--one", name],
            check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2],
        )
        rows.append(json.loads(done.stdout))
    text = render(rows, [] if argv is None else argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
