"""Pattern extraction for the rules client: one turn in, candidate memories out.

Pipeline per unit: clean and segment the user and assistant text (``rules_text``), drop
questions, hypotheticals, plans and memory-system talk, split sentences into clauses, then
try the extractors below in order; the first that matches a clause wins. Extractors give
a canonical key (``api port``, ``package manager``, ``test command``...) so that different
phrasings of the same subject supersede each other, and a template sentence that states
the latest value without "now" or "from now on".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from actors.llm.rules_text import (
    CATEGORIES,
    CHANGE,
    DECISION,
    MEMORY_TALK,
    STOPWORDS,
    TECH_PATTERN,
    assistant_ok,
    clauses,
    drop_plan_lists,
    is_statement,
    mask_code,
    sentences,
    strip_memory_blocks,
    strip_fillers,
    tech_category,
    tech_display,
    tech_name,
)
from engine.keys import normalize_belief, normalize_key
from engine.models import Candidate, Kind, Origin, Unit

PROMPT_VERSION = "rules-v1"
_I = re.I


@dataclass(frozen=True)
class Clause:
    text: str  # original case, fillers and "from now on" removed
    low: str
    changed: bool  # an explicit change marker: "from now on", "now", "switched"...
    remember: bool  # "remember that ...", "note that ..."
    speaker: str  # "user" or "assistant"
    explicit: bool = False  # "from now on", "going forward"...: a stated rule, not a remark


@dataclass(frozen=True)
class Finding:
    key: str
    belief: str
    kind: Kind
    text: str
    negated: bool = False
    weight: float = 0.0


# ---------------------------------------------------------------- shared value picking

_EXCLUDED_BEFORE = re.compile(
    r"(?:\bfrom|\bnot|\bno longer(?:\s+\w+)?|\binstead of|\brather than|\bwas|\bwere|"
    r"\bpreviously|\bformerly|\bold|\bused to be|\bisn't|\baway from|\bover|\breplac\w*)"
    r"\s+(?:the\s+)?(?:port\s+|on\s+|at\s+|localhost:|using\s+|use\s+)?$",
    _I,
)
_TO_BEFORE = re.compile(r"\b(?:to|with|by|in favou?r of)\s+(?:port\s+|localhost:|using\s+)?$", _I)


def _pick(text: str, matches: list[re.Match[str]]) -> re.Match[str] | None:
    """Choose the asserted value among matches: prefer ``to X``, skip ``from X``/``not X``."""
    live = [m for m in matches if not _EXCLUDED_BEFORE.search(text[: m.start()])]
    if not live:
        return None
    to = [m for m in live if _TO_BEFORE.search(text[: m.start()])]
    return to[-1] if to else live[0]


def _lower_first(phrase: str) -> str:
    """'The billing service' -> 'the billing service'; 'API base' and 'iOS app' stay."""
    first, _, rest = phrase.partition(" ")
    if first[:1].isupper() and first[1:].islower():
        first = first.lower()
    return f"{first} {rest}".strip()


def _cap(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _article_free(phrase: str) -> str:
    return re.sub(r"^(?:the|our|my|a|an|this|that|we|all)\s+", "", phrase.strip(), flags=_I)


# ---------------------------------------------------------------- subjects named by noun phrases

# Words that end a noun phrase: verbs, prepositions, adverbs and time words developers put
# around a subject ("the docs site *binds* to", "*after* the restructure").
_NP_BREAK = STOPWORDS | frozenset(
    "listens listen runs run binds bind lives live sits sit holds hold keeps keep goes go gets get "
    "moved move migrated migrate relocated switched switch bumped changed replaced failed stored kept "
    "served hosted reachable deployed located defined placed belongs belong owns own took passed needs "
    "locally today yesterday tomorrow starting after before since until once because while anymore "
    "last week sprint release everywhere again too please find put point connect port ports "
    "reviews review reviewed ask telling tell container serves serve exposes exposed responds accepts handles".split()
)
_NP_WORD = re.compile(r"[A-Za-z][\w.+-]*")


def _np_words(text: str, start: int, backwards: bool = False, limit: int = 5) -> str:
    """The noun phrase that starts (or, backwards, ends) at ``start``: up to ``limit`` words
    before an article, verb, preposition or punctuation ("the docs site binds" -> "docs site")."""
    if backwards:
        chunk = text[:start].rstrip()
        words: list[str] = []
        for raw in reversed(chunk.split(" ")):
            word = raw.strip()
            if not word or not _NP_WORD.fullmatch(word.rstrip(",:;")) or word != word.rstrip(",:;"):
                break
            if word.lower() in _NP_BREAK or len(words) >= limit:
                break
            words.insert(0, word)
        return " ".join(words)
    words = []
    for raw in text[start:].lstrip().split(" "):
        word = raw.rstrip(",:;.!)")
        if not word or not _NP_WORD.fullmatch(word) or word.lower() in _NP_BREAK or len(words) >= limit:
            break
        words.append(word)
        if word != raw:
            break  # punctuation ends the phrase
    return " ".join(words)


def _np_after_article(text: str) -> list[tuple[int, str]]:
    """Every "the/our/my X Y" phrase of the clause, with its position."""
    out = []
    for m in re.finditer(r"\b(?:the|our|my|your)\s+", text, _I):
        phrase = _np_words(text, m.end())
        if phrase:
            out.append((m.start(), phrase))
    return out


# ---------------------------------------------------------------- extractors

_PORT_CONTEXT = re.compile(
    r"\bports?\b|\blisten\w*|(?:localhost|127\.0\.0\.1|0\.0\.0\.0|[\w-]+\.[\w.-]+):\d{2,5}\b"
    r"|\b(?:runs?|running|serves?|served|serving|bound|binds?|exposed?|available|up|lives?)"
    r"\s+(?:now\s+)?(?:on|at)\s+(?:localhost:)?\d{2,5}\b"
    r"|\b(?:api|backend|server|frontend|service)\b.*\b(?:on|to|from)\s+\d{4,5}\b(?!\.\d)"
    r"|\bbinds?\s+(?:to\s+)?\d{2,5}\b",
    _I,
)
# Weaker contexts that need a service-like subject: "the docs site is on 8080", "switched X over to 8080".
_PORT_WEAK_CONTEXT = re.compile(r"\b(?:is|are|it's|'s)\s+(?:now\s+)?on\s+\d{4,5}\b(?!\.\d)|\bover\s+to\s+\d{4,5}\b(?!\.\d)", _I)
_SERVICE_HEADS = frozenset(
    "api server service site app gateway exporter dashboard receiver proxy daemon worker endpoint backend "
    "frontend ui console portal admin database db cache broker registry listener agent webhook docs "
    "storybook microservice bff collector scheduler sidecar".split()
)
_PORT_NUMBER = re.compile(r"(?<![\w.\-/])(\d{2,5})(?![\w%]|\.\d)")
_UNIT_AFTER = re.compile(
    r"^\s*(?:ms|s|secs?|seconds|minutes|mins|h|hours|mb|gb|kb|%|workers|threads|items|lines|"
    r"chars|characters|columns|retries|times|rows|requests|users|px)\b",
    _I,
)
_SERVICE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:front[- ]?end|web ?app|web ui|ui|client|vite|next\.?js|react app)\b"), "frontend"),
    (re.compile(r"\b(?:postgres\w*|psql|mysql|mariadb|database|db|mongo\w*)\b"), "database"),
    (re.compile(r"\bredis\b"), "redis"),
    (re.compile(r"\bgrpc\b"), "grpc"),
    (re.compile(r"\b(?:metrics|prometheus)\b"), "metrics"),
    (re.compile(r"\bwebsockets?\b"), "websocket"),
    (re.compile(r"\badmin\b"), "admin"),
)
_NAMED_SERVICE = re.compile(r"\b([a-z][a-z0-9-]*)[ -](?:service|server|worker|daemon|microservice)(?![\w.])")
_GENERIC_SERVICE = frozenset(
    "api backend dev web main our the this new http https local node app application rest flask "
    "express fastapi django uvicorn gunicorn a an my that test prod production staging".split()
)
_SERVICE_NAMED = re.compile(
    r"\b(?:api|backend|back[- ]end|server|service|front[- ]?end|postgres\w*|mysql|db|database|redis|"
    r"web ?app|ui|client|vite|grpc|metrics|admin)\b"
)
_PORT_TEXT = {
    "api": "The API server listens on port {n}.",
    "frontend": "The frontend dev server runs on port {n}.",
    "database": "The database listens on port {n}.",
    "redis": "Redis listens on port {n}.",
}


def _service(low: str) -> str:
    """The service the clause is about: the first one named ("the API serves /metrics on 9100")."""
    found: list[tuple[int, str]] = []
    for pattern, service in _SERVICE_RULES:
        match = pattern.search(low)
        if match:
            found.append((match.start(), service))
    for match in _NAMED_SERVICE.finditer(low):
        if match.group(1) not in _GENERIC_SERVICE and match.group(1) not in STOPWORDS:
            found.append((match.start(), match.group(1)))
            break
    api = re.search(r"\b(?:api|backend|back[- ]end|rest)\b", low)
    if api:
        found.append((api.start(), "api"))
    if found:
        return min(found)[1]
    if re.search(r"\bdev server\b", low):
        return "frontend"
    return "api"


_ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


def _env_service_word(match: re.Match[str]) -> str:
    """`TEST_DB_URL` -> "db", `VITE_API_URL` -> "api": the word before the URL/HOST/PORT suffix."""
    parts = match.group(0).split("_")
    if len(parts) >= 2 and parts[-1] in {"URL", "URI", "HOST", "PORT", "ADDR", "ADDRESS", "DSN"}:
        return parts[-2]
    return " ".join(parts)


def _rule_service(low: str) -> str:
    """The known service a phrase names ("admin dashboard" -> "admin"), or ""."""
    found: list[tuple[int, str]] = []
    for pattern, service in _SERVICE_RULES:
        match = pattern.search(low)
        if match:
            found.append((match.start(), service))
    for match in _NAMED_SERVICE.finditer(low):
        if match.group(1) not in _GENERIC_SERVICE and match.group(1) not in STOPWORDS:
            found.append((match.start(), match.group(1)))
            break
    api = re.search(r"\b(?:api|backend|back[- ]end|rest)\b", low)
    if api:
        found.append((api.start(), "api"))
    return min(found)[1] if found else ""


def _port_subject(text: str) -> tuple[str, str]:
    """(service key, phrase) of the service a port clause names, for ANY service name:
    "the docs site binds to 5499" -> ("docs site", "docs site"). ("", "") when none is named."""
    text = _PORT_NUMBER.sub(" ", text)
    phrases = [p for _, p in _np_after_article(text)]
    if not phrases:
        verb = re.search(r"\b(?:listens|runs|binds|is|are|serves|lives)\b", text, _I)
        if verb:
            phrases = [p for p in [_np_words(text, verb.start(), backwards=True)] if p]
    for phrase in phrases:
        low = phrase.lower()
        if _HOSTNAME.fullmatch(low) or re.search(r"\b(?:url|dsn|uri|env|vpn|config)\b", low):
            continue
        rule = _rule_service(low)
        if rule:
            return rule, phrase
        if all(w in _GENERIC_SERVICE or w in {"server", "service", "api"} for w in low.split()):
            return "", ""
        return normalize_key(low), phrase
    return "", ""


def _port(c: Clause) -> Finding | None:
    weak = False
    if not _PORT_CONTEXT.search(c.low):
        if not _PORT_WEAK_CONTEXT.search(c.low):
            return None
        weak = True
    nums = [
        m
        for m in _PORT_NUMBER.finditer(c.low)
        if 1 <= int(m.group(1)) <= 65535 and not _UNIT_AFTER.match(c.low[m.end() :])
    ]
    chosen = _pick(c.low, nums)
    if chosen is None:
        return None
    port = chosen.group(1)
    # `TEST_DB_URL` names its service too: read an environment variable as its service word
    words = _ENV_NAME.sub(_env_service_word, c.text).lower()
    if not _SERVICE_NAMED.search(words) and re.search(r"\b(?:url|dsn|uri|connection string)\b", words):
        return None  # "the fallback URL in env.py to port 5433": which service is unknown
    # `TEST_DB_URL` names its service itself; otherwise the clause's subject phrase does
    named, phrase = ("", "") if _ENV_NAME.search(c.text) else _port_subject(c.text)
    if weak and not (named and (named in _PORT_TEXT or phrase.lower().split()[-1] in _SERVICE_HEADS
                                or _rule_service(phrase.lower()))):
        return None  # "the fix is on 1234": only a service is "on" a port
    # A clause that names a service is about that service, whatever its name; only a clause
    # naming none ("it runs on 8080") defaults to the API.
    service = named or _service(_PORT_NUMBER.sub(" ", words))
    if service in _PORT_TEXT or not phrase:
        text = _PORT_TEXT.get(service, "The {s} service listens on port {n}.").format(n=port, s=service)
    else:
        text = f"The {_lower_first(phrase)} listens on port {port}."
    return Finding(f"{service} port", port, Kind.FACT, text)


_EXE = (
    r"(?:pytest|make|npm|npx|pnpm|yarn|bunx?|cargo|go|python3?|uvx?|poetry|tox|nox|just|"
    r"\./[\w./-]+|bash|sh|docker(?:-compose| compose)?|kubectl|helm|terraform|ansible-playbook|"
    r"gradle|\./gradlew|mvn|dotnet|mix|bundle|rake|rails|jest|vitest|deno|node|tsc|ruff|mypy|"
    r"eslint|prettier|black|alembic|flask|django-admin|php|composer|cmake|ctest|bazel|nx|turbo|"
    r"hatch|pdm|pip|vercel|flyctl|fly|heroku|git|playwright|cypress)"
)
_BACKTICKED = re.compile(r"`([^`]+)`")
_STARTS_EXE = re.compile(rf"^{_EXE}\b", _I)
_BARE_COMMAND = re.compile(
    rf"\b(?:run|runs|running|with|via|using|command is(?: now)?|is(?: now)?|:)\s+"
    rf"({_EXE}(?:\s+(?!(?:for|to|instead|from|now|when|before|after|and|or|if|so|because|"
    rf"in|on|the)\b)[\w./:=@%+-]+){{0,5}})",
    _I,
)
_PURPOSES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (name, re.compile(pattern, _I), text)
    for name, pattern, text in (
        ("type check", r"\btype[- ]?check\w*", "To type-check the code, run `{c}`."),
        ("test", r"\b(?:tests?|testing|test suite|specs?|e2e)\b", "To run the tests, run `{c}`."),
        ("lint", r"\blint\w*", "To lint the code, run `{c}`."),
        ("format", r"\bformat\w*", "To format the code, run `{c}`."),
        ("deploy", r"\bdeploy\w*|\bship(?:ping)? to prod", "To deploy, run `{c}`."),
        ("migration", r"\bmigrat\w*", "To run the database migrations, run `{c}`."),
        ("build", r"\bbuild\w*|\bcompil\w*", "To build the project, run `{c}`."),
        ("install", r"\binstall\w*|\bset ?up\b|\bbootstrap\w*", "To install dependencies, run `{c}`."),
        ("release", r"\brelease\w*|\bpublish\w*", "To publish a release, run `{c}`."),
        ("benchmark", r"\bbench\w*", "To run the benchmarks, run `{c}`."),
        ("seed", r"\bseed\w*\s+(?:the\s+)?(?:db|database|data|fixtures)\b|\bseed (?:script|command)\b",
         "To seed the database, run `{c}`."),
        (
            "dev",
            r"\bdev server\b|\bstart\w*\b|\blocally\b|\bserve\b|\bdev mode\b",
            "To start the app locally, run `{c}`.",
        ),
    )
)
_RUN_WORD = re.compile(r"\b(?:run|runs|running|execute|command|cmd|script|use|using|with|via)\b|:", _I)


_NARROWED = re.compile(r"\s-k\s|::|\s(?:[\w.-]+/[\w./-]*|[\w-]+\.(?:py|ts|js))(?:\s|$)")
_JUST_ADVERB = re.compile(rf"^just\s+(?={_EXE}\b)", _I)


_TEST_RUNNER = re.compile(r"^(?:\S+\s+)?(?:run\s+)?(?:pytest|jest|vitest|mocha|rspec|ctest|tox|nox)\b", _I)


def _purposes_in(text: str, command: bool = False) -> list[str]:
    found = [name for name, pattern, _ in _PURPOSES if pattern.search(text)]
    if command and "test" not in found and _TEST_RUNNER.match(text):
        found.insert(0, "test")  # `pytest -x -q`, `uv run pytest`: a test runner
    return found


def _command_finding(command: str, purpose: str) -> Finding | None:
    if command.lower().startswith("git ") and purpose not in {"deploy", "release"}:
        return None  # a version-control operation, not how the project is built or tested
    if purpose == "test" and _NARROWED.search(f" {command} "):
        return None  # "pytest -k intent", "pytest tests/payments": a one-off subset, not *the* command
    template = next(t for name, _, t in _PURPOSES if name == purpose)
    return Finding(f"{purpose} command", normalize_belief(command), Kind.PROCEDURE, template.format(c=command))


def _command(c: Clause) -> Finding | None:
    spans = list(_BACKTICKED.finditer(c.text))
    previous_end = 0
    for i, span in enumerate(spans):
        command = span.group(1).strip()
        lead = c.text[previous_end : span.start()]
        previous_end = span.end()
        if not (_STARTS_EXE.match(command) or (" " in command and _RUN_WORD.search(c.text) and command != "code")):
            continue
        # The purpose stated just before this command ("lint with `...`"), else the command's
        # own words (`pnpm build`), else the words after it ("`...` for tests").
        lead_p, own_p = _purposes_in(lead), _purposes_in(command, command=True)
        both = [p for p in lead_p if p in own_p]
        if both:
            purpose = both[0]
        elif len(lead_p) == 1 or (lead_p and not own_p):
            purpose = lead_p[0]
        elif own_p:
            purpose = own_p[0]
        elif _purposes_in(c.text[span.end() : spans[i + 1].start() if i + 1 < len(spans) else None]):
            purpose = _purposes_in(c.text[span.end() : spans[i + 1].start() if i + 1 < len(spans) else None])[0]
        else:
            continue
        return _command_finding(command, purpose)
    if spans:
        return None
    bare = _BARE_COMMAND.search(c.text)
    if not bare:
        return None
    command = _JUST_ADVERB.sub("", bare.group(1).strip())
    rest = c.text.replace(bare.group(1), " ")
    for where in (rest, command):
        found = _purposes_in(where)
        if found:
            return _command_finding(command, found[0])
    return None


_BRANCH = re.compile(
    r"\b(?P<q>default|main|primary|base|trunk|release|production|prod|staging|integration)\s+"
    r"branch\s+(?:is\s+(?:now\s+|called\s+|named\s+)?|(?:was\s+|has been\s+|got\s+)?"
    r"(?:renamed|changed|moved|switched)\s+(?:from\s+`?[\w./-]+`?\s+)?to\s+|(?:should|will|must)\s+be\s+|"
    r"=\s*|:\s*|to\s+)`?(?P<b>[\w./-]+)`?",
    _I,
)
_BRANCH_SET = re.compile(
    r"\b(?:switch|change|set|move|rename)\w*\s+(?:the\s+)?(?P<q>default|main|base|primary)\s+branch\s+"
    r"(?:from\s+`?[\w./-]+`?\s+)?to\s+`?(?P<b>[\w./-]+)`?",
    _I,
)
_BRANCH_RENAME = re.compile(
    r"\brenam\w*\s+(?:the\s+)?`?(?P<old>[\w./-]+)`?\s+(?:branch\s+)?to\s+`?(?P<b>[\w./-]+)`?", _I
)
_BRANCH_NAMES = frozenset({"master", "main", "trunk", "develop", "dev", "development", "default"})


# The branch work lands on, in the words developers use for it: "PRs go to X", "merge into X
# once CI is green", "everything merges into X", "branch off X", "X is the mainline", "our
# mainline is X", "PRs now target X, not Y". All give the `default branch` key.
_BRANCH_NAME = r"`?(?P<b>[A-Za-z][\w./-]*)`?"
_BRANCH_TARGET = re.compile(
    r"(?:\b(?:prs|pull requests|merge requests|mrs|everything|all (?:prs|changes|work))\s+(?:now\s+)?"
    r"(?:go(?:es)?\s+(?:in)?to|merges?\s+(?:in)?to|target|targets|land|lands)\s+(?:on\s+)?"
    r"|^(?:always\s+)?(?:merge|land)\s+(?:(?:it|them|prs|everything|your prs?)\s+)?(?:in)?to\s+"
    r"|^(?:always\s+)?(?:branch|fork)\s+(?:off|from)\s+(?:of\s+)?"
    r"|\b(?:mainline|trunk branch|integration branch)\s+(?:is|=|:|to)\s+(?:now\s+)?)" + _BRANCH_NAME,
    _I,
)
_BRANCH_IS_MAINLINE = re.compile(r"^`?(?P<b>[A-Za-z][\w./-]*)`?\s+is\s+(?:now\s+)?(?:the|our)\s+(?:mainline|main branch|default branch)\b", _I)


def _branch_target(c: Clause) -> Finding | None:
    match = _BRANCH_TARGET.search(c.text) or _BRANCH_IS_MAINLINE.search(c.text)
    if not match:
        return None
    branch = match.group("b").rstrip(".,")
    if branch.lower() in STOPWORDS or branch.lower() in {"production", "prod", "staging", "main-line"} \
            or _PATH_LIKE.search(branch) and "/" in branch and not branch.startswith(("release/", "feature/")):
        return None
    return Finding("default branch", normalize_belief(branch), Kind.FACT, f"The default branch is `{branch}`; PRs target it.")


_PATH_LIKE = re.compile(r"/")


def _branch(c: Clause) -> Finding | None:
    match = _BRANCH_SET.search(c.text) or _BRANCH.search(c.text)
    if not match and not _BRANCH_RENAME.search(c.text):
        return _branch_target(c)
    if match:
        qualifier = match.group("q").lower()
        branch = match.group("b")
    else:
        rename = _BRANCH_RENAME.search(c.text)
        if not rename or not ("branch" in c.low or rename.group("old").lower() in _BRANCH_NAMES):
            return None
        qualifier, branch = "default", rename.group("b")
    if qualifier in {"main", "primary", "base", "trunk", "default"}:
        qualifier = "default"
    if qualifier == "prod":
        qualifier = "production"
    branch = branch.rstrip(".")
    return Finding(f"{qualifier} branch", normalize_belief(branch), Kind.FACT, f"The {qualifier} branch is `{branch}`.")


_ENV_SET = re.compile(
    r"\b(?:set|export|define)\s+(?:the\s+)?(?:env(?:ironment)? var(?:iable)?\s+)?`?(?P<n>[A-Z][A-Z0-9_]{2,})`?"
    r"\s*(?:to|=)\s*`?(?P<v>[^\s`]+)`?"
)
_ENV_IS = re.compile(
    r"`?(?P<n>[A-Z][A-Z0-9]*_[A-Z0-9_]+)`?\s*(?:=|is(?: now)?|should be|must be|needs to be|"
    r"(?:is\s+)?set to)\s*`?(?P<v>[^\s`]+)`?"
)


def _env(c: Clause) -> Finding | None:
    match = _ENV_SET.search(c.text) or _ENV_IS.search(c.text)
    if not match:
        return None
    name, value = match.group("n"), match.group("v").rstrip(".,;")
    if not value or value.lower() in STOPWORDS or value.lower() in {"something", "whatever", "yours"}:
        return None  # "set `DATABASE_URL` to your own credentials"
    return Finding(
        f"{name} env var",
        normalize_belief(value),
        Kind.FACT,
        f"The environment variable `{name}` is set to `{value}`.",
    )


_HOST_VALUE = r"`?(?P<v>(?:https?|wss?|postgres(?:ql)?|redis|mysql|mongodb)://[^\s`]+|[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:/[^\s`]*)?|localhost(?::\d+)?)`?"
_HOST = re.compile(
    r"\b(?P<q>(?:[\w-]+\s+){0,2}?)(?P<h>host ?names?|hosts?|base urls?|urls?|domains?|endpoints?|uris?|dsn|address)"
    r"\s+(?:is\s+(?:now\s+)?|are\s+(?:now\s+)?|(?:was\s+|has been\s+)?(?:moved|changed|switched)\s+to\s+|=\s*|:\s*|"
    r"points? to\s+)" + _HOST_VALUE,
    _I,
)
_HOST_AT = re.compile(
    r"^(?P<q>(?:the\s+)?[\w-]+(?:\s+[\w-]+)?)\s+(?:is|are|lives?|runs?)\s+(?:now\s+)?(?:hosted\s+|deployed\s+|served\s+)?"
    r"(?:at|on)\s+" + _HOST_VALUE,
    _I,
)


_HOSTNAME_VALUE = r"`?(?P<v>[a-z0-9][\w-]*(?:\.[\w-]+)*\.[a-z][a-z-]+(?::\d{2,5})?)`?(?![\w/.-]|\.\w)"
_FILE_EXTENSIONS = frozenset(
    "py js ts tsx jsx go rs rb java toml yaml yml json md cfg ini sql sh env lock txt css html vue svelte "
    "log csv xml conf pem key".split()
)
_HOST_SUBJECT_TAIL = re.compile(r"\s+(?:host ?name|host|server|box|machine|instance|vm)$", _I)
# One key per subject, whatever the verb: "X lives at H", "X is reachable at H", "connect to H
# for X", "point your config at H if you need X", "X moved to H", "X host changed to H",
# "failed over X to H", "X is H" all give `<X> host`.
_HOST_FOR = re.compile(
    r"\b(?:connect|point|talk|ssh|go|use)\b(?:\s+[\w.]+){0,3}?\s+(?:to|at|into)\s+" + _HOSTNAME_VALUE
    + r"\s+(?:for|if you need|when you need|to reach|to get to|to talk to)\s+(?P<s>.+)$",
    _I,
)
_HOST_MOVE = re.compile(
    r"\b(?:failed over|moved|migrated|relocated|cut over|switched|pointed)\s+(?P<s>(?:the|our)\s+.+?)\s+(?:over\s+)?to\s+"
    + _HOSTNAME_VALUE,
    _I,
)
_HOST_VERB = re.compile(
    r"\s(?:(?:host ?name|host|address)\s+)?(?:(?:has\s+)?(?:moved|migrated|changed|switched|failed over|been moved)\s+to|"
    r"(?:lives?|runs?|sits?|is|are|resides?)(?:\s+now)?(?:\s+(?:reachable|hosted|served|deployed|running|available|located))?"
    r"(?:\s+(?:at|on|from))?|=|:)\s+" + _HOSTNAME_VALUE,
    _I,
)


def _host_subject(c: Clause) -> tuple[str, str] | None:
    for pattern in (_HOST_FOR, _HOST_MOVE):
        match = pattern.search(c.text)
        if match:
            subject = match.group("s")
            subject = subject[subject.index(" ") + 1 :] if re.match(r"(?:the|our|your)\s", subject, _I) else subject
            phrase = _np_words(subject, 0)
            if phrase:
                return phrase, match.group("v")
    match = _HOST_VERB.search(c.text)
    if match:
        phrase = _np_words(c.text, match.start() + 1, backwards=True)
        if phrase:
            return phrase, match.group("v")
    return None


def _host(c: Clause) -> Finding | None:
    found = _host_subject(c)
    if found and found[1].rsplit(".", 1)[-1].split(":")[0].lower() not in _FILE_EXTENSIONS:
        subject = _lower_first(_article_free(found[0]))
        stripped = _HOST_SUBJECT_TAIL.sub("", subject).strip()
        words = (stripped or subject).lower().split()
        if words and words[0] not in _NOT_SUBJECTS and not _ENV_NAME.fullmatch(found[0]) \
                and not (len(words) == 1 and words[0] in {"it", "this", "that", "url", "link", "version", "file"}):
            key = normalize_key(f"{stripped or subject} host")
            key = {"db host": "database host"}.get(key, key)
            value = found[1]
            text = f"The {subject} host is {value}." if subject == stripped else f"The {subject} is hosted at {value}."
            return Finding(key, normalize_belief(value), Kind.FACT, text)
    match = _HOST.search(c.text)
    if match:
        qualifier = _article_free(match.group("q")).strip()
        head = match.group("h").lower().replace("hostname", "host").replace(" ", "")
        head = {"hosts": "host", "urls": "url", "domains": "domain", "endpoints": "endpoint",
                "baseurl": "base url", "baseurls": "base url", "uris": "uri", "hostnames": "host",
                "hostnames ": "host"}.get(head, head)
    else:
        match = _HOST_AT.search(c.text)
        if not match or not re.search(r"[./]", match.group("v")):
            return None
        qualifier = _article_free(match.group("q"))
        head = "url" if "://" in match.group("v") else "host"
    value = match.group("v").rstrip(".,;")
    if qualifier[:1].isupper() and qualifier[1:2].islower():
        qualifier = qualifier[:1].lower() + qualifier[1:]
    phrase = f"{qualifier} {head}".strip()
    return Finding(normalize_key(phrase), normalize_belief(value), Kind.FACT, f"The {phrase} is {value}.")


_VERSIONED = (
    r"python|node(?:\.?js)?|ruby|java|golang|go|rust|typescript|react|django|postgres(?:ql)?|php|"
    r"kotlin|swift|deno|bun|next(?:\.js)?|vue|angular|rails|flask|fastapi|pydantic|numpy|pandas|"
    r"ubuntu|debian|alpine|terraform|elixir|erlang|scala|dotnet|\.net|gcc|clang|cuda|tensorflow|"
    r"pytorch|torch|spring boot|laravel|express|webpack|vite|jest|pytest|eslint|tailwind|redis|"
    r"mysql|mongodb|kubernetes|k8s|ruff|mypy|sqlalchemy|prisma|electron|flutter|dart|lua|perl|zig"
)
_VERSION_NUM = r"v?(?P<ver>\d+(?:\.(?:\d+|x))*(?:-?(?:rc|beta|alpha|lts)\d*)?|lts)"
_VERSION = re.compile(rf"(?<![\w.-])(?P<name>{_VERSIONED})(?:\s+version)?\s*(?:@|=|==|:)?\s*{_VERSION_NUM}(?![\w.])", _I)
_VERSION_TO = re.compile(
    rf"\b(?:upgrad|bump|pin|downgrad|updat|mov|migrat|switch)\w*\s+(?:the\s+)?(?P<name>[\w.@/-]+?)"
    rf"(?:\s+version)?\s+(?:from\s+v?[\w.]+\s+)?(?:to|at)\s+{_VERSION_NUM}(?![\w.])",
    _I,
)
_VERSION_CONTEXT = re.compile(
    r"\b(?:on|use[sd]?|using|upgrad\w*|bump\w*|pin\w*|target\w*|requir\w*|runs?|running|mov\w*|"
    r"migrat\w*|switch\w*|downgrad\w*|version|stay\w*|stick\w*|need\w*|standardi\w*|support\w*|"
    r"now|is|are)\b",
    _I,
)
_NAME_CANON = {"nodejs": "node", "node.js": "node", "golang": "go", "postgresql": "postgres",
               ".net": "dotnet", "next": "next.js", "k8s": "kubernetes", "torch": "pytorch"}
_VERSION_DISPLAY = {"node": "Node", "python": "Python", "go": "Go", "typescript": "TypeScript",
                    "dotnet": ".NET", "java": "Java", "ruby": "Ruby", "rust": "Rust", "php": "PHP"}


def _version(c: Clause) -> Finding | None:
    if not _VERSION_CONTEXT.search(c.low):
        return None
    match = _VERSION_TO.search(c.text)
    if match is None:
        found = list(_VERSION.finditer(c.text))
        match = _pick(c.text, found)
        if match is None:
            return None
        # "python from 3.11 to 3.12": the value after "to" wins
        tail = re.search(rf"\bto\s+{_VERSION_NUM}(?![\w.])", c.text[match.end():], _I)
        version = tail.group("ver") if tail else match.group("ver")
    else:
        version = match.group("ver")
    raw_name = match.group("name")
    name = _NAME_CANON.get(raw_name.lower(), raw_name.lower())
    if name in {"port", "to", "the", "version"} or not re.search(r"[a-z]", name):
        return None
    display = _VERSION_DISPLAY.get(name, tech_display(name) if tech_category(name) else raw_name)
    return Finding(f"{name} version", normalize_belief(version), Kind.FACT, f"The project uses {display} {version}.")


_NEGATION = re.compile(
    r"\b(?:dropped|drop|removed|remove|got rid of|get rid of|ditched|ditch|retired|no longer use[sd]?|"
    r"no longer need|no longer using|stopped using|stop using|don't use|do not use|doesn't use|"
    r"does not use|aren't using|are not using|not using|never use|avoid|killed|deprecated|"
    r"(?:we|to|will|'ll|should|must|can)\s+sunset|sunsetted|sunsetting|"
    r"moved (?:away )?(?:off|away from)|uninstalled|no more|ripped out|tore out|phased out|ditched)\s+(?:the\s+|our\s+|any\s+)?",
    _I,
)
# A removal told after the thing: "pycodestyle is gone", "X was removed from CI last week".
_NEGATION_AFTER = re.compile(
    r"\s+(?:is|are|was|were|has been|have been|got|just got)\s+(?:now\s+)?(?:completely\s+|fully\s+)?"
    r"(?:gone|removed|dropped|deprecated|decommissioned|retired|ripped out|uninstalled|deleted|dead|phased out)\b",
    _I,
)
_NEGATED_THING = re.compile(
    r"(?P<t>[\w.+#/-]+(?:\s+[\w.+#/-]+){0,2}?)(?=\s+(?:anymore|any more|now|from|for|in favou?r|"
    r"because|since|as|and|entirely|completely|altogether|dependency|dependencies|service|package|"
    r"library|support|container|containers|integration)\b|\s*[,.;!]|\s*$)",
    _I,
)
_THING_SUFFIX = re.compile(r"\s+(?:dependency|dependencies|service|package|library|lib|support|container|containers|integration)$", _I)


_STORE_CATEGORIES = frozenset({"database", "cache", "object storage", "search engine"})
_THING = r"(?P<t>[a-z][a-z-]{2,})"
_STORED_BEFORE = re.compile(  # the words just before the store's name
    rf"(?:\b(?:store|stores|stored|storing|keep|keeps|kept|put|puts|persist|persists|save|saves|saved)\s+"
    rf"(?:the\s+|our\s+|all\s+)?{_THING}|\b{_THING.replace('<t>', '<t2>')}\s+"
    rf"(?:(?:are|is|get|gets|were|was|will be|do|does)\s+)?(?P<neg>no longer\s+|not\s+|never\s+)?(?:now\s+)?"
    rf"(?:stored|kept|persisted|saved|go|goes|live|lives|stay|stays|move|moves|moved|belong|belongs|sit|sits)"
    rf"(?:\s+(?:now|back))?(?:\s+from\s+[\w.-]+)?)\s+(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORED_AFTER = re.compile(rf"^\s+for\s+(?:the\s+|our\s+|all\s+)?{_THING}\b", _I)
_NOT_THINGS = STOPWORDS | CATEGORIES | frozenset(
    "data everything anything stuff things thing caching cache storage persistence now it them "
    "files file tests test development dev production prod local everyone us".split()
)


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


_STORE_KINDS = _STORE_CATEGORIES | {"message queue"}
_STORE_VERB_BEFORE = re.compile(
    r"\b(?:store|stores|stored|storing|keep|keeps|put|puts|persist|persists|save|saves|move|moved|migrate|migrated|"
    r"shift|shifted|write|writes)\s+(?P<t>.+?)\s+(?:(?:over\s+)?from\s+\S+(?:\s+\S+)?\s+)?(?:over\s+)?"
    r"(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORE_PASSIVE_BEFORE = re.compile(
    r"\s(?:(?:are|is|get|gets|were|was|will be|do|does)\s+)?(?P<neg>no longer\s+|not\s+|never\s+)?(?:now\s+)?"
    r"(?:stored|kept|persisted|saved|written|go|goes|live|lives|stay|stays|move|moves|moved|belong|belongs|sit|sits)"
    r"(?:\s+(?:now|back))?(?:\s+(?:over\s+)?from\s+\S+)?\s+(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORE_AFTER = re.compile(
    r"^\s+(?:now\s+)?(?:holds|keeps|stores|handles|backs|persists)\s+(?P<t>.+)$"
    r"|^\s+(?:(?:now\s+)?replaced\s+\S+(?:\s+\S+)?\s+)?for\s+(?P<t2>.+)$",
    _I,
)
_REMOVED_FROM = re.compile(r"\b(?:from|out of|for)\s+(?P<t>.+)$", _I)


def _thing_phrase(raw: str) -> str:
    head = re.match(r"(?:the|our|all|all the|any)\s+", raw, _I)
    return _np_words(raw, head.end() if head else 0, limit=4)


def _valid_thing(phrase: str) -> bool:
    words = phrase.lower().split()
    if not words or TECH_PATTERN.fullmatch(phrase) or any(TECH_PATTERN.fullmatch(w) for w in words):
        return False
    head = _singular(words[-1])
    if head in {"file", "files"} and len(words) > 1:
        return True  # "uploaded files" is a thing stored; a bare "files" is too vague
    return words[-1] not in _NOT_THINGS and head not in _NOT_THINGS


def _stored_thing(text: str, tech: re.Match[str], removal: bool = False) -> tuple[str, bool] | None:
    """('user sessions', negated) in "we store user sessions in Redis", "sessions go in Postgres",
    "Redis holds sessions", "Redis replaced Mongo for sessions", "drop Redis from sessions"."""
    if tech_category(tech_name(tech.group(1))) not in _STORE_KINDS:
        return None
    before, after = text[: tech.start()], text[tech.end() :]
    candidates: list[tuple[str, bool]] = []
    passive = _STORE_PASSIVE_BEFORE.search(before)
    if passive:
        candidates.append((_np_words(before, passive.start() + 1, backwards=True, limit=4), bool(passive.group("neg"))))
    active = _STORE_VERB_BEFORE.search(before)
    if active:
        candidates.append((_thing_phrase(active.group("t")), False))
    later = _STORE_AFTER.match(after)
    if later:
        candidates.append((_thing_phrase(later.group("t") or later.group("t2")), False))
    if removal:
        gone = _REMOVED_FROM.search(after)
        if gone:
            candidates.append((_thing_phrase(gone.group("t")), False))
    for phrase, negated in candidates:
        if phrase and _valid_thing(phrase):
            return _lower_first(phrase), negated
    return None


def _storage_finding(thing: str, name: str, negated: bool) -> Finding:
    head = thing.lower().split()[-1]
    plural = head.endswith("s") and not head.endswith("ss")
    verb = "are" if plural else "is"
    where = tech_display(name)
    text = f"{_cap(thing)} {verb} no longer stored in {where}." if negated else f"{_cap(thing)} {verb} stored in {where}."
    # One key per stored thing, by its head noun: "user sessions" and "sessions" share `session storage`
    return Finding(f"{_singular(head)} storage", name, Kind.DECISION, text, negated=negated)


# Tool names that are also ordinary English words ("a poetry reading", "express myself",
# "a black dress"): in prose they only count as a tool with a tooling context around them.
_PLAIN_WORD_TECHS = frozenset(
    "poetry express black bun parcel mocha jest hatch clerk sentry drizzle rollup biome astro react "
    "angular flask rails cypress playwright jenkins travis cassandra azure uv pip mamba maven "
    "spring boot cloud run".split()
) | {"spring boot", "cloud run"}
# Words that make a clause about software tooling: a plain-word tool name next to them is a tool.
_TOOLING_CONTEXT = re.compile(
    r"`|--\w|\w/\w|\b[\w-]+\.(?:py|js|ts|toml|json|lock|ya?ml|cfg|ini|txt)\b|\b\d+\.\d+\b|"
    r"\b(?:package manager|packages?|lockfiles?|lock file|dependenc\w*|deps|lint\w*|format\w*|"
    r"type[- ]?check\w*|tests?|testing|test runner|framework|librar\w*|lib|plugins?|modules?|repo\w*|codebase|"
    r"code|build\w*|ci|pipelines?|deploy\w*|config\w*|install\w*|virtualenv|venv|env|backend|frontend|"
    r"api|server|services?|cli|scripts?|commands?|bundl\w*|compil\w*|project|app|stack|migrat\w*|"
    r"version|upgrade\w*|bump\w*|pinned|pin|cache|database|db|queue|stor(?:e|es|ed|ing)|persist\w*|events?)\b",
    _I,
)
# A plain-word tool name directly after one of these is the object of a tooling choice.
_TOOL_GOVERNOR = re.compile(
    r"\b(?:use|uses|used|using|switch(?:ed|ing)?\s+(?:\w+\s+)?to|mov(?:e|ed|ing)\s+(?:\w+\s+)?to|"
    r"migrat\w*\s+(?:\w+\s+)?to|stick(?:ing)?\s+to|back\s+to|adopt\w*|install\w*|run|runs|"
    r"(?:managed|installed|built|linted|formatted|run|tested)\s+with|instead of|rather than|"
    r"in favou?r of|replac\w*(?:\s+\w+)?\s+with|went with|go with|chose|picked|settled on)"
    r"\s+(?:the\s+|our\s+)?`?$",
    _I,
)
_PROSE_AFTER = re.compile(r"^\s+(?:to\s+\w+|myself|yourself|himself|herself|ourselves|themselves)\b", _I)


def _tool_in_context(text: str, tech: re.Match[str]) -> bool:
    """Is this tool name about tooling? Always for distinctive names (Redis, pytest); a name
    that is also an ordinary word (poetry, express, black) needs a tooling context: tooling
    words or code in the clause, another tool named, or a choice verb governing it."""
    if tech_name(tech.group(1)) not in _PLAIN_WORD_TECHS or _stored_thing(text, tech, removal=True):
        return True  # a distinctive name, or a store holding something ("sessions go into Cassandra")
    rest = text[: tech.start()] + " " + text[tech.end() :]
    if _TOOLING_CONTEXT.search(rest):
        return True
    if any(tech_name(m.group(1)) not in _PLAIN_WORD_TECHS for m in TECH_PATTERN.finditer(rest)):
        return True
    return bool(_TOOL_GOVERNOR.search(text[: tech.start()])) and not _PROSE_AFTER.match(text[tech.end() :])


def _techs(text: str) -> list[re.Match[str]]:
    """Technology names, except inside an inline command (`npm install`, `docker compose up`)
    and plain-word names outside a tooling context ("a transgender poetry reading")."""
    spans = [m.span() for m in _BACKTICKED.finditer(text) if " " in m.group(1).strip()]
    return [m for m in TECH_PATTERN.finditer(text)
            if not any(a < m.start() < b for a, b in spans) and _tool_in_context(text, m)]


def _postfix_removal(c: Clause) -> Finding | None:
    """ "pycodestyle is gone, we ripped it out", "Woodpecker was removed from CI": a bare tool name
    (no article: "the old folder is deleted" is no dependency) before a removal verb."""
    after = _NEGATION_AFTER.search(c.text)
    if not after or c.speaker == "assistant":
        return None
    before = c.text[: after.start()]
    phrase = _np_words(c.text, after.start(), backwards=True, limit=3)
    if not phrase or re.search(r"\b(?:the|our|my|this|that|your)\s+(?:\w+\s+)?$", before[: len(before) - len(phrase)], _I):
        return None
    if phrase.lower() in _NOT_REMOVED or phrase.split()[0].lower() in _NOT_REMOVED | _NOT_SUBJECTS:
        return None
    name = normalize_belief(phrase)
    return Finding("", name, Kind.DECISION, f"The project no longer uses {phrase}.", negated=True)


def _removal(c: Clause) -> Finding | None:
    neg = _NEGATION.search(c.text)
    techs = _techs(c.text)
    post = [m for m in techs if _NEGATION_AFTER.match(c.text, m.end())]
    if not post and (not neg or not techs):
        late = _postfix_removal(c)  # "stylelint was dropped last week": the thing comes first
        if late or not neg:
            return late
    negated = post[:1] or [m for m in techs if neg and m.start() >= neg.end() and m.start() - neg.end() <= 12]
    positive = [m for m in techs if m not in negated and not _EXCLUDED_BEFORE.search(c.text[: m.start()])]
    if positive:
        return None  # "we dropped npm in favour of pnpm": the choice extractor states it
    if not negated and not neg:
        return None
    if not negated and any(subject.search(c.text) for _, subject, _ in _CONVENTIONS):
        return None  # "never use tabs" is a convention, not a dropped dependency
    if negated:
        name = tech_name(negated[0].group(1))
        stored = _stored_thing(c.text, negated[0], removal=True)
        if stored:
            return _storage_finding(stored[0], name, negated=True)
        display, key = tech_display(name), tech_category(name)
    else:
        if c.speaker == "assistant":
            return None  # "Removed the TODO from the route": an edit, not a dropped dependency
        thing = _NEGATED_THING.match(c.text, neg.end())
        if not thing:
            return None
        display = _THING_SUFFIX.sub("", thing.group("t")).strip(" .,`")
        first = display.lower().split()[0] if display else ""
        if not display or first in _NOT_REMOVED or display.lower() in _NOT_REMOVED:
            return None
        if not _plausible_removed(display, c.text, neg):
            return None
        where = re.match(r"\s+(?:from|in|out of)\s+(?:the\s+)?(\S+)", c.text[thing.end() :])
        if where and (re.search(r"[./]", where.group(1)) or display[:1].islower() and " " in display):
            return None  # "drop the note from CONTRIBUTING.md": an edit of a file
        name, key = normalize_belief(display), ""
        if _STARTS_EXE.match(display):
            # "drop `make test-all`": the command is retired, under the command's key
            found = _purposes_in(display)
            if found:
                return Finding(f"{found[0]} command", name, Kind.DECISION, f"`{display}` is no longer used.", negated=True)
        if neg.group(0).lower().rstrip().endswith(("the", "our")):
            display = "the " + display
    return Finding(key, normalize_belief(name), Kind.DECISION, f"The project no longer uses {display}.", negated=True)


# Removal verbs that are everyday words too ("avoid injuries", "no more excuses"): the thing
# removed must look like software (code-ish, a name) or the clause must be about tooling.
_WEAK_REMOVAL = re.compile(r"^(?:avoid|killed|no more)\b", _I)
_CODEISH_THING = re.compile(r"[`./_\d]|\w-\w|[a-z][A-Z]|^[A-Z][\w-]*[A-Z]|^[A-Z]{2,}")
_PLAIN_MODIFIERS = re.compile(r"(?:ly|ful|ous|ive|ish|less|able|ible)$", _I)
_PRONOUNS = frozenset("her him me you them it us myself yourself himself herself themselves one".split())


def _plausible_removed(display: str, text: str, neg: re.Match[str]) -> bool:
    """A dropped thing is a noun phrase naming something (a module, a service, a dependency),
    not an adverb, adjective, pronoun or date: "captured the sunset perfectly", "got rid of
    her", "dropped on the 11th", "avoid injuries" are no removals."""
    words = display.split()
    low = [w.lower().strip(".,!?'\"") for w in words]
    if low[0] in STOPWORDS or low[-1] in STOPWORDS or low[-1] in _PRONOUNS:
        return False
    if low[-1] in _NOT_REMOVED or low[-1] in _EVALUATIVE or any(w in _EVALUATIVE for w in low):
        return False
    if _PLAIN_MODIFIERS.search(low[-1]) and not _CODEISH_THING.search(words[-1]):
        return False  # "perfectly", "peaceful", "negative": a modifier, not a thing
    if re.fullmatch(r"\d+(?:st|nd|rd|th)?", low[-1]):
        return False
    if _WEAK_REMOVAL.match(neg.group(0)):
        rest = text[: neg.start()] + " " + text[neg.end() :]
        return bool(_CODEISH_THING.search(display) or _TOOLING_CONTEXT.search(rest))
    return True


_NOT_REMOVED = frozenset(
    "it that this them those tests test anything everything something nothing any all features feature "
    "code stuff things thing way one ones".split()
)


_CHOICE_VERB = re.compile(
    r"\b(?:use[sd]?|using|switch\w*|mov(?:e|ed|ing)|migrat\w*|go(?:ing)? with|went with|adopt\w*|"
    r"pick\w*|chose|choose|chosen|standardi[sz]\w* on|rel(?:y|ies) on|runs? on|(?:is|are) on|"
    r"we're on|deploy\w*|host\w*|stor(?:e|es|ed|ing)|replac\w*|instead of|rather than|over|"
    r"prefer\w*|in favou?r of|settled on|decided on|install\w*|via|through|now|back to)\b"
    r"|^[\w.-]+(?:\s[\w.-]+)?\s+for\s",
    _I,
)
_PURPOSE_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, _I), k)
    for p, k in (
        (r"\bpackage manager\b|\b(?:install|manage)\w*\s+(?:packages|deps|dependencies)\b", "package manager"),
        (r"\bcach(?:e|es|ing)\b", "cache"),
        (r"\b(?:database|db|storage|stor(?:e|es|ed|ing)|persist\w*|datastore)\b", "database"),
        (r"\blint(?:er|ers|ing)?\b", "linter"),
        (r"\bformat(?:ter|ting)?\b", "formatter"),
        (r"\btype[- ]?check\w*", "type checker"),
        (r"\b(?:tests?|testing|test runner|test framework)\b", "test framework"),
        (r"\b(?:ci|continuous integration)\b", "ci provider"),
        (r"\b(?:deploy\w*|host(?:ing|ed)?)\b", "deploy target"),
        (r"\b(?:queues?|messaging|message broker|pub/?sub)\b", "message queue"),
        (r"\bbundl\w*", "bundler"),
    )
)
_GROUPS = (
    {"database", "cache", "object storage", "search engine", "message queue"},
    {"linter", "formatter", "type checker"},
    {"ci provider", "deploy target"},
    {"package manager"},
    {"test framework"},
    {"bundler"},
)


def _purpose(text: str, category: str) -> str:
    """The belief key named by the clause ('for caching'), if it fits the chosen tool's kind."""
    if category == "object storage":
        return category
    for pattern, purpose in _PURPOSE_RULES:
        if pattern.search(text):
            if any(purpose in g and category in g for g in _GROUPS):
                return purpose
    return category


def _choice(c: Clause) -> Finding | None:
    techs = _techs(c.text)
    if not techs:
        return None
    rest = TECH_PATTERN.sub(" ", c.text)
    for tech in techs:
        stored = _stored_thing(c.text, tech)
        if stored and not _EXCLUDED_BEFORE.search(c.text[: tech.start()]):
            return _storage_finding(stored[0], tech_name(tech.group(1)), negated=stored[1])
    named = any(p.search(rest) for p, _ in _PURPOSE_RULES) and re.search(r"\b(?:is|are)\b", c.low)
    if not (_CHOICE_VERB.search(c.low) or named):
        return None
    neg = _NEGATION.search(c.text)
    live = [m for m in techs if not (neg and 0 <= m.start() - neg.end() <= 12)]
    chosen = _pick(c.text, live)
    if chosen is None:
        return None
    name = tech_name(chosen.group(1))
    key = _purpose(rest, tech_category(name))
    kind = Kind.DECISION if (c.changed or DECISION.search(c.low)) else Kind.FACT
    label = _CATEGORY_LABEL.get(key, key)
    return Finding(key, name, kind, f"The project uses {tech_display(name)} as its {label}.")


_CATEGORY_LABEL = {"ci provider": "CI provider", "http client": "HTTP client", "orm": "ORM",
                   "api style": "API style", "css framework": "CSS framework"}


_PATH = r"`?(?P<p>(?:[\w.~-]*/[\w./~-]*|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|rb|java|toml|yaml|yml|json|md|cfg|ini|sql|sh|env|lock|txt|css|html|vue|svelte)))`?"
_LOCATION = re.compile(
    r"^(?P<s>[\w][\w\s-]{1,40}?)\s+(?:now\s+)?(?:lives?|live|are|is|sits?|go(?:es)?|belongs?|"
    r"(?:are|is|were|was|have been|has been|got)\s+(?:kept|stored|located|defined|moved|placed)|"
    r"moved|were moved)\s+(?:now\s+)?(?:in|under|into|to|inside|at)\s+" + _PATH,
    _I,
)
_PUT = re.compile(r"^(?:we\s+)?(?:put|keep|place|store)\s+(?:all\s+)?(?P<s>[\w][\w\s-]{1,40}?)\s+(?:in|under|into|inside)\s+" + _PATH, _I)
_NOT_SUBJECTS = frozenset(
    "it this that there which what everything something nothing he she they i we you bug error "
    "issue problem crash failure exception typo fix change diff hit hits match matches result results "
    "mention mentions reference references occurrence occurrences one ones".split()
)


# Any verb developers use for where a thing lives gives the same `<thing> location` key:
# "X live in P", "X sit in P", "you'll find X under P", "P holds X", "we moved X to P".
_LOC_VERB_AFTER = re.compile(
    r"\b(?:lives?|sits?|go(?:es)?|belongs?|stays?|resides?|(?:are|is)(?:\s+now)?|"
    r"(?:are|is|were|was|have been|has been|got)\s+(?:now\s+)?(?:kept|stored|located|defined|moved|placed|found)|"
    r"moved|were moved)\s+(?:now\s+)?(?:in|under|into|to|inside|at)\s+" + _PATH,
    _I,
)
_LOC_FIND = re.compile(r"\b(?:find|see|look for)\s+(?P<s>.+?)\s+(?:in|under|inside|at)\s+" + _PATH, _I)
_LOC_HOLDS = re.compile(_PATH + r"\s+(?:now\s+)?(?:holds|contains|has|keeps|houses|is where)\s+(?P<s>.+)$", _I)
_LOC_MOVE = re.compile(
    r"\b(?:moved|move|relocated|relocate|put|keep|place|store|migrated|shifted)\s+(?P<s>.+?)\s+"
    r"(?:from\s+`?[\w.~/-]+`?\s+)?(?:over\s+)?(?:to|in|into|under|inside)\s+" + _PATH,
    _I,
)


def _location_subject(c: Clause) -> tuple[str, str] | None:
    """(subject phrase, path) of a clause saying where a thing lives, whatever the verb."""
    for pattern in (_LOC_FIND, _LOC_HOLDS, _LOC_MOVE):
        match = pattern.search(c.text)
        if match:
            phrase = _np_words(match.group("s"), 0) if not re.match(r"(?:the|our|all|my)\s", match.group("s"), _I) \
                else _np_words(match.group("s"), match.group("s").index(" ") + 1)
            if phrase:
                return phrase, match.group("p")
    match = _LOC_VERB_AFTER.search(c.text)
    if match:
        phrase = _np_words(c.text, match.start(), backwards=True)
        if phrase:
            return phrase, match.group("p")
    return None


def _location(c: Clause) -> Finding | None:
    found = _location_subject(c)
    match = None if found else (_LOCATION.search(c.text) or _PUT.search(c.text))
    if not found and not match:
        return None
    if found and (TECH_PATTERN.fullmatch(found[0]) or "/" in found[0]):
        return None
    subject = _lower_first(_article_free(found[0] if found else match.group("s")))
    if not subject or subject.split()[-1].lower() in _NOT_SUBJECTS or subject.split()[0].lower() in _NOT_SUBJECTS:
        return None
    path = (found[1] if found else match.group("p")).rstrip(".,;")
    verb = "live" if subject.lower().endswith("s") and not subject.lower().endswith("ss") else "lives"
    return Finding(f"{subject} location", normalize_belief(path), Kind.FACT, f"The {subject} {verb} in {path}.")


_PERSON = r"(?P<who>@[\w-]+|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
_OWNS = re.compile(
    rf"^{_PERSON}\s+(?:now\s+)?(?:owns|is responsible for|is in charge of|maintains|is the owner of|"
    r"is the maintainer of|leads|takes care of)\s+(?P<what>[\w\s./-]{2,40}?)$"
)
_OWNED = re.compile(
    r"^(?P<what>[\w\s./-]{2,40}?)\s+(?:is|are)\s+(?:now\s+)?(?:owned|maintained|handled|led|run)\s+by\s+"
    + _PERSON + r"$"
)
_NOT_PEOPLE = frozenset("We I It This That The You They He She There Our My".split())


# Ownership in any wording gives `<thing> owner`: "P owns X, ask them", "X belongs to P",
# "owner of X is P", "P took over X from Q", "ownership of X passed to P", "X has a new
# owner: P", "anything in X needs a review from P". The thing is the noun phrase, cut at the
# first verb or preposition; the person a capitalised name.
_PERSON_ANY = r"(?P<who>@[\w-]+|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
_OWNER_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(_PERSON_ANY + r"\s+(?:now\s+)?(?:owns|is responsible for|is in charge of|maintains|is the owner of|"
               r"is the maintainer of|leads|takes care of|took over|has taken over|takes over|inherited|"
               r"reviews everything in|signs off on)\s+(?P<what>.+)$"),
    re.compile(r"(?:^|\b(?:the|our)\s+)(?P<what>[\w][\w\s./-]{1,40}?)\s+(?:now\s+)?(?:belongs|belong)\s+to\s+" + _PERSON_ANY),
    re.compile(r"\b(?:owner|maintainer)\s+of\s+(?P<what>.+?)\s+(?:is|=|:)\s+(?:now\s+)?" + _PERSON_ANY, _I),
    re.compile(r"\bownership\s+of\s+(?P<what>.+?)\s+(?:has\s+)?(?:passed|went|moved|was handed|was transferred|"
               r"transferred|goes|is going)\s+(?:over\s+)?to\s+" + _PERSON_ANY, _I),
    re.compile(r"(?:^|\b(?:the|our)\s+)(?P<what>[\w][\w\s./-]{1,40}?)\s+(?:has|got)\s+a\s+new\s+(?:owner|maintainer)\s*:?\s+"
               + _PERSON_ANY),
    re.compile(r"\b(?i:anything|everything|changes?)\s+(?:in|to)\s+(?P<what>.+?)\s+(?:needs?|requires?|goes? through)\s+"
               r"(?:a\s+)?(?:review|approval|sign-?off)\s+(?:from|by)\s+" + _PERSON_ANY),
)


def _owner(c: Clause) -> Finding | None:
    match = _OWNS.search(c.text) or _OWNED.search(c.text)
    if not match:
        for pattern in _OWNER_PATTERNS:
            found = pattern.search(c.text)
            if found and found.group("who").split()[0] not in _NOT_PEOPLE:
                what = found.group("what").strip()
                head = re.match(r"(?:the|our|my)\s+", what, _I)
                phrase = _np_words(what, head.end() if head else 0)
                if phrase:
                    who = found.group("who")
                    thing = _lower_first(phrase)
                    if thing.split()[0].lower() in _NOT_SUBJECTS | {"them", "him", "her"}:
                        return None
                    article = "the " if head or not thing[:1].isupper() and len(thing.split()) > 1 else ""
                    return Finding(f"{_article_free(thing)} owner", normalize_belief(who), Kind.FACT,
                                   f"{who} owns {article}{thing}.")
        return None
    if match.group("who").split()[0] in _NOT_PEOPLE:
        return None
    who, what = match.group("who"), _lower_first(match.group("what").strip())
    thing = _article_free(what)
    if not thing or thing.split()[0].lower() in _NOT_SUBJECTS | {"them", "him", "her"}:
        return None  # "Dana owns it": no coreference
    return Finding(f"{thing} owner", normalize_belief(who), Kind.FACT, f"{who} owns {what}.")


_WHEN = (
    r"(?P<when>(?:(?:next|this)\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*(?:\s+\d{4})?"
    r"|\d{4}-\d\d-\d\d|end of (?:the )?(?:day|week|month|sprint|quarter|year)|eod|eow|tomorrow|next week"
    r"|next month|q[1-4](?:\s+\d{4})?)"
)
_DEADLINES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, _I)
    for p in (
        rf"\bdeadline\s+(?:for\s+(?P<what>[\w\s.-]{{2,40}}?)\s+)?(?:is\s+(?:now\s+)?|was moved to\s+|"
        rf"moved to\s+|got moved to\s+|:\s*)(?:on\s+|by\s+)?{_WHEN}\b",
        rf"^(?P<what>[\w\s.-]{{2,40}}?)\s+(?:is|are)\s+(?:now\s+)?(?:due|scheduled|planned|happening)\s+"
        rf"(?:on\s+|by\s+|for\s+)?{_WHEN}\b",
        rf"^(?:we\s+)?(?:ship|release|launch|demo)\s+(?P<what>[\w\s.-]{{2,40}}?)\s+(?:on|by)\s+{_WHEN}\b",
        rf"^(?P<what>[\w\s.-]{{2,40}}?)\s+(?:must|has to|needs to)\s+be\s+(?:done|finished|shipped|merged|"
        rf"ready|live)\s+by\s+{_WHEN}\b",
    )
)


def _deadline(c: Clause) -> Finding | None:
    match = next((m for m in (p.search(c.text) for p in _DEADLINES) if m), None)
    if not match:
        return None
    what = match.group("what") or ""
    thing = _article_free(what).strip()
    when = match.group("when")
    key = f"{thing} deadline" if thing else "deadline"
    text = f"The deadline for {thing} is {when}." if thing else f"The deadline is {when}."
    return Finding(normalize_key(key), normalize_belief(when), Kind.DECISION, text)


_PREFERENCE_TRIGGER = re.compile(
    r"\b(?:always|never|prefer\w*|don't ever|do not ever|make sure to|be sure to|stick to|"
    r"convention|must|should)\b|^(?:use|write|keep|put|format|indent|name|avoid|don't|do not|"
    r"answer|respond|reply)\b",
    _I,
)
_CONVENTIONS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = tuple(
    (key, re.compile(subject, _I), re.compile(value, _I) if value else None)
    for key, subject, value in (
        ("indentation", r"\bindent\w*|\btabs\b|\bspaces\b", r"\b(\d+\s*spaces|tabs)\b"),
        ("quote style", r"\bquotes?\b", r"\b(single|double)\s+quotes?\b"),
        ("line length", r"\bline length|\bline width|\bcolumns\b|\bcharacters per line", r"\b(\d{2,3})\b"),
        ("commit message style", r"\bcommit(?:s| messages?)\b", r"\b(conventional commits?|imperative(?: mood)?|gitmoji)\b"),
        ("naming convention", r"\bcamel ?case|\bsnake[_ ]case|\bpascal ?case|\bkebab[- ]case|\bnaming\b", r"\b(camel ?case|snake[_ ]case|pascal ?case|kebab[- ]case)\b"),
        ("type hints", r"\btype (?:hints?|annotations?)\b", None),
        ("docstring style", r"\bdocstrings?\b", r"\b(google|numpy|sphinx|rest)\b"),
        ("merge strategy", r"\bsquash\w*|\brebas\w*|\bmerge commits?\b", r"\b(squash|rebase|merge commits?)\b"),
        ("response language", r"\b(?:answer|respond|reply|write|talk)\w*\s+(?:to me\s+)?in\s+[A-Z]\w+", r"\bin\s+([A-Z]\w+)"),
        ("string formatting", r"\bf-?strings?\b|\.format\(", None),
        ("import style", r"\bimports?\b", None),
        ("test policy", r"\b(?:write|add)\w*\s+(?:a\s+)?(?:unit\s+)?tests?\b|\btests? first\b|\btdd\b", None),
        ("comment style", r"\bcomments?\b", None),
        ("semicolons", r"\bsemicolons?\b", None),
        ("error handling", r"\bexceptions?\b|\berror handling\b", None),
        ("logging", r"\blog(?:ging|ger)\b|\bprint statements?\b|\bprint\(\)", None),
        ("response style", r"\b(?:concise|verbose|brief|short answers?|explanations?)\b", None),
    )
)


def _rule_text(text: str) -> str:
    """"One style thing, on the python side: always use type hints" -> "always use type hints"."""
    head, colon, tail = text.partition(": ")
    if colon and _PREFERENCE_TRIGGER.search(tail) and not _PREFERENCE_TRIGGER.search(head) and "`" not in head:
        return tail
    return text


_NEVER_BEFORE = re.compile(r"\b(?:never|don't|do not|avoid|no)\b[\w\s]*$", _I)


def _convention(c: Clause) -> Finding | None:
    if not (_PREFERENCE_TRIGGER.search(c.text) or c.explicit):
        return None  # "right now the client does not call it" is a remark, not a convention
    for key, subject, value in _CONVENTIONS:
        if not subject.search(c.text):
            continue
        hits = list(value.finditer(c.text)) if value else []
        live = [m for m in hits if not _NEVER_BEFORE.search(c.text[max(0, m.start() - 20) : m.start()])]
        found = (live or hits or [None])[0]
        belief = normalize_belief(found.group(1)) if found else normalize_belief(_rule_text(c.text))
        if key == "response language" and found:
            belief = normalize_belief(found.group(1))
        return Finding(key, belief, Kind.PREFERENCE, _cap(_rule_text(c.text)) + ".", weight=0.05)
    if c.speaker == "user" and re.search(r"\b(?:always|never)\b", c.low) and len(c.low.split()) >= 3:
        # the assistant's "so it never holds a long lock" describes code; it sets no rule
        return Finding("", "", Kind.PREFERENCE, _cap(c.text) + ".")
    return None


_MEASURE = re.compile(r"^~?\d[\d.,]*(?:[a-z%]{1,3}\d*)+$", _I)  # 40ms, 1.4s, 4x, 2m10s, 95%
_SWITCH = re.compile(
    r"\b(?:switch|mov|migrat|chang|go|went)\w*\s+(?:(?:the|our)\s+(?P<what>[\w\s-]{1,30}?)\s+)?from\s+"
    r"`?(?P<old>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?\s+to\s+`?(?P<new>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?$"
    r"|\buse\s+`?(?P<new2>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?\s+(?:instead of|rather than|in place of)\s+`?(?P<old2>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?$"
    r"|\breplac\w*\s+`?(?P<old3>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?\s+with\s+`?(?P<new3>[\w.@/+-]+(?:\s[\w.@/+-]+)?)`?$",
    _I,
)


def _switch(c: Clause) -> Finding | None:
    match = _SWITCH.search(c.text)
    if not match:
        return None
    old = match.group("old") or match.group("old2") or match.group("old3")
    new = match.group("new") or match.group("new2") or match.group("new3")
    what = match.group("what")
    if not what and any(_MEASURE.match(v) or v.replace(".", "").isdigit() for v in (old, new)):
        return None  # "went from 2m10s to 1m20s": a measurement, not a replaced tool
    if what:
        key, text = normalize_key(what), f"The {what.strip()} is {new}."
    else:
        key, text = normalize_key(old), f"The project uses {new} instead of {old}."
    return Finding(key, normalize_belief(new), Kind.DECISION, text)


_KV = re.compile(
    r"^(?P<s>[\w][\w\s./-]{1,40}?)\s+(?P<v1>is|are|=|has been|have been)\s+(?:now\s+|currently\s+)?"
    r"(?:set to\s+|changed to\s+|switched to\s+)?(?P<v>.+?)(?:\s+now)?$"
    r"|^(?P<s2>[\w][\w\s./-]{1,40}?)\s+(?:(?:was|were|has been|have been|got|is|are)\s+)?"
    r"(?:moved|changed|switched|bumped|set|updated|raised|lowered|increased|decreased|reduced)\s+to\s+(?P<v2>.+)$"
    r"|^(?:(?:i|we)(?:'ve| have)?\s+)?(?:set|change|changed|switch|switched|move|moved|bump|bumped|raise|raised|"
    r"lower|lowered|increase|increased|decrease|decreased|reduce|reduced|update|updated)\s+(?P<s3>[\w][\w\s./-]{1,40}?)"
    r"\s+(?:from\s+\S+\s+)?to\s+(?P<v3>.+)$",
    _I,
)
_ATTRIBUTE_HEADS = frozenset(
    "port version host hostname url domain endpoint command branch directory dir folder path name "
    "provider tool manager framework library database db region timeout limit owner deadline key "
    "variable format style language runtime target environment bucket queue registry image "
    "size interval level mode strategy schedule cron channel account team repo repository "
    "model engine driver client server cache store backend frontend token ttl retries workers "
    "threshold quota budget tag prefix suffix namespace cluster zone license editor shell".split()
)
_EVALUATIVE = frozenset(
    "great good fine done broken failing wrong weird slow fast ok okay working correct right "
    "true false better worse annoying confusing nice cool awesome ready fixed clear possible "
    "important needed required missing empty flaky green red passing failed weird strange "
    "bad terrible amazing perfect interesting fun easy hard tricky complicated simple".split()
)
_KEY_ALIASES = {"db": "database", "main branch": "default branch", "pm": "package manager",
                "api server port": "api port", "max line length": "line length", "backend port": "api port", "server port": "api port"}


_NOT_VALUE_START = frozenset(
    "in on at a an not being still also very so too really already actually just about around roughly "
    "only probably usually mostly".split()
)
_HOSTNAME = re.compile(r"`?[a-z][\w-]*(?:\.[\w-]+)*\.(?:internal|local|com|net|org|io|dev|app|cloud|lan)`?", _I)


def _is_valuey(value: str) -> bool:
    return bool(re.search(r"[\d`/._:@]|[a-z][A-Z]", value)) or bool(TECH_PATTERN.search(value))


def _kv(c: Clause) -> Finding | None:
    if c.speaker == "assistant" and not (c.changed or CHANGE.search(c.text)):
        return None
    match = _KV.search(c.text)
    if not match:
        return None
    subject = match.group("s") or match.group("s2") or match.group("s3")
    value = (match.group("v") or match.group("v2") or match.group("v3")).strip(" .")
    value = re.sub(r"\s+now$", "", value, flags=_I)
    # "prod.example.com, it is two VMs": the value ends before a new clause
    value = re.split(r",\s+(?=(?:it|it's|which|that|that's|so|but|and|because|since|though|with)\b)", value, maxsplit=1)[0]
    subject = _lower_first(_article_free(subject))
    words = subject.lower().split()
    if not words or words[0] in _NOT_SUBJECTS or len(words) > 5 or not value:
        return None
    value_words = value.lower().split()
    if "`code`" in value:
        return None  # a masked code or config snippet is no value
    if len(value_words) > 8 or value_words[0] in _NOT_VALUE_START:
        return None
    if value.lower().strip("!.") in _EVALUATIVE or value_words[-1] in _EVALUATIVE:
        return None
    if words[-1] not in _ATTRIBUTE_HEADS and not _is_valuey(value):
        return None
    if words[-1] not in _ATTRIBUTE_HEADS and (_MEASURE.match(value_words[0]) or "," in value):
        return None  # "the search page is 300ms", "one check is flaky, test_x": observations
    if words[-1] not in _ATTRIBUTE_HEADS and _HOSTNAME.fullmatch(value):
        subject = f"{subject} host"  # "prod is prod.example.com": the prod host
        words = subject.lower().split()
    key = normalize_key(subject)
    key = _KEY_ALIASES.get(key, key)
    tech = TECH_PATTERN.search(value)
    belief = tech_name(tech.group(1)) if tech and len(value_words) <= 2 else normalize_belief(value)
    number = re.search(r"\d+", value)
    if key == "line length" and number:
        belief = number.group(0)
    verb = "are" if match.group("v1") == "are" else "is"
    kind = Kind.DECISION if (c.changed or DECISION.search(c.low)) else Kind.FACT
    return Finding(key, belief, kind, f"The {subject} {verb} {value}.")


def _note(c: Clause) -> Finding | None:
    if not c.remember or len(c.text.split()) < 3:
        return None
    return Finding("", "", Kind.FACT, _cap(c.text) + ".", weight=0.1)


EXTRACTORS: tuple[Callable[[Clause], Finding | None], ...] = (
    _command, _port, _branch, _env, _host, _version, _removal, _choice, _location,
    _owner, _deadline, _convention, _switch, _kv, _note,
)
_BASE_SALIENCE = {Kind.DECISION: 0.65, Kind.PREFERENCE: 0.65, Kind.PROCEDURE: 0.6, Kind.FACT: 0.55, Kind.NOTE: 0.4}


def _findings(sentence: str, speaker: str) -> list[Finding]:
    out: list[Finding] = []
    for part in clauses(sentence):
        text, changed, remember = strip_fillers(part)
        if not text or MEMORY_TALK.search(text) or not is_statement(text, changed):
            continue
        if speaker == "assistant" and not assistant_ok(text):
            continue
        text = mask_code(text, _STARTS_EXE)
        clause = Clause(text, text.lower(), changed or bool(CHANGE.search(text)), remember, speaker, changed)
        for extractor in EXTRACTORS:
            finding = extractor(clause)
            if finding is not None:
                if clause.changed and finding.kind is Kind.FACT:
                    finding = Finding(finding.key, finding.belief, Kind.DECISION, finding.text, finding.negated, finding.weight)
                out.append(finding)
                break
    return out


# ---------------------------------------------------------------- credentials

# An environment variable that holds a credential: its name ends with a secret word.
_CREDENTIAL_ENV = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|KEY|KEY_ID|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|PASS|"
    r"CREDENTIALS?|AUTH|PAT)\b"
)
_CREDENTIAL_WORD = re.compile(r"\b(?:api key|key|token|secret|password|passwd|credentials?|pat)\b", _I)
# A value that must never be stored: a redaction marker, a long hex string, a long token.
_SECRET_LIKE = re.compile(
    r"\[REDACTED|\b[0-9a-f]{24,}\b|(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{24,}(?![\w/.-])"
)


def _credential_service(text: str, env: str) -> str:
    """The service a pasted credential is for: "the Stripe key", "for Twilio", else the env var's prefix."""
    for match in _CREDENTIAL_WORD.finditer(text):
        phrase = _np_words(text, match.start(), backwards=True, limit=3)
        if phrase and phrase.split()[-1].lower() not in {"env", "var", "variable"} and not _ENV_NAME.search(phrase):
            return phrase
    for match in re.finditer(r"\b(?:for|with|to|and)\s+(?:the\s+)?([A-Z][\w.-]*(?:\s[A-Z][\w.-]*)?)", text):
        if not _ENV_NAME.fullmatch(match.group(1)) and match.group(1) not in _NOT_PEOPLE:
            return match.group(1)
    return env.split("_")[0].title()


def _credentials(text: str) -> tuple[list[Finding], bool]:
    """Credentials a turn gives, as the environment variable they are read from; never the secret.

    "pasting the Stripe key: sk_live_... the app reads it from STRIPE_SECRET_KEY" ->
    "The Stripe credential is read from the STRIPE_SECRET_KEY environment variable."
    Returns the findings and whether the turn holds a credential at all.
    """
    names = list(dict.fromkeys(m.group(0) for m in _CREDENTIAL_ENV.finditer(text)))
    given = re.search(r"\b(?:goes in|go in|put it in|reads? it from|read from|env var|environment variable)\b|"
                      r"\b[A-Z][A-Z0-9_]+=", text, _I)
    if not names or not (_SECRET_LIKE.search(text) or given or _CREDENTIAL_WORD.search(_CREDENTIAL_ENV.sub(" ", text))):
        return [], False
    out = []
    for env in names:
        service = _credential_service(_CREDENTIAL_ENV.sub(" ", text), env)
        service = re.sub(r"^(?:the|our|my|a|an)\s+", "", service, flags=_I)
        service = service if service[:1].isupper() else f"the {service}"
        out.append(Finding(f"{_article_free(service)} credential", env.lower(), Kind.FACT,
                           f"{_cap(service)} credential is read from the {env} environment variable."))
    return out, True


def extract_unit(unit: Unit, scope: str) -> list[Candidate]:
    """Candidates stated in one turn: the user's statements, and the assistant's completed changes."""
    seen: set[tuple[str, str, bool, str]] = set()
    values: dict[tuple[str, bool], str] = {}
    out: list[Candidate] = []
    credentials = _credentials(strip_memory_blocks(unit.user))[0]
    secret_turn = bool(credentials)
    for speaker, body in (("user", unit.user), ("assistant", drop_plan_lists(unit.assistant))):
        for sentence in sentences(body):
            if MEMORY_TALK.search(sentence):
                continue
            found = _findings(sentence, speaker)
            if secret_turn and speaker == "user":
                found = []  # a turn pasting a credential states where it is read from, nothing else
            else:  # a secret-looking value is never stored, whatever the sentence says
                found = [f for f in found if not (_SECRET_LIKE.search(f.text) or _CREDENTIAL_ENV.search(f.text))]
            if speaker == "user" and credentials:
                found, credentials = credentials + found, []
            for f in found:
                ident = (f.key, f.belief, f.negated, f.text if not f.key else "")
                if ident in seen:
                    continue
                if f.key:
                    # One turn gives one value per key: the first stated (the user's before the
                    # assistant's); a second value is a side case ("JS: `yarn test`").
                    first = values.setdefault((normalize_key(f.key), f.negated), normalize_belief(f.belief))
                    if first != normalize_belief(f.belief):
                        continue
                seen.add(ident)
                salience = _BASE_SALIENCE[f.kind] + f.weight + (-0.1 if speaker == "assistant" else 0.0)
                out.append(
                    Candidate(
                        text=f.text,
                        key=normalize_key(f.key),
                        belief=normalize_belief(f.belief),
                        kind=f.kind,
                        salience=round(min(max(salience, 0.1), 0.95), 3),
                        scope=scope,
                        source_unit_ids=(unit.id,),
                        valid_from_ms=unit.ts_ms,
                        origin=Origin.EXTRACTOR,
                        prompt_version=PROMPT_VERSION,
                        negated=f.negated,
                    )
                )
    return out
