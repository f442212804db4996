"""Procedure and team-rule extractors of the rules client: how work is done here.

Commands (``test command``, ``lint command``...), the branch PRs target, who owns what,
deadlines, and style conventions ("always use type hints", "indent with 4 spaces").
Extractors take a ``Clause`` and return a ``Finding`` or None (``rules_extract`` tries them
in order); the command vocabulary is shared with ``rules_choices``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from actors.llm.rules_clause import (NOT_SUBJECTS, Clause, Finding, article_free, cap, lower_first, np_words,
                                     without_project_name)
from actors.llm.rules_facts import VERSIONED_NAME
from actors.llm.rules_text import STOPWORDS, TECH_PATTERN
from engine.keys import normalize_belief, normalize_key
from engine.models import Kind

_I = re.I


_EXE = (
    r"(?:pytest|make|npm|npx|pnpm|yarn|bunx?|cargo|go|python3?|uvx?|poetry|tox|nox|just|"
    r"\./[\w./-]+|bash|sh|docker(?:-compose| compose)?|kubectl|helm|terraform|ansible-playbook|"
    r"gradle|\./gradlew|mvn|dotnet|mix|bundle|rake|rails|jest|vitest|deno|node|tsc|ruff|mypy|"
    r"eslint|prettier|black|alembic|flask|django-admin|php|composer|cmake|ctest|bazel|nx|turbo|"
    r"hatch|pdm|pip|vercel|flyctl|fly|heroku|git|playwright|cypress)"
)
BACKTICKED = re.compile(r"`([^`]+)`")
STARTS_EXE = re.compile(rf"^{_EXE}\b", _I)
_BARE_COMMAND = re.compile(
    rf"\b(?:run|runs|running|with|via|using|command is(?: now)?|is(?: now)?|:)\s+"
    rf"({_EXE}\b(?:\s+(?!(?:for|to|instead|from|now|when|before|after|and|or|if|so|because|"
    rf"in|on|the|by|with|without|at|as|via|using|every|each|manually|locally|then|first|again|"
    rf"anymore|too|also|instead|please|pls)\b)[\w./:=@%+-]+){{0,5}})",
    _I,
)
_PURPOSES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (name, re.compile(pattern, _I), text)
    for name, pattern, text in (
        ("ci", r"\bci\b|\bcontinuous integration\b", "CI runs `{c}`."),
        ("type check", r"\btype[- ]?check\w*", "To type-check the code, run `{c}`."),
        # "test" between a determiner and another noun qualifies that noun ("your test account", "a test
        # token"), unless the noun is a part of running tests ("our test suite", "the test command")
        ("test", r"\b(?:tests|testing|specs?|e2e)\b|\btest\s+(?:suites?|command|commands|runner|target|task|script|"
                 r"job|step|runs?)\b|(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\byour )(?<!\bour )(?<!\bmy )(?<!\btheir )"
                 r"(?<!\bthis )(?<!\bthat )(?<!\beach )(?<!\bany )(?<!\bevery )\btest\b|\btest\b(?!\s+[a-z])",
         "To run the tests, run `{c}`."),
        ("lint", r"\blint\w*", "To lint the code, run `{c}`."),
        ("format", r"\bformat\w*", "To format the code, run `{c}`."),
        ("deploy", r"\bdeploy\w*|\bship(?:ping)? to prod", "To deploy, run `{c}`."),
        ("migration", r"\bmigrat\w*", "To run the database migrations, run `{c}`."),
        ("codegen", r"\bcode ?gen\w*|\b(?:re)?generat\w* (?:the )?(?:\w+ )?code\b", "To generate code, run `{c}`."),
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
# A copula before a bare one-word command, and the nouns of a subject that names a command line: only after
# those does "is `word`" give a command ("the test command is tox"); otherwise it names a tool or a target.
_IS_BEFORE = re.compile(r"is\b", _I)
_ARGUMENT_SHAPE = re.compile(r"^-|[/=.:@_]|\d|\w-\w")  # a flag, a path, an assignment, a file or a number: "-x", "src/", "--k=v"
_VERSION_WORD = re.compile(r"v?\d+(?:\.\d+)*(?:\.x)?", _I)
_COMMAND_NOUN = re.compile(r"\b(?:command|commands|cmd|script|invocation)\b", _I)
_RUN_WORD = re.compile(r"\b(?:run|runs|running|execute|command|cmd|script|use|using|with|via)\b|:", _I)


# The words of the "dev" purpose that name the task itself (start it, serve it), not only where it runs ("locally").
_STARTING = re.compile(r"\bdev server\b|\bstart\w*\b|\bserve\b|\bdev mode\b", _I)
_NARROWED = re.compile(r"\s-k\s|::|\s(?:[\w.-]+/[\w./-]*|[\w-]+\.(?:py|ts|js))(?:\s|$)")
_JUST_ADVERB = re.compile(rf"^just\s+(?={_EXE}\b)", _I)


_TEST_RUNNER = re.compile(r"^(?:\S+\s+)?(?:run\s+)?(?:pytest|jest|vitest|mocha|rspec|ctest|tox|nox)\b", _I)


def purposes_in(text: str, command: bool = False) -> list[str]:
    found = [name for name, pattern, _ in _PURPOSES if pattern.search(text)]
    if command and "test" not in found and _TEST_RUNNER.match(text):
        found.insert(0, "test")  # `pytest -x -q`, `uv run pytest`: a test runner
    return found


# Shapes that no shell line has: a flag or comment first (`--port 6380`, `-- +goose ...`, `//go:build x`,
# `# note`), a mapping line (`go-version-file: go.mod`), or one file name of a data or text format
# (`Cargo.lock`, `docker-compose.dev.yml`): a fragment quoted from a file, not a command.
_NOT_A_SHELL_LINE = re.compile(
    r"^(?:-|//|#|[\w.-]+:\s)"
    r"|^[\w./-]+\.(?:ya?ml|json|toml|lock|md|txt|cfg|ini|env|xml|csv|conf|properties|gradle|kts)$", _I)


# A suite of tests the clause names ("the integration tests", "e2e specs", "our smoke test suite"): the word
# before "tests". A verb ("run tests", "fixed tests"), a word of judgement or state ("flaky tests", "failing
# tests"), a tool ("the pytest tests") or one of two joined suites ("the unit and integration tests") names
# no suite of its own.
_SUITE = re.compile(r"(?P<before>\b\w+\s+)?\b(?P<suite>[a-z][\w-]*)\s+(?:tests?|test suite|specs?)\b", _I)
_NOT_A_SUITE = frozenset("run runs ran running rerun execute executes write wrote add added fix fixed skip skipped "
                         "flaky failing failed passing broken slow fast more most other whole entire existing "
                         "remaining missing old new".split())


def _suite(said: str) -> str:
    said = BACKTICKED.sub(" ", said)  # the clause's other commands are no suite ("`make db` first")
    for m in _SUITE.finditer(said):
        word, before = m.group("suite").lower(), (m.group("before") or "").strip().lower()
        if word in STOPWORDS or word in _NOT_A_SUITE or TECH_PATTERN.fullmatch(word) or before in {"and", "or"}:
            continue
        if re.match(r"\s*(?:and|or|,)\s", said[m.end("suite"):]):
            continue  # "the unit and integration tests": two suites
        return word
    return ""


# The part of the project a build, deploy, release or start command is for: "to build the CLI", "deploy the
# docs with", "for the dashboard" closing the clause, or the clause's subject ("the bot deploys with").
_PART_TASKS = frozenset({"build", "deploy", "release", "dev"})
_TASK_VERB = r"(?:build|compile|deploy|ship|release|publish|start|serve|run)"
_COMMAND_NP = r"(?P<np>[A-Za-z][\w.+#-]*(?:\s+[A-Za-z][\w.+#-]*)??)"
_COMMAND_PART = (
    re.compile(rf"\b{_TASK_VERB}\s+(?:the|our)\s+{_COMMAND_NP}(?=\s*(?:$|[,.;])|\s+(?:with|via|using|by|run|locally)\b)", _I),
    re.compile(rf"\bfor\s+(?:the|our)\s+{_COMMAND_NP}\s*(?:$|[,.;])", _I),
    re.compile(rf"^\s*(?:the\s+|our\s+)?{_COMMAND_NP}\s+(?:deploys|builds|ships|releases|starts|is\s+(?:deployed|built|released))"
               rf"\s+(?:with|via|using|by)\b", _I),
)
# Words that together name the whole project ("to build the project", "for the codebase"); with another word
# they name a part ("the kiosk app").
_WHOLE_WORDS = frozenset("project projects repo repository monorepo codebase app application apps code stack site".split())
# Words that never name a part: the task and its outputs, places and times to run it ("for a release", "the dev
# server", "the qa environment", "for the moment", "the first time").
_NEVER_A_PART = frozenset("thing things everything whole entire all release releases build builds deploy deploys prod "
                          "production staging dev local changes change image images artifact artifacts bundle tests test "
                          "server env environment branch binary binaries wheel wheels crate package packages first "
                          "moment time times meantime now today week sprint rest end start".split())


_RUN_VERBS = frozenset("run runs use call execute type try do".split())  # "for a release run `x`": no "release run"


def _command_part(said: str, purpose: str, project: str) -> str:
    """The part of the project ``said`` names a ``purpose`` command for, as said ("CLI"), or ""."""
    if purpose not in _PART_TASKS:
        return ""
    for pattern in _COMMAND_PART:
        m = pattern.search(said.strip())
        if m is None:
            continue
        kept = without_project_name(m.group("np").split(), project)  # "the tidewater CLI": "CLI"
        words = [w.lower() for w in kept]
        if not words or any(w in STOPWORDS or w in _RUN_VERBS or w in _NEVER_A_PART for w in words) \
                or set(words) <= _WHOLE_WORDS or TECH_PATTERN.search(m.group("np")):
            continue
        return " ".join(kept)
    return ""


def _command_finding(command: str, purpose: str, said: str = "", project: str = "") -> Finding | None:
    """The finding of ``command`` run for ``purpose``; ``said``, the rest of the clause, may name the
    suite of a test command ("the integration tests run with X": ``integration test command``), so that
    suites of one project keep a command each."""
    if _NOT_A_SHELL_LINE.search(command):
        return None
    if command.lower().startswith("git ") and purpose not in {"deploy", "release"}:
        return None  # a version-control operation, not how the project is built or tested
    if purpose == "test" and _NARROWED.search(f" {command.partition(' ')[2]} "):  # the program may be a path
        return None  # "pytest -k slow", "pytest tests/billing": a one-off subset, not *the* command
    template = next(t for name, _, t in _PURPOSES if name == purpose)
    part = _command_part(said, purpose, project)
    if part:  # "to build the CLI, run X" and "for the dashboard run Y": one command per part
        return Finding(f"{part.lower()} {purpose} command", normalize_belief(command), Kind.PROCEDURE,
                       template.format(c=command).replace("the project", f"the {part}").replace("the app", f"the {part}")
                       if purpose in {"build", "dev"} else f"To {purpose} the {part}, run `{command}`.")
    suite = _suite(said) if purpose == "test" else ""
    if suite:
        return Finding(f"{suite} test command", normalize_belief(command), Kind.PROCEDURE,
                       f"To run the {suite} tests, run `{command}`.")
    return Finding(f"{purpose} command", normalize_belief(command), Kind.PROCEDURE, template.format(c=command))


# Code, not a shell line: an argument list, a call, a block, a keyword argument ("`owners.sms_opt_in
# :boolean, default: false`", "`use Appsignal.Phoenix`" is Elixir, read by the run word around it only).
# `envoy run deploy`, `task exec migrate`: a program with a run/exec subcommand is a shell line.
_SUBCOMMAND = re.compile(r"^[\w.-]+\s+(?:run|exec)\s+\S", _I)
_CODE_SHAPED = re.compile(r",\s|[(){};]|=>|\s:\w|^[A-Z]|^\w+\.\w+\s")


# A verb of running right before a command in backticks: "run `behave`", "type `tox` to ...".
_RUN_BEFORE = re.compile(r"(?:^|\b(?:just|then|please|pls|always|you|we|to)\s+)(?:run|type|execute|invoke)\s+$", _I)


def _named_as_command(command: str, around: str) -> bool:
    """A backticked line that starts with no known executable is a command only when the words
    around it (not its own words: `use Foo` is code) call it one, and it is shaped like a shell line."""
    shell_words = " " in command and command != "code" and not _CODE_SHAPED.search(command)
    return shell_words and bool(_RUN_WORD.search(around) or _SUBCOMMAND.search(command))


# Words before a command that say it is the one replaced (``rules_clause.EXCLUDED_BEFORE``, for commands).
_REPLACED_BEFORE = re.compile(r"(?:\binstead of|\brather than|\(was|\bwas|\bused to be|\bno longer|\breplac\w*|"
                              r"\bswap(?:ped)?|\btrade(?:d)?|\bditch(?:ed)?|"  # "swap `a` for `b`": `a` is what goes
                              r"\bnot|\b(?:the\s+)?(?:old|previous|former))\s+$", _I)


# "from `a` to `b`": the span after "from" is the one replaced when another span follows after "to" ("run the
# tests from `tox -e py311`" names where they run from, the command itself)
_FROM_BEFORE = re.compile(r"\bfrom\s+$", _I)
_TO_CODE_AFTER = re.compile(r"\s+(?:over\s+)?to\s+`", _I)


# A determiner just before the code makes it a thing talked about, not a line to run: "the `python` from
# `.tool-versions`", "on the first `cargo` call", "a `make` target"; so does a verb of depending on it ("the image
# needs `protoc`": a dependency).
_THING_BEFORE = re.compile(r"\b(?:(?:the|a|an|this|that|its|their|our|first|every|each)\s+(?:first\s+|same\s+|new\s+|old\s+)?|"
                           r"(?:needs?|requires?|depends\s+on|wraps|bundles|ships(?:\s+with)?)\s+(?:only\s+)?)$", _I)


# A clause reporting that something went wrong ("getting connection refused running X", "X fails on the runner"):
# it tells what broke, not how a task is done.
_GOING_WRONG = re.compile(r"\b(?:fail(?:s|ed|ing)?|errors?|erroring|refused|crash(?:es|ed|ing)?|hangs|hanging|timed out|"
                          r"times out|exceptions?|traceback|segfaults?|(?:does|did)n['’]?t work|broken)\b", _I)


def extract_command(c: Clause) -> Finding | None:
    if _GOING_WRONG.search(re.sub(r"`[^`]*`|\S*-\S*", " ", c.text)):  # not a word of a command or a flag
        return None
    spans = list(BACKTICKED.finditer(c.text))
    previous_end = 0
    for i, span in enumerate(spans):
        command = span.group(1).strip()
        if _NOT_A_SHELL_LINE.search(command):
            continue  # a fragment quoted from a file: the next span may be the command, with the same lead
        lead = c.text[previous_end : span.start()]
        if _REPLACED_BEFORE.search(c.text[: span.start()]) or (
                _FROM_BEFORE.search(c.text[: span.start()]) and _TO_CODE_AFTER.match(c.text[span.end():])):
            # "`just sync` instead of `make deps`", "(was `make t`)": the command replaced; what the clause said
            # before it still tells the purpose of the one that replaces it ("the lint command from `a` to `b`")
            continue
        previous_end = span.end()
        if command[:1].isdigit() or (" " not in command and _THING_BEFORE.search(c.text[: span.start()])):
            continue  # "a timestamp (`2024-01-09 06:30:00`)", "the `python` from `.tool-versions`": a value or a thing named
        if not (STARTS_EXE.match(command) or _named_as_command(command, c.text[: span.start()] + c.text[span.end() :])
                or (re.fullmatch(r"[a-z][\w.:-]*", command) and _RUN_BEFORE.search(lead))):
            continue  # a word of code is a command when a verb of running it comes right before: "run `behave`"
        # The purpose stated just before this command ("lint with `...`"), else the command's
        # own words (`pnpm build`), else the words after it ("`...` for tests").
        lead_p, own_p = purposes_in(lead), purposes_in(command, command=True)
        both = [p for p in lead_p if p in own_p]
        if both:
            purpose = both[0]
        elif lead_p == ["dev"] and own_p and not _STARTING.search(lead):
            # "locally", "start": where or when a command runs, which its own task outranks
            # ("locally we run `pytest -x`" is the test command, not how to start the app)
            purpose = own_p[0]
        elif len(lead_p) == 1 or (lead_p and not own_p):
            purpose = lead_p[0]
        elif own_p:
            purpose = own_p[0]
        elif purposes_in(c.text[span.end() : spans[i + 1].start() if i + 1 < len(spans) else None]):
            purpose = purposes_in(c.text[span.end() : spans[i + 1].start() if i + 1 < len(spans) else None])[0]
        else:
            continue
        return _command_finding(command, purpose, c.text[: span.start()] + " " + c.text[span.end():], c.project)
    if spans:
        return None
    bare = _BARE_COMMAND.search(c.text)
    if not bare:
        return None
    command = _JUST_ADVERB.sub("", bare.group(1).strip())
    if all(_VERSION_WORD.fullmatch(w) for w in command.split()[1:]) and " " in command:
        return None  # "node 18.19", "go 1.22": a runtime and its version, no command line
    if _IS_BEFORE.match(c.text[bare.start():bare.start(1)]) and not _COMMAND_NOUN.search(c.text[: bare.start()]) \
            and (" " not in command or (command.split()[0].lower() == "just"
                                        and not any(_ARGUMENT_SHAPE.search(w) for w in command.split()[1:]))):
        # "the release host is heroku", "the formatter is black": a tool named by a copula, no command line;
        # "the build is just slow": after a copula "just" is the adverb, unless arguments follow it
        return None
    rest = c.text.replace(bare.group(1), " ")
    for where in (rest, command):
        found = purposes_in(where)
        if found:
            return _command_finding(command, found[0], rest, c.project)
    return None


# A question that asks how to do a task ("how do we build the docs?") and a reply that answers it with a
# bare instruction ("Run `mdbook build`, it writes to book/."): the reply's command is the task's.
_HOW_TO = re.compile(r"\bhow\s+(?:do|can|should|would)\s+(?:i|we|you)\s+(?P<task>[^?.,;\n]{3,80})(?:[?.,;\n]|$)", _I)
MAX_ANSWER_CHARS = 400  # a sentence longer than a clause is no bare instruction
_RUN_ANSWER = re.compile(r"^(?:just\s+)?run:?\s+`(?P<c>[^`\n]+)`(?P<rest>\s[^`\n]*)?\.?$", _I)


def answered_command(user: str, reply_sentences: Sequence[str]) -> Finding | None:
    """The command a reply gives for the task the user asked how to do, when the reply's own
    sentence names no task (a sentence that names one is read by :func:`extract_command`)."""
    asked = _HOW_TO.search(user)
    tasks = purposes_in(asked.group("task")) if asked else []
    if len(tasks) != 1:
        return None
    for sentence in reply_sentences:
        run = _RUN_ANSWER.match(sentence.strip()[:MAX_ANSWER_CHARS])
        if run is None:
            continue
        command = run.group("c").strip()
        if purposes_in(run.group("rest") or "") or command.lower().startswith("git "):
            continue  # "Run `make lint` to lint it": a task of its own; `git status` is no task's command
        if STARTS_EXE.match(command) or _named_as_command(command, "run"):
            return _command_finding(command, tasks[0])
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
    return Finding("default branch", normalize_belief(branch), Kind.FACT, f"The default branch is `{branch}`.")


_PATH_LIKE = re.compile(r"/")


def extract_branch(c: Clause) -> Finding | None:
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


_PERSON = r"(?P<who>@[\w-]+|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
# Things that are someone's without being a part of the project: a say in a matter, a fault, an idea.
_NOT_OWNED = frozenset("decision decisions blame idea ideas call say fault turn choice mistake pleasure credit".split())
# A time the care is limited to: a stand-in, not an owner.
_FOR_A_WHILE = re.compile(r"\b(?:while|until|during|for\s+the\s+(?:week|weekend|day|sprint|month)|on\s+leave|this\s+week)\b", _I)
_OWNS = re.compile(
    rf"^{_PERSON}\s+(?:now\s+)?(?:owns|is responsible for|is in charge of|maintains|is the owner of|"
    r"is the maintainer of|leads|takes care of)\s+(?P<what>[\w\s./-]{2,40}?)$"
)
_OWNED = re.compile(
    r"^(?P<what>[\w\s./-]{2,40}?)\s+(?:is|are)\s+(?:now\s+)?(?:owned|maintained|handled|led|run)\s+by\s+"
    + _PERSON + r"$"
)
NOT_PEOPLE = frozenset("We I It This That The You They He She There Our My".split())


# Ownership in any wording gives `<thing> owner`: "P owns X, ask them", "X belongs to P",
# "owner of X is P", "P took over X from Q", "ownership of X passed to P", "X has a new
# owner: P", "anything in X needs a review from P". The thing is the noun phrase, cut at the
# first verb or preposition; the person a capitalised name.
_PERSON_ANY = r"(?P<who>@[\w-]+|[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
# After "owner of X is", a name typed in lower case counts only as the clause's last word or
# before a time adverbial: a lower-case word with more after it ("is unclear right now") is a
# description, not a person.
_PERSON_ENDING = (r"(?P<who>@[\w-]+|[A-Z][a-zA-Z'-]+(?:\s[A-Z][a-zA-Z'-]+)?(?![\w'])|[a-z]{3,12}(?=\s*(?:[.,;:!?()]|$)|"
                  r"\s+(?:now|today|yesterday|last|this|next|since|from|as of|starting|effective|for|in|on|until|"
                  r"after|and|who|but)\b))")
_OWNER_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(_PERSON_ANY + r"\s+(?:now\s+)?(?:owns|is responsible for|is in charge of|maintains|is the owner of|"
               r"is the maintainer of|leads|takes care of|took over|has taken over|takes over|inherited|"
               r"reviews everything in|signs off on)\s+(?P<what>.+)$"),
    # "Ana is our billing person", "Tomas is the go-to for the CI runners": the area someone is the person for
    re.compile(_PERSON_ANY + r"\s+is\s+(?:now\s+)?(?:our|the)\s+(?!(?:main|best|right|only|new|old|first|usual|"
               r"go-to|tech|team|other|same|default|primary|contact)\b)(?P<what>[\w][\w\s./-]{1,30}?)\s+"
               r"(?:person|guy|contact|expert|specialist)\b"),
    re.compile(_PERSON_ANY + r"\s+is\s+(?:now\s+)?(?:our|the)\s+(?:go-?to|one|person|contact)\s+(?:person\s+)?for\s+"
               r"(?:all\s+|any\s+|the\s+)?(?P<what>.+)$"),
    re.compile(r"(?:^|\b(?:the|our)\s+)(?P<what>[\w][\w\s./-]{1,40}?)\s+(?:now\s+)?(?:belongs|belong)\s+to\s+" + _PERSON_ANY),
    re.compile(r"\b(?i:(?:owner|maintainer)\s+of)\s+(?P<what>.+?)(?i:\s+(?:is|=|:)\s+(?:now\s+)?)" + _PERSON_ENDING),
    re.compile(r"\b(?i:ownership\s+of)\s+(?P<what>.+?)(?i:\s+(?:has\s+)?(?:passed|went|moved|was handed|was transferred|"
               r"transferred|goes|is going)\s+(?:over\s+)?to\s+)" + _PERSON_ENDING),
    re.compile(r"(?:^|\b(?:the|our)\s+)(?P<what>[\w][\w\s./-]{1,40}?)\s+(?:has|got)\s+a\s+new\s+(?:owner|maintainer)\s*:?\s+"
               + _PERSON_ANY),
    # "billing is Rosa's area", "the exporter is @dkim's responsibility"
    re.compile(r"^(?P<what>(?:the\s+|our\s+)?[\w][\w\s./-]{1,40}?)\s+(?:is|are)\s+(?:now\s+)?"
               r"(?P<who>@[\w-]+|[A-Za-z][a-z]{2,11})(?:'s|’s)\s+(?:area|domain|responsibility|baby|turf)\b"),
    # "the exporter is Rosa's (now)": a capitalised name's possessive ending the clause, after a part of the project
    # named with "the" or "our" (``_NOT_OWNED``: "the decision is Rosa's" names no part)
    re.compile(r"^(?P<what>(?:the|our)\s+[\w][\w\s./-]{1,40}?)\s+(?:is|are)\s+(?:now\s+)?"
               r"(?P<who>@[\w-]+|(?-i:[A-Z][a-z]{2,11}))(?:'s|’s)(?:\s+now)?\s*[.!]?$"),
    re.compile(r"\b(?i:anything|everything|changes?)\s+(?:in|to)\s+(?P<what>.+?)\s+(?:needs?|requires?|goes? through)\s+"
               r"(?:a\s+)?(?:review|approval|sign-?off)\s+(?:from|by)\s+" + _PERSON_ANY),
)


# A name written in lower case, as people type in chat ("ines takes over the invoices"): only as the
# clause's first word and only with a verb of taking or holding ownership, which tools and words that
# start a clause ("nginx handles TLS", "everyone owns the wiki") do not pair with a thing they own.
_LOWER_OWNER = re.compile(r"^(?:[^:`]{1,60}:\s+)?(?P<who>[a-z]{3,12})\s+(?:now\s+)?(?:owns|takes over|took over|"
                          r"has taken over|is responsible for|is in charge of)\s+(?P<what>.+)$")
# Words that say a thing has nobody (or nobody yet) rather than naming someone.
_NOBODY = frozenset("everyone everybody someone somebody nobody anyone anybody each whoever none all "
                    "unclear unknown undecided unassigned vacant open tbd tba pending shared rotating "
                    "him her them me us".split())


def extract_owner(c: Clause) -> Finding | None:
    lower = _LOWER_OWNER.match(c.text)
    if lower and lower.group("who") not in STOPWORDS | _NOBODY and not TECH_PATTERN.search(lower.group("who")):
        named = extract_owner(dataclasses.replace(c, text=lower.group("who").capitalize() + c.text[lower.end("who"):]))
        if named is not None:
            return named
    match = _OWNS.search(c.text) or _OWNED.search(c.text)
    if not match:
        for pattern in _OWNER_PATTERNS:
            found = pattern.search(c.text)
            if found and found.group("who").split()[0] not in NOT_PEOPLE \
                    and found.group("who").lower() not in _NOBODY | STOPWORDS \
                    and not (TECH_PATTERN.fullmatch(found.group("who")) or VERSIONED_NAME.fullmatch(found.group("who"))):
                what = found.group("what").strip()
                head = re.match(r"(?:the|our|my)\s+", what, _I)
                phrase = np_words(what, head.end() if head else 0)
                if phrase:
                    who = found.group("who")
                    who = who.capitalize() if who.islower() and not who.startswith("@") else who  # "kofi's responsibility"
                    thing = lower_first(phrase)
                    if thing.split()[0].lower() in NOT_SUBJECTS | {"them", "him", "her"} \
                            or what.split()[-1].lower() in _NOT_OWNED:
                        return None
                    article = "the " if head or not thing[:1].isupper() and len(thing.split()) > 1 else ""
                    return Finding(f"{article_free(thing)} owner", normalize_belief(who), Kind.FACT,
                                   f"{who} owns {article}{thing}.")
        return None
    if match.group("who").split()[0] in NOT_PEOPLE:
        return None
    who, what = match.group("who"), lower_first(match.group("what").strip())
    thing = article_free(what)
    if not thing or thing.split()[0].lower() in NOT_SUBJECTS | {"them", "him", "her", "his", "their", "my"}:
        return None  # "Dana owns it": no coreference; "Dana maintains her own blog": not the project's
    if _FOR_A_WHILE.search(thing):
        return None  # "Ana maintains the runners while Ben is on leave": a stand-in, no owner
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


def extract_deadline(c: Clause) -> Finding | None:
    match = next((m for m in (p.search(c.text) for p in _DEADLINES) if m), None)
    if not match:
        return None
    what = match.group("what") or ""
    thing = article_free(what).strip()
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
CONVENTIONS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = tuple(
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


_PAST = re.compile(r"\b(?:was|were|had|did|used to)\b")


# "always" or "never" that describes rather than rules: "like always" ("as usual"), and after a verb of going
# wrong ("the job hangs always at the upload step": a complaint).
_NOT_A_RULE = re.compile(r"\blike\s+always\b|\b(?:hangs?|fails?|breaks?|crash(?:es)?|dies|stalls?|freezes?|"
                         r"times?\s+out|errors?\s+out|flakes?)\s+(?:always|never)\b")


def extract_convention(c: Clause) -> Finding | None:
    if not (_PREFERENCE_TRIGGER.search(c.text) or c.explicit):
        return None  # "right now the client does not call it" is a remark, not a convention
    for key, subject, value in CONVENTIONS:
        if not subject.search(c.text):
            continue
        hits = list(value.finditer(c.text)) if value else []
        live = [m for m in hits if not _NEVER_BEFORE.search(c.text[max(0, m.start() - 20) : m.start()])]
        found = live[0] if live else hits[0] if hits else None
        belief = normalize_belief(found.group(1)) if found else normalize_belief(_rule_text(c.text))
        if key == "response language" and found:
            belief = normalize_belief(found.group(1))
        return Finding(key, belief, Kind.PREFERENCE, cap(_rule_text(c.text)) + ".", weight=0.05)
    if (c.speaker == "user" and re.search(r"\b(?:always|never)\b", re.sub(r"\b(?:as|like)\s+always\b", "", c.low))
            and len(c.low.split()) >= 3
            and not _PAST.search(c.low) and not _NOT_A_RULE.search(c.low)):
        # an assistant's "never" describes the code it wrote; it sets no rule. Nor does the past:
        # "thursday builds were always rushed" is a complaint about what happened, not a convention.
        return Finding("", "", Kind.PREFERENCE, cap(c.text) + ".")
    return None
