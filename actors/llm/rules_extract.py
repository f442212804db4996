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
    CHANGE,
    DECISION,
    MEMORY_TALK,
    STOPWORDS,
    TECH_PATTERN,
    assistant_ok,
    clauses,
    is_statement,
    sentences,
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


# ---------------------------------------------------------------- extractors

_PORT_CONTEXT = re.compile(
    r"\bports?\b|\blisten\w*|(?:localhost|127\.0\.0\.1|0\.0\.0\.0|[\w-]+\.[\w.-]+):\d{2,5}\b"
    r"|\b(?:runs?|running|serves?|served|serving|bound|binds?|exposed?|available|up|lives?)"
    r"\s+(?:now\s+)?(?:on|at)\s+(?:localhost:)?\d{2,5}\b"
    r"|\b(?:api|backend|server|frontend|service)\b.*\b(?:on|to|from)\s+\d{4,5}\b(?!\.\d)",
    _I,
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
_PORT_TEXT = {
    "api": "The API server listens on port {n}.",
    "frontend": "The frontend dev server runs on port {n}.",
    "database": "The database listens on port {n}.",
    "redis": "Redis listens on port {n}.",
}


def _service(low: str) -> str:
    for pattern, service in _SERVICE_RULES:
        if pattern.search(low):
            return service
    for match in _NAMED_SERVICE.finditer(low):
        if match.group(1) not in _GENERIC_SERVICE and match.group(1) not in STOPWORDS:
            return match.group(1)
    if re.search(r"\b(?:api|backend|back[- ]end|rest)\b", low):
        return "api"
    if re.search(r"\bdev server\b", low):
        return "frontend"
    return "api"


def _port(c: Clause) -> Finding | None:
    if not _PORT_CONTEXT.search(c.low):
        return None
    nums = [
        m
        for m in _PORT_NUMBER.finditer(c.low)
        if 1 <= int(m.group(1)) <= 65535 and not _UNIT_AFTER.match(c.low[m.end() :])
    ]
    chosen = _pick(c.low, nums)
    if chosen is None:
        return None
    port = chosen.group(1)
    service = _service(_PORT_NUMBER.sub(" ", c.low))
    text = _PORT_TEXT.get(service, "The {s} service listens on port {n}.").format(n=port, s=service)
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
        ("seed", r"\bseed\w*", "To seed the database, run `{c}`."),
        (
            "dev",
            r"\bdev server\b|\bstart\w*\b|\blocally\b|\bserve\b|\bdev mode\b",
            "To start the app locally, run `{c}`.",
        ),
    )
)
_RUN_WORD = re.compile(r"\b(?:run|runs|running|execute|command|cmd|script|use|using|with|via)\b|:", _I)


def _command(c: Clause) -> Finding | None:
    command = ""
    for span in _BACKTICKED.findall(c.text):
        if _STARTS_EXE.match(span) or (" " in span and _RUN_WORD.search(c.text)):
            command = span.strip()
            break
    if not command:
        bare = _BARE_COMMAND.search(c.text)
        if not bare:
            return None
        command = bare.group(1).strip()
    rest = c.text.replace(command, " ")
    for where in (rest, command):
        for name, pattern, template in _PURPOSES:
            if pattern.search(where):
                return Finding(
                    f"{name} command", normalize_belief(command), Kind.PROCEDURE, template.format(c=command)
                )
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


def _branch(c: Clause) -> Finding | None:
    match = _BRANCH_SET.search(c.text) or _BRANCH.search(c.text)
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
    if not value:
        return None
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


def _host(c: Clause) -> Finding | None:
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
    r"does not use|aren't using|are not using|not using|never use|avoid|killed|deprecated|sunset|"
    r"moved (?:away )?(?:off|away from)|uninstalled|no more)\s+(?:the\s+|our\s+|any\s+)?",
    _I,
)
_NEGATED_THING = re.compile(
    r"(?P<t>[\w.+#/-]+(?:\s+[\w.+#/-]+){0,2}?)(?=\s+(?:anymore|any more|now|from|for|in favou?r|"
    r"because|since|as|and|entirely|completely|altogether|dependency|dependencies|service|package|"
    r"library|support|container|containers|integration)\b|\s*[,.;!]|\s*$)",
    _I,
)
_THING_SUFFIX = re.compile(r"\s+(?:dependency|dependencies|service|package|library|lib|support|container|containers|integration)$", _I)


def _techs(text: str) -> list[re.Match[str]]:
    return list(TECH_PATTERN.finditer(text))


def _removal(c: Clause) -> Finding | None:
    neg = _NEGATION.search(c.text)
    if not neg:
        return None
    techs = _techs(c.text)
    negated = [m for m in techs if m.start() >= neg.end() and m.start() - neg.end() <= 12]
    positive = [m for m in techs if m not in negated and not _EXCLUDED_BEFORE.search(c.text[: m.start()])]
    if positive:
        return None  # "we dropped npm in favour of pnpm": the choice extractor states it
    if not negated and any(subject.search(c.text) for _, subject, _ in _CONVENTIONS):
        return None  # "never use tabs" is a convention, not a dropped dependency
    if negated:
        name = tech_name(negated[0].group(1))
        display, key = tech_display(name), tech_category(name)
    else:
        thing = _NEGATED_THING.match(c.text, neg.end())
        if not thing:
            return None
        display = _THING_SUFFIX.sub("", thing.group("t")).strip(" .,")
        if not display or display.lower() in {"it", "that", "this", "them", "those", "tests", "test"}:
            return None
        name, key = normalize_belief(display), ""
        if neg.group(0).lower().rstrip().endswith(("the", "our")):
            display = "the " + display
    return Finding(key, normalize_belief(name), Kind.DECISION, f"The project no longer uses {display}.", negated=True)


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
    "issue problem crash failure exception typo fix change diff".split()
)


def _location(c: Clause) -> Finding | None:
    match = _LOCATION.search(c.text) or _PUT.search(c.text)
    if not match:
        return None
    subject = _lower_first(_article_free(match.group("s")))
    if not subject or subject.split()[-1].lower() in _NOT_SUBJECTS or subject.split()[0].lower() in _NOT_SUBJECTS:
        return None
    path = match.group("p").rstrip(".,;")
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


def _owner(c: Clause) -> Finding | None:
    match = _OWNS.search(c.text) or _OWNED.search(c.text)
    if not match or match.group("who").split()[0] in _NOT_PEOPLE:
        return None
    who, what = match.group("who"), _lower_first(match.group("what").strip())
    thing = _article_free(what)
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


_NEVER_BEFORE = re.compile(r"\b(?:never|don't|do not|avoid|no)\b[\w\s]*$", _I)


def _convention(c: Clause) -> Finding | None:
    if not (_PREFERENCE_TRIGGER.search(c.text) or c.changed):
        return None
    for key, subject, value in _CONVENTIONS:
        if not subject.search(c.text):
            continue
        hits = list(value.finditer(c.text)) if value else []
        live = [m for m in hits if not _NEVER_BEFORE.search(c.text[max(0, m.start() - 20) : m.start()])]
        found = (live or hits or [None])[0]
        belief = normalize_belief(found.group(1)) if found else normalize_belief(c.text)
        if key == "response language" and found:
            belief = normalize_belief(found.group(1))
        return Finding(key, belief, Kind.PREFERENCE, _cap(c.text) + ".", weight=0.05)
    if re.search(r"\b(?:always|never)\b", c.low) and len(c.low.split()) >= 3:
        return Finding("", "", Kind.PREFERENCE, _cap(c.text) + ".")
    return None


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
    subject = _lower_first(_article_free(subject))
    words = subject.lower().split()
    if not words or words[0] in _NOT_SUBJECTS or len(words) > 5 or not value:
        return None
    value_words = value.lower().split()
    if len(value_words) > 8 or value_words[0] in {"in", "on", "at", "a", "an", "not", "being", "still", "also", "very", "so", "too", "really"}:
        return None
    if value.lower().strip("!.") in _EVALUATIVE or value_words[-1] in _EVALUATIVE:
        return None
    if words[-1] not in _ATTRIBUTE_HEADS and not _is_valuey(value):
        return None
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
        clause = Clause(text, text.lower(), changed or bool(CHANGE.search(text)), remember, speaker)
        for extractor in EXTRACTORS:
            finding = extractor(clause)
            if finding is not None:
                if clause.changed and finding.kind is Kind.FACT:
                    finding = Finding(finding.key, finding.belief, Kind.DECISION, finding.text, finding.negated, finding.weight)
                out.append(finding)
                break
    return out


def extract_unit(unit: Unit, scope: str) -> list[Candidate]:
    """Candidates stated in one turn: the user's statements, and the assistant's completed changes."""
    seen: set[tuple[str, str, bool, str]] = set()
    out: list[Candidate] = []
    for speaker, body in (("user", unit.user), ("assistant", unit.assistant)):
        for sentence in sentences(body):
            if MEMORY_TALK.search(sentence):
                continue
            for f in _findings(sentence, speaker):
                ident = (f.key, f.belief, f.negated, f.text if not f.key else "")
                if ident in seen:
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
