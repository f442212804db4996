"""Fact extractors of the rules client: where things run and what they are set to.

Ports, environment variables, hosts, versions, file locations, and the generic
"<subject> is <value>" fallback; each gives a canonical key (``api port``, ``database host``,
``python version``, ``tests location``...) so that rephrasings of one subject supersede
each other. Extractors take a ``Clause`` and return a ``Finding`` or None (``rules_extract``
tries them in order).
"""

from __future__ import annotations

import dataclasses
import re

from actors.llm.rules_clause import (
    EVALUATIVE,
    MEASURE,
    NOT_SUBJECTS,
    SPEECH_VERBS,
    TO_BEFORE,
    WHEN_SAID,
    Clause,
    Finding,
    article_free,
    cap,
    lower_first,
    np_after_article,
    np_words,
    pick,
    plural,
)
from actors.llm.rules_text import (
    CHANGE,
    DECISION,
    STOPWORDS,
    TECH_PATTERN,
    tech_category,
    tech_display,
    tech_name,
)
from engine.keys import normalize_belief, normalize_key, value_kind
from engine.models import Kind

_I = re.I


_PORT_CONTEXT = re.compile(
    r"\bports?\b|\blisten\w*|(?:localhost|127\.0\.0\.1|0\.0\.0\.0|[\w-]+\.[\w.-]+):\d{2,5}\b"
    r"|\b(?:runs?|running|serves?|served|serving|bound|binds?|exposed?|available|up|lives?)"
    r"\s+(?:now\s+)?(?:on|at)\s+(?:localhost:\d{2,5}|:\d{3,5}|\d{2,5})\b"  # ":8080" alone is a port too (":30" is a minute)
    r"|\b(?:api|backend|server|frontend|service)\b.*\b(?:on|to|from)\s+:?\d{4,5}\b(?!\.\d)"
    # "run the docs preview on 4100": an instruction to run a thing on a port
    r"|^(?:locally\s+)?(?:run|start|serve)\s+(?:the\s+|our\s+)?[a-z][\w-]*(?:\s[a-z][\w-]*){0,2}\s+on\s+\d{4,5}(?=\s*(?:$|[,;.]\s|[,;.]$|locally\b|now\b|instead\b))"
    r"|\bbinds?\s+(?:to\s+)?\d{2,5}\b",
    _I,
)
# Weaker contexts that need a service-like subject: "the docs site is on 8080", "switched X over to 8080".
_PORT_WEAK_CONTEXT = re.compile(r"\b(?:is|are|it's|'s)\s+(?:now\s+)?on\s+:?\d{4,5}\b(?!\.\d)|\bover\s+to\s+\d{4,5}\b(?!\.\d)", _I)
_SERVICE_HEADS = frozenset(
    "api server service site app gateway exporter dashboard receiver proxy daemon worker endpoint backend "
    "frontend ui console portal admin database db cache broker registry listener agent webhook docs "
    "storybook microservice bff collector scheduler sidecar".split()
)
# Host names that say nothing about the service ("localhost:8080", "api:8000" in compose): the port keeps its subject.
_NO_SERVICE_HOSTS = frozenset({"localhost", "host", "app", "api"})
_PORT_NUMBER = re.compile(r"(?<![\w.\-/])(\d{2,5})(?![\w%]|\.\d)")
# What says that the number after it is a port ("listens on 8080", "runs on 5433", "bound to 7000"): a number
# with no such words before it ("answers 204 on port 7311") gives way to one said after "port".
_PORT_CUE_BEFORE = re.compile(r"\b(?:listen\w*|runs?|running|serv\w*|bound|binds?|exposed?|available|up|lives?|"
                              r"port|at|on)\s+(?:localhost:|127\.0\.0\.1:)?$", re.I)
_SAID_PORT = re.compile(r"\bport\s+(?:is\s+|to\s+|=\s*)?$")  # "port 9000 tps": a port, whatever follows
_UNIT_AFTER = re.compile(
    r"^\s*(?:ms|s|secs?|seconds|minutes|mins|h|hours|days|weeks|months|years|mb|gb|kb|tb|kib|mib|gib|bytes|bits|%|"
    r"hz|khz|mhz|ghz|fps|rps|qps|tps|bps|kbps|mbps|gbps|workers|threads|items|lines|"
    r"chars|characters|columns|retries|times|rows|requests|users|px)\b(?!\s+ago\b)",  # "8443 months ago": when
    _I,
)
_SERVICE_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # A bare "UI" or "client" is the project's frontend only after a determiner ("the UI", "our client"): "the
    # queue manager's management UI" and "the mqtt client" are other things'.
    (re.compile(r"\b(?:front[- ]?end|web ?app|web ui|vite|next\.?js|react app)\b|"
                r"(?:^|\b(?:the|our|a|my|this)\s+)(?:ui|client)\b"), "frontend"),
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
    """The service the clause is about: the first one named ("the API serves /metrics on 9100");
    a bare "dev server" is the frontend's, and a port with no service at all is the API's."""
    return _rule_service(low) or ("frontend" if re.search(r"\bdev server\b", low) else "api")


ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


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


_ENVIRONMENT = re.compile(r"\b(?:staging|prod|production|dev(?!\s+server)|development|qa|preview|sandbox|canary)\b", _I)


# A noun phrase right after one of these is where or through what something runs ("reachable
# inside the VPC", "served from the SPIFFS partition", "behind the bastion"), not the service.
# ("to" is not one: "all runs go to the lab MLflow at host:5000" names the service.)
_PLACE_BEFORE = re.compile(r"\b(?:in|inside|within|from|behind|into|through|via|across|under|onto)\s+$", _I)
# A port belongs to the part of the clause it is in: "X is published as 3306, but Y falls back to 3307".
_CLAUSE_JOIN = re.compile(r",\s+(?:but|and|while|whereas|so)\s+|;\s+|\s+(?:but|whereas)\s+", _I)
# A phrase after the port names its service only when it is attached to it: "port 8081 is the admin UI".
_ATTACHED_AFTER = re.compile(r"^\s*(?:is|=|:|for|->|-|\u2014)?\s*$", _I)
# A port said with its owner's possessive: "the worker's port", "7711 is the worker's port".
_OWNED_PORT = re.compile(r"(\w)['’]s(?=\s+ports?\b)", _I)
# ... or named as the port's owner: "7711 is the port of the worker".
_OWNER_AFTER = re.compile(r"^\s*(?:is|was)\s+(?:the|its)\s+ports?\s+(?:of|for)\s+$", _I)


# "<word> port": the word says whose port it is, unless it only qualifies the port itself.
_PORT_COMPOUND = re.compile(r"(?<![\w.'’-])([a-z][a-z0-9-]*)\s+ports?\b", _I)
_NOT_A_SERVICE = frozenset("new old same default different other another its their every each which what "
                           "local public internal external open free tcp udp http https host container".split())
# A port said to be one more of something's ports ("an extra port mapping for 9310"): whose it is, is not said.
_ONE_MORE_PORT = re.compile(r"\b(?:second|third|fourth|extra|additional|another|spare)\s+ports?\b", _I)
# A port inside an address ("http://mlflow.kelp.lab:5000", "cache-01.int:6380") belongs to that host.
_HOST_PORT = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://)?(?P<host>[a-z][\w-]*)(?:\.[\w-]+)*:(?P<port>\d{2,5})\b[^\s`'\",)]*", _I)


_AT_WORDS = frozenset("is are 's now still lives live sits sit runs run moved at on to over".split())


def _is_at(phrase: str, address: re.Match[str], text: str) -> bool:
    """Whether the clause says the phrase is at the address ("the docs site is now at https://..."):
    only a copula, a verb of place and "at"/"on" come between them."""
    start = text.lower().find(phrase.lower())
    if start < 0 or start + len(phrase) > address.start():
        return False
    between = re.findall(r"[\w']+", text[start + len(phrase): address.start()].lower())
    return all(w in _AT_WORDS for w in between)


def _owning_address(text: str, at: int, named: str, phrase: str, words: str) -> re.Match[str] | None:
    """The address whose host owns the port at ``at``, or None when the clause's subject does.

    A port inside an address belongs to the address's host when the clause names no service
    ("moving to a self-hosted MLflow at http://mlflow.kelp.lab:5000" is mlflow's port, not the
    API's by default), or when nothing but the address speaks of a port and the subject is not
    said to be at it ("the play button uses the stream at https://stream.example.org:8443/live.mp3"
    is the stream's). A known service word ("postgres is on pg-7.internal:5433") or an
    environment variable keeps the port with the service.
    """
    address = next((m for m in _HOST_PORT.finditer(text) if m.start("port") == at), None)
    if (address is None or address.group("host").lower() in _NO_SERVICE_HOSTS
            or _rule_service(_PORT_NUMBER.sub(" ", words)) or ENV_NAME.search(text)):
        return None
    if named and (_PORT_CONTEXT.search(_HOST_PORT.sub(" ", text)) or _is_at(phrase, address, text)):
        return None
    return address


def _port_subject(text: str, at: int) -> tuple[str, str]:
    """(service key, phrase) of the service the port at ``at`` belongs to, for ANY service name:
    "the docs site binds to 5499" -> ("docs site", "docs site"). The phrase is the subject of the
    port's part of the clause: before the port, and not the object of a place preposition.
    ("", "") when none is named."""
    blank = _PORT_NUMBER.sub(lambda m: " " * len(m.group(0)), text)
    blank = _OWNED_PORT.sub(r"\1  ", blank)  # "the worker's port": the owner's word is the phrase ("worker")
    start = max((m.end() for m in _CLAUSE_JOIN.finditer(blank, 0, at)), default=0)
    found = [(pos, p) for pos, p in np_after_article(blank) if pos >= start]
    phrases = [p for pos, p in found if pos < at and not _PLACE_BEFORE.search(blank[start:pos])]
    if not phrases:
        phrases = [p for pos, p in found if pos > at and (_ATTACHED_AFTER.match(blank[at:pos])
                                                          or _OWNER_AFTER.match(blank[at:pos]))]
    if not phrases:
        # "game port changes to 27015": a word right before "port" names whose port it is
        compound = [m.group(1) for m in _PORT_COMPOUND.finditer(blank, start, at)
                    if m.group(1).lower() not in STOPWORDS and m.group(1).lower() not in _NOT_A_SERVICE
                    and not _ONE_MORE_PORT.match(m.group(0))]
        phrases = compound[-1:]
    if not phrases and not found:
        verb = re.search(r"\b(?:listens|runs|binds|is|are|serves|lives)\b", blank[start:], _I)
        if verb:
            phrases = [p for p in [np_words(blank, start + verb.start(), backwards=True)] if p]
    for phrase in phrases:
        low = phrase.lower()
        if _HOSTNAME.fullmatch(low) or re.search(r"\b(?:url|dsn|uri|env|vpn|config)\b", low):
            continue
        rule = _rule_service(low)
        if rule:
            # "the home server's SSH port": what the service's port is for qualifies it (``home ssh port``)
            owned = re.search(r"\b(?:server|service|box|host|machine)\s+([a-z][\w ]*)$", low)
            extra = [w for w in owned.group(1).split() if w not in rule.split()] if owned else []
            if extra and not any(w in STOPWORDS or w in _GENERIC_SERVICE for w in extra):
                return f"{rule} {' '.join(extra)}", phrase
            return rule, phrase
        if all(w in _GENERIC_SERVICE or w in {"server", "service", "api"} for w in low.split()):
            return "", ""
        return normalize_key(low), phrase
    return "", ""


# Verbs of a client reaching a server: the subject before them uses the port after them, it does not listen on it.
_CLIENT_VERB = re.compile(r"\b(?:point(?:s|ed|ing)?\b.*\b(?:at|to)|connect(?:s|ed|ing)?\s+to|talk(?:s|ed|ing)?\s+to|"
                          r"(?:hits|hitting|calls|calling)\s+(?:the\s+|our\s+)?\w|send(?:s|ing)?\b.*\bto|"
                          r"(?:forward(?:s|ed|ing)?|prox(?:ies|ied|ying)|publish(?:es|ed|ing)|replicat(?:es|ed|ing)|"
                          r"push(?:es|ed|ing))\b.*\bto|"
                          # trying a port, or clashing with what holds it: the port is another's ("to avoid clashing
                          # with the host's MariaDB on 3306", "the importer is trying port 6390")
                          r"tr(?:ies|ied|ying)\b|(?:clash|collid|conflict)(?:s|es|ed|ing)?\s+with)\b", _I)  # verbs only: "relay", "proxy", "report" name things too


# A command's long flag that names where it sends or forwards to (--forward-to, --target, --proxy, --upstream,
# --remote, --dest...), then its address up to the port: the port is the command's destination
# ("`hookcli listen --forward-to localhost:4242/hook`"). Other flags ("php -S localhost:8000", "--open URL") may
# give the port the command itself serves on.
_CLIENT_FLAG = re.compile(r"`[^`]*\s--[\w-]*(?:to|target|proxy|upstream|remote|dest\w*|endpoint|forward)[\w-]*[= ]"
                          r"(?:[a-z]+://)?(?:[\w.-]+)?:$", _I)


def extract_port(c: Clause) -> Finding | None:
    weak = False
    if not _PORT_CONTEXT.search(c.low):
        if not _PORT_WEAK_CONTEXT.search(c.low):
            return None
        weak = True
    nums = [
        m
        for m in _PORT_NUMBER.finditer(c.low)
        if 1 <= int(m.group(1)) <= 65535
        and (not _UNIT_AFTER.match(c.low[m.end() :]) or _SAID_PORT.search(c.low[: m.start()]))
        and not m.group(1).startswith("0")  # "04:00" is a time, "0800" a clock: no port starts with 0
        and not re.match(r"[:.]\d", c.low[m.end():]) and not re.search(r"\d[:.]$", c.low[:m.start()])
    ]
    chosen = pick(c.low, nums)
    if chosen is None:
        return None
    as_port = [m for m in nums if _SAID_PORT.search(c.low[: m.start()])]
    if as_port and chosen not in as_port and not TO_BEFORE.search(c.low[: chosen.start()]) \
            and not _PORT_CUE_BEFORE.search(c.low[: chosen.start()]):
        # "the probe answers 204 on port 7311": the number said as a port is the port, not the first one
        chosen = pick(c.low, as_port) or chosen
    if _CLIENT_FLAG.search(c.text[: chosen.start()]):
        return None  # `somecli relay --target localhost:8125`: where a command sends, no listener of the project
    port = chosen.group(1)
    # `TEST_DB_URL` names its service too: read an environment variable as its service word
    words = ENV_NAME.sub(_env_service_word, c.text).lower()
    if not _SERVICE_NAMED.search(words) and re.search(r"\b(?:url|dsn|uri|connection string)\b", words):
        return None  # "the default URL in config.py to port 6001": which service is unknown
    # `TEST_DB_URL` names its service itself; otherwise the clause's subject phrase does
    named, phrase = ("", "") if ENV_NAME.search(c.text) else _port_subject(c.text, chosen.start())
    if weak and not (named and (named in _PORT_TEXT or phrase.lower().split()[-1] in _SERVICE_HEADS
                                or _rule_service(phrase.lower()))):
        return None  # "the fix is on 1234": only a service is "on" a port
    address = _owning_address(c.text, chosen.start(), named, phrase, words)
    if address is not None:
        host = address.group("host").lower()
        return Finding(f"{host} port", port, Kind.FACT, f"The {host} service is at {address.group(0).rstrip('.')}.")
    at = c.text.lower().find(phrase.lower()) if phrase else -1
    # From the phrase's start: a subject phrase read without a verb may run on into the client's verb
    # ("the audit hook forwards payloads to the chat relay on 3979").
    client = _CLIENT_VERB.search(c.text, at, chosen.start()) if at >= 0 else None
    if client:
        # "the worker talks to the billing service on 7001": the listener is the verb's object, when it names one;
        # "the mobile dev points the emulator at localhost:3000" names none: a client's target, no one's listener
        named, phrase = _port_subject(c.text[client.end():], chosen.start() - client.end())
        if not phrase:
            return None
    # A clause that names a service is about that service, whatever its name; only a clause
    # naming none ("it runs on 8080") defaults to the API.
    if not named and _ONE_MORE_PORT.search(c.text):
        return None  # one more port of something unnamed: never the API's by default
    service = named or _service(_PORT_NUMBER.sub(" ", words))
    env = _ENVIRONMENT.search(c.text[: chosen.start()])  # named before the port: "staging Postgres ... 6543"
    if env and service and env.group(0).lower() not in service:
        # "the qa cache" is not "the cache": an environment word keeps its own key and the phrase
        word = env.group(0).lower()
        said = phrase if phrase and word in phrase.lower() else f"{word} {phrase or service}"
        return Finding(f"{word} {service} port", port, Kind.FACT, f"The {lower_first(said)} listens on port {port}.")
    if service in _PORT_TEXT or not phrase:
        text = _PORT_TEXT.get(service, "The {s} service listens on port {n}.").format(n=port, s=service)
    else:
        text = f"The {lower_first(phrase)} listens on port {port}."
    return Finding(f"{service} port", port, Kind.FACT, text)


_ENV_SET = re.compile(
    r"\b(?:set|export|define)\s+(?:the\s+)?(?:env(?:ironment)? var(?:iable)?\s+)?`?(?P<n>[A-Z][A-Z0-9_]{2,})`?"
    r"\s*(?:to|=)\s*(?P<tick>`?)(?P<v>(?<=`)[^`]+(?=`)|[^\s`]+)`?"
)
_ENV_IS = re.compile(
    r"`?(?P<n>[A-Z][A-Z0-9]*_[A-Z0-9_]+)`?\s*(?:(?:is\s+|was\s+)?(?:now\s+)?(?:set|changed|switched) to|=|"
    r"(?P<copula>is(?: now)?|should be|must be|needs to be|stays at|stays|remains at|remains))\s*(?P<tick>`?)"
    r"(?P<v>(?<=`)[^`]+(?=`)|[^\s`]+)`?"  # a backticked value whole: `timedelta(minutes=5)`
)
# Words that may follow a one-word value without making it a description: "LOG_LEVEL is debug in staging".
_AFTER_VALUE = re.compile(r"^\s*(?:[,;)]|$|(?:in|on|for|at|across|everywhere|now|again|there|here|too|by default)\b)", _I)


def _copula_value_is_prose(match: re.Match[str], text: str) -> bool:
    """ "SENTRY_DSN is set fine", "PIN_STATUS_LED is GPIO 38 under rev C": after a bare "is" a plain
    word followed by more words is a description, not the variable's value. A value after "is" is
    backticked, code-shaped (digits, punctuation) or ends the clause ("LOG_LEVEL is debug")."""
    if not match.groupdict().get("copula") or match.group("tick"):
        return False
    value = match.group("v").rstrip(".,;")
    if re.search(r"[\d/:._@=-]", value):
        return False
    return not _AFTER_VALUE.match(text[match.end("v") :])


def extract_env(c: Clause) -> Finding | None:
    match = _ENV_SET.search(c.text) or _ENV_IS.search(c.text)
    if not match:
        return None
    if _copula_value_is_prose(match, c.text):
        return None
    name, value = match.group("n"), match.group("v").rstrip(".,;")
    if not value or value.lower() in STOPWORDS or value.lower() in {"something", "whatever", "yours"}:
        return None  # "set `DATABASE_URL` to your own credentials"
    if value == "code" and match.group("tick"):
        return None  # a code expression masked by ``mask_code``: its value is not said in words
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
    r"^(?P<q>(?:the\s+)?[\w-]+(?:\s+(?!(?:will|would|shall|should|can|could|may|might|must)\b)[\w-]+)?)\s+(?:is|are|lives?|runs?)\s+(?:now\s+)?(?:hosted\s+|deployed\s+|served\s+)?"
    r"(?:at|on)\s+" + _HOST_VALUE,
    _I,
)


_HOSTNAME_VALUE = r"`?(?P<v>[a-z0-9][\w-]*(?:\.[\w-]+)*\.[a-z][a-z-]+(?::\d{2,5})?)`?(?![\w/.-]|\.\w)"
_FILE_EXTENSIONS = frozenset(
    "py js ts tsx jsx go rs rb java toml yaml yml json md cfg ini sql sh env lock txt css html vue svelte "
    "log csv xml conf pem key".split()
)
# ---------------------------------------------------------------- a setting named by its identifier

# A setting named by the identifier in the code or config that holds it (`cache.max_entries`, `jumpGrace`,
# `reminder_lead_hours`), said to take a value: "bumped `cache.max_entries` to 800", "`reminder_lead_hours`:
# 24 -> 36 hours", "set `jumpGrace = 0.08`", "`pollWindow` is now 90s". An all-caps name is an environment variable (extract_env).
_IDENT = r"`(?P<n>[A-Za-z_][\w.]*[A-Za-z0-9_])`"
_SETTING_VALUE = r"`?(?P<v>[\w.:@+-]*\d[\w.:@+-]*(?:\s?(?:ms|s|sec|seconds?|minutes?|min|hours?|h|hz|kb|mb|gb|px|%))?)`?"
_SETTING_PATTERNS = (
    re.compile(r"\b(?:set|raised|lowered|bumped|changed|increased|decreased|reduced|dropped|upped|cut|moved)\s+"
               rf"(?:the\s+)?{_IDENT}\s+(?:from\s+`?[\w.:+-]+`?\s+)?to\s+{_SETTING_VALUE}(?![\w/])", _I),
    re.compile(rf"^{_IDENT}\s*(?::\s*`?[\w.:+-]+`?\s*)?(?:->|→|=>)\s*{_SETTING_VALUE}(?![\w/])"),
    re.compile(r"\bset\s+`(?P<n>[A-Za-z_][\w.]*[A-Za-z0-9_])\s*=\s*(?P<v>[\w.:@+-]*\d[\w.:@+-]*)`", _I),
    re.compile(rf"^{_IDENT}\s+(?:is\s+now|is\s+set\s+to|now\s+defaults\s+to)\s+{_SETTING_VALUE}(?![\w/])", _I),
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_FOR_NOW = re.compile(r"\b(?:test|tests|fixtures?|mock\w*|stub\w*|temporar\w*|for now|while debugging|debug\w*|locally)\b", _I)


def _identifier_words(name: str) -> str:
    """`cache.max_entries` -> "cache max entries", `JumpGrace` -> "jump grace"."""
    return " ".join(w.lower() for w in re.split(r"[._]+", _CAMEL.sub("_", name)) if w)


def extract_setting(c: Clause) -> Finding | None:
    if _FOR_NOW.search(c.text):
        return None  # "set `user.id` to 42 for the fixture", "... temporarily while debugging": not the setting
    for i, pattern in enumerate(_SETTING_PATTERNS):
        match = pattern.search(c.text)
        if match is None or (i == len(_SETTING_PATTERNS) - 1 and c.text[match.end():].strip(" .")):
            continue  # "`a_b` is now 20": only as the whole clause ("`os.path` is now 3 lines shorter" is not)
        name, value = match.group("n"), match.group("v").rstrip(".,;")
        identifier = "_" in name or "." in name or bool(_CAMEL.search(name))
        if not identifier or ENV_NAME.fullmatch(name) or name.rsplit(".", 1)[-1].lower() in _FILE_EXTENSIONS:
            continue
        words = _identifier_words(name)
        return Finding(normalize_key(words), normalize_belief(value), Kind.DECISION,
                       f"The {words} setting (`{name}`) is {value}.")
    return None


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
    r"\s(?:(?:host ?name|host|address)\s+)?(?:(?:has\s+|got\s+|was\s+|were\s+)?(?:moved|migrated|changed|switched|failed over|been moved)\s+to|"
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
            phrase = np_words(subject, 0)
            if phrase:
                return phrase, match.group("v")
    match = _HOST_VERB.search(c.text)
    if match:
        phrase = np_words(c.text, match.start() + 1, backwards=True)
        if phrase:
            return phrase, match.group("v")
    return None


def _starts_a_command(value: str, text: str) -> bool:
    """`ecto.create --quiet`, `manage.py migrate`: a dotted word that opens a longer backticked line
    is a program or task name, not a host (a host in backticks stands alone or with its port)."""
    return bool(re.search(r"`" + re.escape(value) + r"\s+[^`\s][^`]*`", text))


def extract_host(c: Clause) -> Finding | None:
    found = _host_subject(c)
    if found and _starts_a_command(found[1], c.text):
        found = None
    if found and found[1].rsplit(".", 1)[-1].split(":")[0].lower() not in _FILE_EXTENSIONS:
        subject = lower_first(article_free(found[0]))
        stripped = _HOST_SUBJECT_TAIL.sub("", subject).strip()
        words = (stripped or subject).lower().split()
        if words and words[0] not in NOT_SUBJECTS and not ENV_NAME.fullmatch(found[0]) \
                and not (len(words) == 1 and words[0] in {"it", "this", "that", "url", "link", "version", "file"}):
            key = normalize_key(f"{stripped or subject} host")
            key = {"db host": "database host"}.get(key, key)
            value = found[1]
            text = f"The {subject} host is {value}." if subject == stripped else f"The {subject} is hosted at {value}."
            return Finding(key, normalize_belief(value), Kind.FACT, text)
    match = _HOST.search(c.text)
    if match:
        qualifier = article_free(match.group("q")).strip()
        head = match.group("h").lower().replace("hostname", "host").replace(" ", "")
        head = {"hosts": "host", "urls": "url", "domains": "domain", "endpoints": "endpoint",
                "baseurl": "base url", "baseurls": "base url", "uris": "uri", "hostnames": "host",
                "hostnames ": "host"}.get(head, head)
    else:
        match = _HOST_AT.search(c.text)
        if not match or not re.search(r"[./]", match.group("v")):
            return None
        qualifier = article_free(match.group("q"))
        head = "url" if "://" in match.group("v") else "host"
    value = match.group("v").rstrip(".,;")
    if _starts_a_command(value, c.text):
        return None
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
# A language, runtime or framework by its name ("Rust", "node"): never a person, whatever the sentence says.
VERSIONED_NAME = re.compile(rf"(?:{_VERSIONED})", _I)
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
    r"now|is|are|please|pls)\b",
    _I,
)
_NAME_CANON = {"nodejs": "node", "node.js": "node", "golang": "go", "postgresql": "postgres",
               ".net": "dotnet", "next": "next.js", "k8s": "kubernetes", "torch": "pytorch"}
_VERSION_DISPLAY = {"node": "Node", "python": "Python", "go": "Go", "typescript": "TypeScript",
                    "dotnet": ".NET", "java": "Java", "ruby": "Ruby", "rust": "Rust", "php": "PHP"}


# A name no list knows, with a version of two or three numbers, after a word of moving onto or being on it:
# "we moved to Hydra-OS v5.3.1", "we're on NuttX 12.4 now". The name is capitalised or hyphenated, so a
# plain noun ("to step 2.1") names nothing; a word of counting or measuring before the number is no name.
_NAMED_VERSION_AFTER = re.compile(
    r"^(?:(?:we're|we\s+are|i'm)\s+(?:now\s+)?(?=on\b)|(?:we|we've|we\s+have|i|i've)\s+(?:now\s+|just\s+|finally\s+)?"
    r"(?:moved|migrated|switched|upgraded|bumped|updated|run|use)\s+(?:\w+\s+)?)(?:to|on|onto)\s+(?P<name>(?-i:[A-Z][\w+]*(?:-[\w+]+)*|[a-z][\w+]*(?:-[\w+]+)+))"
    rf"\s+v?(?P<ver>\d+\.\d+(?:\.\d+)?)(?![\w.])", _I)
_WHEN_NAMES = frozenset("monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
                        "august september october november december q1 q2 q3 q4".split())
_COUNTED = frozenset("step steps chapter section phase sprint release page line part item issue ticket round stage level "
                     "version figure table node room floor build team pi".split())


# Someone's or something else's setup right before the version: "Mira has ruby 3.2", "Render has python 3.13 now"
# (a capitalised name and "has"; "so we moved to python 3.13" after it is still read).
_SOMEONE_HAS = re.compile(r"(?-i:\b[A-Z][a-z]+)\s+has\s+$")
# What another thing supports or works with ("Wagtail 6 supports Django 4.2 and 5.0", "tested against
# node 18"): a range it is compatible with, not the version the project is on.
_COMPATIBLE_BEFORE = re.compile(r"\b(?:supports?|supported|support\s+for|compatible\s+with|works\s+with|"
                                r"tested\s+(?:on|with|against))\s+(?:both\s+)?$", _I)


# A known tool and its version as a label and a value, the whole clause: "Node: 20.11", "python: 3.12.4".
_TOOL_LABEL_VERSION = re.compile(r"^(?P<name>[A-Za-z][\w.+#-]*)\s*:\s*v?(?P<ver>\d+(?:\.\d+)+)\s*[.!]?$")


def extract_version(c: Clause) -> Finding | None:
    labelled = _TOOL_LABEL_VERSION.match(c.text)
    name = _NAME_CANON.get(labelled.group("name").lower(), labelled.group("name").lower()) if labelled else ""
    if labelled and (name in _VERSION_DISPLAY or tech_category(tech_name(name))):
        display = _VERSION_DISPLAY.get(name, tech_display(name))
        version = labelled.group("ver")
        return Finding(f"{name} version", normalize_belief(version), Kind.FACT, f"The project uses {display} {version}.")
    if not _VERSION_CONTEXT.search(c.low):
        return None
    match = _VERSION_TO.search(c.text)
    if match is None:
        found = [m for m in _VERSION.finditer(c.text) if not _COMPATIBLE_BEFORE.search(c.text[: m.start()])
                 and not _SOMEONE_HAS.search(c.text[: m.start()])]
        match = pick(c.text, found)
        if match is None:
            named = _NAMED_VERSION_AFTER.search(c.text)
            if named is None or set(named.group("name").lower().split("-")) & (_COUNTED | STOPWORDS | _WHEN_NAMES):
                return None
            raw, version = named.group("name"), named.group("ver")
            return Finding(f"{raw.lower()} version", normalize_belief(version), Kind.FACT, f"The project uses {raw} {version}.")
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


_PATH = r"`?(?P<p>(?:[\w.~-]*/[\w./~-]*|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|rb|java|toml|yaml|yml|json|md|cfg|ini|sql|sh|env|lock|txt|css|html|vue|svelte)))`?"
# Verbs of putting a thing somewhere ("logs end up in", "dumps land in", "checkpoints get written to").
_PLACED = r"ends?\s+up|lands?|(?:are|is|get|gets)\s+(?:now\s+)?(?:written|saved|dumped|uploaded)"
_LOCATION = re.compile(
    r"^(?P<s>[\w][\w\s-]{1,40}?)\s+(?:now\s+)?(?:lives?|live|are|is|sits?|go(?:es)?|belongs?|"
    r"(?:are|is|were|was|have been|has been|got)\s+(?:kept|stored|located|defined|moved|relocated|placed)|"
    r"moved|were moved|" + _PLACED + r")\s+(?:now\s+)?(?:in|under|into|to|inside|at)\s+" + _PATH,
    _I,
)
_PUT = re.compile(r"^(?:we\s+)?(?:put|keep|place|store)\s+(?:all\s+)?(?P<s>[\w][\w\s-]{1,40}?)\s+(?:in|under|into|inside)\s+" + _PATH, _I)
# Any verb developers use for where a thing lives gives the same `<thing> location` key:
# "X live in P", "X sit in P", "you'll find X under P", "P holds X", "we moved X to P".
_LOC_VERB_AFTER = re.compile(
    r"\b(?:lives?|sits?|go(?:es)?|belongs?|stays?|resides?|(?:are|is)(?:\s+now)?|"
    r"(?:are|is|were|was|have been|has been|got)\s+(?:now\s+)?(?:kept|stored|located|defined|moved|relocated|placed|found)|"
    r"moved|were moved|" + _PLACED + r")\s+(?:now\s+)?(?:in|under|into|to|inside|at)\s+" + _PATH,
    _I,
)
_LOC_FIND = re.compile(r"\b(?:find|see|look for)\s+(?P<s>.+?)\s+(?:in|under|inside|at)\s+" + _PATH, _I)
_LOC_HOLDS = re.compile(_PATH + r"\s+(?:now\s+)?(?:holds|contains|has|keeps|houses|is where)\s+(?P<s>.+)$", _I)
_LOC_MOVE = re.compile(
    r"\b(?:moved|move|relocated|relocate|put|keep|place|store|migrated|shifted)\s+(?P<s>.+?)\s+"
    r"(?:from\s+`?[\w.~/-]+`?\s+)?(?:over\s+)?(?:to|in|into|under|inside)\s+" + _PATH,
    _I,
)


_COUNT_BEFORE = re.compile(r"\d[\d.,]*\+?\s*$")
_UNIT = re.compile(r"[KMGTP]i?B|[kmgt]b|bytes?|%|percent|ms|s|secs?|mins?|hours?|days?", _I)  # "212 GB is in ..."


def _location_subject(c: Clause) -> tuple[str, str] | None:
    """(subject phrase, path) of a clause saying where a thing lives, whatever the verb."""
    for pattern in (_LOC_FIND, _LOC_HOLDS, _LOC_MOVE):
        match = pattern.search(c.text)
        if match:
            phrase = np_words(match.group("s"), 0) if not re.match(r"(?:the|our|all|my)\s", match.group("s"), _I) \
                else np_words(match.group("s"), match.group("s").index(" ") + 1)
            if phrase:
                return phrase, match.group("p")
    match = _LOC_VERB_AFTER.search(c.text)
    if match:
        phrase = np_words(c.text, match.start(), backwards=True)
        if phrase:
            return phrase, match.group("p")
    return None


# A place named by its container, not by a path: "invoices live in bucket acme-invoices-eu", "exports go in the
# nightly-dumps bucket", "events are stored in table audit_log"; and a short verbless clause with an absolute
# path ("cache in /var/lib/app/cache", as lists of facts are typed).
_CONTAINER = r"(?:bucket|container|folder|directory|repo|repository|table|schema|namespace|channel|topic|queue)"
_CONTAINED = re.compile(
    r"^(?P<s>[\w][\w\s-]{1,40}?)\s+(?:now\s+)?(?:lives?|live|sits?|go(?:es)?|(?:are|is)(?:\s+(?:kept|stored|written))?)\s+"
    r"(?:now\s+)?(?:in|into|to)\s+(?:the\s+|our\s+)?"
    rf"(?:{_CONTAINER}\s+`?(?P<p1>[\w][\w.-]*\w)`?|`?(?P<p2>[\w][\w.-]*[-_.][\w.-]*\w)`?\s+{_CONTAINER})\b", _I)
_VERBLESS_PATH = re.compile(r"^(?P<s>[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?:in|under|at)\s+`?(?P<p>(?:/|~/)[\w./~-]+)`?$", _I)


def extract_location(c: Clause) -> Finding | None:
    contained = _CONTAINED.match(c.text) or _VERBLESS_PATH.match(c.text)
    if contained:
        subject = lower_first(article_free(contained.group("s")))
        where = next(g for g in (contained.groupdict().get(k) for k in ("p", "p1", "p2")) if g)
        if subject and subject.split()[0].lower() not in NOT_SUBJECTS | STOPWORDS and not TECH_PATTERN.fullmatch(subject):
            return Finding(f"{subject} location", normalize_belief(where), Kind.FACT, f"{cap(c.text.strip())}.")
    found = _location_subject(c)
    if found:
        if TECH_PATTERN.fullmatch(found[0]) or "/" in found[0]:
            return None
        raw_subject, raw_path = found
    else:
        match = _LOCATION.search(c.text) or _PUT.search(c.text)
        if match is None:
            return None
        raw_subject, raw_path = match.group("s"), match.group("p")
    subject = lower_first(article_free(raw_subject))
    if not subject or subject.split()[-1].lower() in NOT_SUBJECTS or subject.split()[0].lower() in NOT_SUBJECTS:
        return None
    at = c.text.find(raw_subject)
    if at > 0 and _COUNT_BEFORE.search(c.text[:at]) and _UNIT.fullmatch(raw_subject.strip()):
        return None  # "212 GB is in /data/wal": a quantity found somewhere, not a thing's home
    path = raw_path.rstrip(".,;")
    verb = "live" if subject.lower().endswith("s") and not subject.lower().endswith("ss") else "lives"
    return Finding(f"{subject} location", normalize_belief(path), Kind.FACT, f"The {subject} {verb} in {path}.")


# Where messages of a kind are sent: a chat channel ("#ops-pager") or a mail address, after a verb of
# sending said of the messages ("deploy alerts go to #ops-pager", "release notes are posted in
# #releases") or by the sender ("we send the digest to #general"). Keyed "<messages> channel".
_DESTINATION = r"`?(?P<{}>#[a-z0-9][\w.-]*[a-z0-9]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)`?"
_SENT = re.compile(
    r"^(?P<s>(?:the\s+|our\s+|all\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s+(?:now\s+)?(?:go(?:es)?|are\s+(?:now\s+)?"
    r"(?:posted|sent|routed)|get\s+(?:posted|sent|routed)|land|lands)\s+(?:now\s+)?(?:in|to|into)\s+" + _DESTINATION.format("d")
    + r"|^(?:we|i)\s+(?:now\s+)?(?:send|post|route)\s+(?P<s2>(?:the\s+|our\s+|all\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
    r"\s+(?:in|to|into)\s+" + _DESTINATION.format("d2"), _I)


def extract_destination(c: Clause) -> Finding | None:
    match = _SENT.search(c.text)
    if match is None:
        return None
    subject = article_free(match.group("s") or match.group("s2")).lower()
    if not subject or subject.split()[0] in NOT_SUBJECTS | STOPWORDS or (match.end() < len(c.text.rstrip(" .!"))
                                                                         and not re.match(r"\s*(?:now|,|;|$)", c.text[match.end():])):
        return None
    where = match.group("d") or match.group("d2")
    kind = Kind.DECISION if c.changed else Kind.FACT
    verb = "go" if subject.endswith("s") and not subject.endswith("ss") else "goes"
    return Finding(f"{subject} channel", normalize_belief(where), kind, f"{cap(subject)} {verb} to {where}.")


_KV = re.compile(
    r"^(?P<s>[\w][\w\s./-]{1,40}?)\s+(?P<v1>is|are|=|has been|have been|needs to be|must be|will be|stays|remains)\s+"
    r"(?:now\s+|currently\s+|at\s+)?"
    r"(?:set to\s+|changed to\s+|switched to\s+)?(?P<v>.+?)(?:\s+now)?$"
    r"|^(?P<s2>[\w][\w\s./-]{1,40}?)\s+(?:(?:was|were|has been|have been|got|is|are)\s+)?"
    r"(?:moved|changed|switched|bumped|set|updated|raised|lowered|increased|decreased|reduced)\s+(?:over\s+|back\s+|up\s+|down\s+)?to\s+(?P<v2>.+)$"
    r"|^(?:(?:i|we)(?:'ve| have)?\s+)?(?:set|change|changed|switch|switched|move|moved|bump|bumped|raise|raised|"
    r"lower|lowered|increase|increased|decrease|decreased|reduce|reduced|update|updated)\s+(?P<s3>[\w][\w\s./-]{1,40}?)"
    r"\s+(?:over\s+|back\s+)?(?:(?:from|off(?:\s+of)?)\s+(?P<old3>\S+)\s+)?(?:to|(?P<into>onto|into))\s+(?P<v3>.+)$"
    # "make the session timeout 45 min", "keep the retry cap at 3": a number is the new value of the named setting
    r"|^(?:make|keep)\s+(?:the|our)\s+(?P<s4>[\w][\w\s./-]{1,40}?)\s+(?:at\s+)?(?P<v4>\S*\d\S*(?:\s+[a-z]+)?)$",
    _I,
)
# Verbs that take "up" or "down" as a particle ("bump minSdk up to 26", "lower the pool down to 3"); after
# another verb the word is part of the setting's name ("set the warm up to 30s").
_RAISED = re.compile(r"^(?:(?:i|we)(?:'ve| have)?\s+)?(?:bump|bumped|raise|raised|lower|lowered)\b", _I)
_SETTING_CHANGE = re.compile(r"\b(?:switch|switched|change|changed|set)\b", _I)
# A progressive verb or a passing state after "is" tells what happens, not what something is.
_EVENT = re.compile(r"^(?:still\s+|again\s+|kinda\s+|really\s+)?[a-z]+ing\b|"
                    r"^(?:down|broken|flaky|slow|red|green|stuck|late|back|gone|weird|annoying|off|on fire|"
                    # a thing said to be gone states no value of it ("the nightly cron is dead")
                    r"dead|history|toast|obsolete|deprecated|removed|retired|scrapped|decommissioned)\b", _I)
_ATTRIBUTE_HEADS = frozenset(
    "port version host hostname url domain endpoint command branch directory dir folder path name id "
    "provider tool manager framework library database db region timeout limit owner deadline key "
    "variable format style language runtime target environment bucket queue registry image "
    "size interval level mode strategy schedule cron channel account team repo repository "
    "model engine driver client server cache store backend frontend token ttl retries workers "
    "threshold quota budget tag prefix suffix namespace cluster zone license editor shell".split()
)
_KEY_ALIASES = {"db": "database", "main branch": "default branch", "pm": "package manager",
                "api server port": "api port", "max line length": "line length", "backend port": "api port", "server port": "api port"}


_NOT_VALUE_START = frozenset(
    "in on at a an not being still also very so too really already actually just about around roughly "
    "only probably usually mostly".split()
)
# An indefinite article and a name with a digit in it: a model or part number ("a VL53L4CD", "an RP2350", "a t3.large").
_A_SHAPED_NAME = re.compile(r"^an?\s+(?P<v>[A-Za-z][\w.+-]*\d[\w.+-]*(?<![.,-]))"
                            r"(?=\s*$|[,;.]|\s+(?:over|on|in|at|via|with|from|for|behind|instead|rather|and|now)\b)")  # not "a P2 incident"
_HOSTNAME = re.compile(r"`?[a-z][\w-]*(?:\.[\w-]+)*\.(?:internal|local|com|net|org|io|dev|app|cloud|lan)`?", _I)


# A value that is a version number and nothing else: "1.79", "v2.3.1", "3.12".
VERSION_VALUE = re.compile(r"`?v?\d+\.\d+(?:\.\d+)*`?", _I)


def _is_valuey(value: str) -> bool:
    return bool(re.search(r"[\d`/._:@]|[a-z][A-Z]", value)) or bool(TECH_PATTERN.search(value))


# A noun phrase ending in an address or code: "the B2 bucket `b2://scans`", "the shared volume /mnt/scans"
# (words that are no number and no preposition: "30 seconds in `config.yaml`" is no place; a bare path only after an
# article: "GET /healthz" is a request, not a place).
_PLACE_NAMED = re.compile(r"^(?:(?P<article>the|our|a|an)\s+)?(?:(?!(?:in|on|at|of|to|from|for|with|by|into)\b)[A-Za-z][A-Za-z-]*\s+)"
                          r"{1,3}(?P<at>`[^`]+`|[a-z][a-z0-9+.-]*://\S+|(?(article)/[\w./-]+|(?!)))$", _I)
_CALLED = re.compile(r"^(?:called|named)\s+(?!(?:by|from|in|on|at|with|for|to|when|after|before|via|through)\b)", _I)
# "on" and a value with a shape: a pin named by capitals ("on GPIO 5"), code ("on `gh-pages`"), a host ("on db-2.lan").
_ON_SHAPED = re.compile(r"^on\s+(?P<v>`[^`]+`|[A-Z]{2,6}\s?\d{1,3}|[a-z][\w-]*(?:\.[\w-]+)*\.[a-z]{2,}(?::\d+)?)$")
_VALUE_LIKE = re.compile(r"`|\d|://|[\w-]\.[a-z]|/\w")
_STATUS_WORD = re.compile(r"^(?:final|current|latest|new)\s+(?=\S)", _I)


_CONTRAST = re.compile(r",?(?<!\s)\s+(?:not|no longer|instead of|rather than)\s+(?:the\s+)?(`[^`]+`|[\w.:/@-]+)\s*$", _I)


# A value that says what is done to the subject: a past participle and its preposition ("capped at 25 MB",
# "exported as TIFF", "scanned by ClamAV", "written in Rust").
# Verbs of changing or bounding a value say nothing of which setting it is ("bumped to 8", "limited to 10 MB").
_DONE_TO = re.compile(r"^(?!(?:bump|increas|decreas|rais|reduc|lower|upgrad|downgrad|updat|chang|mov|switch|drop|"
                      r"cap|capp|limit|restrict|throttl|bound|set|reset|adjust|tun|extend|shorten|doubl|halv)ed\b)"
                      r"([a-z]{3,}ed|written|built|kept|held|sent|run|made|done|shown|taken|given|driven|found|"
                      r"hidden|split|read|spun|stuck|thrown)\s+(?:at|to|by|in|on|as|with|using|from|into|under|for|via|through|"
                      r"behind|per|every|each|once)\b", _I)


# A verbless "<name of a setting> <value>" fragment, as terse chat and lists type facts: "app id 3140912",
# "mirror host pkgs.example.org", "sandbox port 18443". The value has a shape no word has (digits joined by x, dots or
# colons, a host, a path, code); a bare number only after an attribute's own word ("id", "port"), since "tests 12"
# counts something. The fragment is the clause or one of its comma-separated parts.
_NAMED_VALUE = re.compile(
    r"^(?P<k>[a-z][a-z-]{1,20}(?:\s[a-z][a-z-]{1,20}){0,2})\s+"
    r"(?P<v>`[^`\s]+`|\d+(?:[x×.:]\d+)+[a-z]{0,3}|[a-z][\w-]*(?:\.[\w-]+)+\.[a-z]{2,}|(?:/|~/)[\w./~-]+|(?P<n>\d{2,}))$", _I)
_NOT_OURS = frozenset("previous old former competitor competitors their ideally maybe set tested see check".split())
_NOT_NAMED = frozenset("and or but so then with without from to of in on at by for as is are was were be the a an "
                       "about around over under after before since until every each per only just also".split())


def extract_named_value(c: Clause) -> Finding | None:
    """A setting named and valued without a verb ("app id 3140912"): the fragment as said, keyed by its name."""
    if c.speaker != "user":
        return None
    for part in re.split(r",\s+", c.text.rstrip(" .!")):
        m = _NAMED_VALUE.match(part)
        if m is None:
            continue
        words = m.group("k").lower().split()
        if any(w in STOPWORDS | _NOT_NAMED | NOT_SUBJECTS for w in words):
            continue
        if m.group("n") and words[-1] not in _ATTRIBUTE_HEADS:
            continue  # "tests 12", "errors 3": a count
        if len(words) == 1 or words[-1] not in _ATTRIBUTE_HEADS or words[0] in _NOT_OURS:
            continue  # "see docs.example.org", "version 2.3.1": a setting's own word names it, after what it is of
        value = m.group("v").strip("`")
        if re.fullmatch(r"\d+(?:\.\d+){1,2}|\d{1,2}:\d{1,2}", value) or (m.group("v").startswith("`") and words[-1] not in _ATTRIBUTE_HEADS):
            continue  # a version is the version reader's, a clock time a schedule's; code needs a setting's own word
        return Finding(normalize_key(" ".join(words)), normalize_belief(value), Kind.FACT, cap(part) + ".")
    return None


# The possessive pronouns of a third party (a closed class of English): a subject they open is someone else's.
_OTHERS_POSSESSIVE = frozenset({"his", "her", "their"})


def extract_kv(c: Clause) -> Finding | None:
    if c.speaker == "assistant" and not (c.changed or CHANGE.search(c.text)):
        return None
    match = _KV.search(c.text)
    if not match:
        return None
    subject = match.group("s") or match.group("s2") or match.group("s3") or match.group("s4")
    value = (match.group("v") or match.group("v2") or match.group("v3") or match.group("v4")).strip(" .")
    value = re.sub(r"\s+now$", "", value, flags=_I)
    value = re.sub(r"^(?:just|simply)\s+(?=\S)", "", value, flags=_I)  # "staging is just X": X
    value = re.sub(r"\s*\([^()]*\)$", "", value)  # "... `b2://scans` (the old box goes away in May)": an aside
    # "prod.example.com, it is two VMs": the value ends before a new clause
    value = re.split(r",\s+(?=(?:it|it's|which|that|that's|so|but|and|because|since|though|with)\b)", value, maxsplit=1)[0]
    # "04:30, ops asked", "25 MB, as agreed", "Europe/Vienna, every site is there": after a value that starts
    # with a number or is shaped like an identifier (a path, a dotted or snake name), a comma ends it
    if re.match(r"\d|[\w-]*[/._:@][\w./:@-]*,", value):
        value = value.split(", ", 1)[0]
    # "1.17 on every box", "27.3 across all the runners", "1.22 across the board": that a version holds everywhere is
    # no part of it ("3.9 in the legacy worker" keeps its limit: another part's version)
    value = re.sub(r"^(v?\d+(?:\.\d+)+)\s+(?:(?:in|on|across)\s+(?:every|all|each)\b|everywhere\b(?!\s+else)|"
                   r"across\s+the\s+board\b).*$", r"\1", value, flags=_I)
    # "4.1 because the runners still have it": a reason is no part of the value, nor is a contrast ("UTC
    # while the old ones were ...")
    value = re.split(r"\s+(?=(?:because|since|so that|as long as|while|whereas|although|though|"
                     r"so (?:a|an|the|that|it|we|you|they|there|this)\b)\s)",
                     value, maxsplit=1)[0]
    value = re.sub(r",?\s+please(?:,.*)?$", "", value, flags=_I)  # "26 please, ...": a courtesy is no part of the value
    value = re.sub(WHEN_SAID + "$", "", value, flags=_I)  # "search-2.internal yesterday": when it changed is no part of it
    # "media-eu, not media": a closing contrast names the value replaced, which the memory must not state
    contrast = _CONTRAST.search(value)
    replaced: tuple[str, ...] = ()
    if contrast and contrast.start() > 0 and contrast.group(1).strip("`").lower() not in EVALUATIVE:
        old = contrast.group(1).strip("`")
        value = value[: contrast.start()].rstrip(" ,")
        # only a distinctive value or a known tool is retired: a plain word ("not debug") or a short number
        # ("8 instead of 4") names too much else
        replaced = (old,) if (len(old) >= 3 and re.search(r"[\d./:_@-]", old)) or tech_category(tech_name(old)) else ()
    old3 = (match.group("old3") or "").strip("`")
    if len(old3) >= 3 and re.search(r"[\d./:_@-]", old3):
        # "move the dumps off `nas-2.lan` onto X": a distinctive place no longer holds them. A tool's name
        # ("off Artifactory") is not retired: the removal would reach every other use of the tool.
        replaced += (old3,)
    if match.group("s3") and _RAISED.match(match.group(0)):
        subject = re.sub(r"\s+(?:up|down)$", "", subject, flags=_I)  # "bump minSdk up to 26": a particle of the verb
    subject = lower_first(article_free(subject))
    value = _CALLED.sub("", value)  # "the rig is called rig-7b": the name is the value
    on = _ON_SHAPED.match(value)
    if on:  # "the relay is on GPIO 5", "the docs are on `gh-pages`": a place with a shape, not "on fire"
        value = on.group("v")
    words = subject.lower().split()
    if not words or words[0] in NOT_SUBJECTS or len(words) > 5 or not value:
        return None
    if words[0] in _OTHERS_POSSESSIVE:
        return None  # "her staging box runs the old image": someone else's thing, not the project's
    if SPEECH_VERBS & set(words):
        return None  # "Ana complains the build is slow": a report of what someone says, no setting's name
    named = _A_SHAPED_NAME.match(value)
    if named:  # "the level probe is a VL53L4CD on I2C": the part's name, not "a" anything ("a race condition" stays out)
        value = named.group("v")
    value_words = value.lower().split()
    if _EVENT.match(value) or value.rstrip().endswith(":"):
        return None  # "Marco is complaining: ...", "the build is failing again": events, not attributes
    if "`code`" in value:
        return None  # a masked code or config snippet is no value
    if len(value_words) > 8 or value_words[0] in _NOT_VALUE_START:
        return None
    if value.lower().strip("!.") in EVALUATIVE or value_words[-1] in EVALUATIVE:
        return None
    # "switch the logger to slog", "the queue moved to beanstalkd": a change verb says a setting changed,
    # so the new value needs no known shape or name; a bare "X is Y" does ("the build is failing").
    # ("move the app to Toronto" is a move to a place, not "the app is Toronto": only switch, change and set.)
    explicit_change = (bool(match.group("s2") or match.group("s3")) and len(value_words) <= 2
                       and bool(_SETTING_CHANGE.search(match.group(0)))) or bool(match.group("s4")) \
        or (match.group("v1") or "").lower() in {"needs to be", "must be", "stays", "remains"}  # a value required or kept
    if words[-1] not in _ATTRIBUTE_HEADS and not _is_valuey(value) and not explicit_change:
        return None
    if words[-1] not in _ATTRIBUTE_HEADS and "," in value:
        return None  # "one check is flaky, test_x": an observation
    if words[-1] not in _ATTRIBUTE_HEADS and MEASURE.match(value_words[0]) and not (c.changed or explicit_change):
        return None  # "the search page is 300ms": a measurement, unless it is said to have been set ("is now 25MB")
    if re.search(r"\b\w+er than\b|\b(?:more|less|much|way)\s+\w+\s+than\b", value, _I):
        return None  # "the builds are way faster than before": a comparison is an evaluation
    if words[-1] not in _ATTRIBUTE_HEADS and _HOSTNAME.fullmatch(value):
        subject = f"{subject} host"  # "prod is prod.example.com": the prod host
        words = subject.lower().split()
    elif words[-1] != "version" and VERSION_VALUE.fullmatch(value):
        # "the toolchain is 4.11": a version, keyed as the version readings key it ("toolchain version")
        subject = f"{subject} version"
        words = subject.lower().split()
    # "the current cap", "the latest quota": a word saying which version of a setting is meant names no other setting
    key = normalize_key(_STATUS_WORD.sub("", subject))
    key = _KEY_ALIASES.get(key, key)
    done = _DONE_TO.match(value)
    if done and words[-1] not in _ATTRIBUTE_HEADS:
        # "uploads are capped at 25 MB" and "uploads are scanned by ClamAV" say two things about one subject:
        # what is done to it is part of the setting, so that neither replaces the other
        key = f"{key} {done.group(1).lower()}"
    tech = TECH_PATTERN.search(value)
    # "S3" names the store, "s3://acme-exports" a place in it: an address is its own value
    belief = tech_name(tech.group(1)) if tech and len(value_words) <= 2 and "://" not in value else normalize_belief(value)
    place = _PLACE_NAMED.match(value)
    if match.group("into") and not place and not _VALUE_LIKE.search(value):
        return None  # "we moved the cron into the worker process": into a part of the code, no setting's value
    if place:  # "the B2 bucket `b2://scans`": the address is the value, the words before it say what it is
        belief = normalize_belief(place.group("at").strip("`"))
    number = re.search(r"\d+", value)
    if key == "line length" and number:
        belief = number.group(0)
    verb = "are" if match.group("v1") == "are" or (not match.group("v1") and plural(words[-1])) else "is"
    kind = Kind.DECISION if (c.changed or DECISION.search(c.low) or explicit_change) else Kind.FACT
    said_value = value if not on else on.group(0)
    return Finding(key, belief, kind, f"The {subject} {verb} {said_value}.", retires=replaced)


# ---------------------------------------------------------------- limits, retention, a value used for a thing

# A limit said without a verb: "max 50 players per lobby", "at most 3 retries per job", "up to 20 seats a table".
_LIMIT = re.compile(r"^(?P<bound>max(?:imum)?|min(?:imum)?|at most|at least|up to|no more than)\s+(?P<n>\d[\d,.]*)\s+"
                    r"(?P<what>[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?:per|a|an|each|in a|for each)\s+(?P<unit>[a-z][\w-]*)\b", _I)
# How long something is kept: "we keep audit events for 180 days", "backups are kept for 2 weeks".
_KEPT_FOR = re.compile(r"^(?:(?:we|they)\s+)?(?:keep|retain|store)\s+(?:the\s+|our\s+|all\s+)?(?P<what>[a-z][\w\s-]{1,30}?)\s+"
                       r"for\s+(?P<n>\d+\s*(?:days?|weeks?|months?|years?|hours?|d|w|y))\b"
                       r"|^(?:the\s+|our\s+|all\s+)?(?P<what2>[a-z][\w\s-]{1,30}?)\s+(?:are|is)\s+(?:kept|retained|stored)\s+"
                       r"for\s+(?P<n2>\d+\s*(?:days?|weeks?|months?|years?|hours?|d|w|y))\b", _I)
# A cap set by the verb: "cap attachments at 10 MB each", "limit exports to 500 rows", "throttle webhooks to 10/s".
_CAP_AT = re.compile(r"^(?:(?:we|i)\s+)?(?:cap|limit|throttle)\s+(?P<what>(?:the\s+|our\s+|all\s+)?[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+"
                     r"(?:at|to)\s+(?P<n>\d[\d,.]*\s*(?:[a-z]{1,7}\b|/\s?[a-z]+|%)?(?:/[a-z]+)?)", _I)
# A value put to a use: "use 6380 for the cache", "we use bf16 for training", "use `eu-west-1` for the buckets".
_USE_FOR = re.compile(r"^(?:(?:we|i)\s+)?(?:use|using)\s+(?P<v>`[^`]+`|[\w.:/-]*\d[\w.:/-]*)\s+(?:for|on|in)\s+"
                      r"(?:the\s+|our\s+|all\s+|every\s+)?(?P<what>[a-z][\w-]*(?:\s[a-z][\w-]*){0,2})\s*$", _I)


_SHORT_LEAD = re.compile(r"^[a-z]+(?:\s[a-z]+){0,2}:\s+(?=\S)", _I)


def extract_quantity(c: Clause) -> Finding | None:
    """A limit, a retention period or a value used for a thing, in the short forms chat uses for them.

    Each is keyed by what it bounds or serves ("max players per lobby", "logs retention", "cache number"),
    so a later statement of the same limit in the same form supersedes it; nothing is rewritten beyond
    a plain sentence of what was said."""
    if c.speaker == "assistant" and not c.changed:
        return None
    # A short lead-in of one to three words ("next:", "data rule:") only says what comes: these forms start after it.
    lead = _SHORT_LEAD.match(c.text)
    if lead:
        c = dataclasses.replace(c, text=c.text[lead.end():], low=c.low[lead.end():])
    if m := _LIMIT.match(c.text):
        bound = "max" if m.group("bound").lower()[:2] in {"ma", "at", "up", "no"} and "least" not in m.group("bound") else "min"
        what, unit, n = m.group("what").lower(), m.group("unit").lower(), m.group("n").rstrip(".,")
        return Finding(f"{bound} {what} per {unit}", n, Kind.FACT, f"{cap(m.group(0).strip())}.")
    if (m := _KEPT_FOR.match(c.text)) and not re.search(r"\b(?:while|until|till|for now)\b", c.text, _I):
        what = article_free(m.group("what") or m.group("what2")).strip().lower()
        n = (m.group("n") or m.group("n2")).strip()
        if not what or what.split()[0] in NOT_SUBJECTS:
            return None
        return Finding(f"{what} retention", normalize_belief(n), Kind.FACT, f"The {what} are kept for {n}."
                       if what.endswith("s") else f"The {what} is kept for {n}.")
    if m := _CAP_AT.match(c.text):
        what, n = article_free(m.group("what")).lower(), m.group("n").strip()
        if what.split()[0] in NOT_SUBJECTS:
            return None
        return Finding(f"{what} limit", normalize_belief(n), Kind.DECISION, f"{cap(what)} are capped at {n}."
                       if what.endswith("s") else f"{cap(what)} is capped at {n}.")
    if m := _USE_FOR.match(c.text):
        what, value = m.group("what").lower(), m.group("v")
        if what.split()[0] in NOT_SUBJECTS or what.split()[-1] in STOPWORDS:
            return None
        belief = normalize_belief(value.strip("`"))
        kind = Kind.DECISION if c.changed else Kind.FACT
        return Finding(f"{what} {value_kind(belief)}", belief, kind, f"{cap(c.text)}.")
    return None


# ---------------------------------------------------------------- a thing called by its name

# "a soak-test rig called rig-7b", "a B2 bucket named scans-eu": what a thing of the project is called. After an
# indefinite article only ("the handler called cleanup()" is the verb), never after a negation or a removal, and
# the name is no stopword ("a function called from main").
_CALLED_NAME = re.compile(r"\b(?:a|an)\s+(?P<np>[\w-]+(?:\s+[\w-]+){0,3}?),?\s+(?:called|named)\s+"
                          r"(?P<name>`[^`]+`|[\w][\w.:/@+-]*[\w])(?=\s*(?:$|[,.;:!(—–-]\s|[,.;:!(]$)|\s+(?:and|in|on|with|for|that|which)\b)",
                          _I)


_DENIED_BEFORE = re.compile(r"\b(?:not|no|never|don't|doesn't|didn't|won't|without|delet\w*|remov\w*|drop\w*|kill\w*|"
                            r"retir\w*|decommission\w*|got rid of)\b", _I)


def extract_called(c: Clause) -> Finding | None:
    """What a thing of the project is called, mentioned along the way ("a soak-test rig called rig-7b"):
    keyed by the thing, the name as its value."""
    m = _CALLED_NAME.search(c.text)
    if m is None or _DENIED_BEFORE.search(c.text[: m.start()]):
        return None  # "we don't need a service called X", "I deleted a branch called X": no such thing holds
    name = m.group("name").strip("`")
    words = m.group("np").lower().split()
    if name.lower() in STOPWORDS or words[0] in NOT_SUBJECTS or any(w in STOPWORDS for w in words):
        return None
    return Finding(normalize_key(" ".join(words)), normalize_belief(name), Kind.FACT,
                   f"The {m.group('np')} is called {m.group('name')}.")
