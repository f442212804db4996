"""Readings of the unified diffs an assistant shows for a change it made.

A coding assistant often reports a change as a diff and nothing else: the removed line and the
added line of the same setting (``-PORT=8081`` / ``+PORT=9090``) *are* the statement "this value
changed", whatever the prose around them says. This module reads that structure, never the
wording: within one hunk, a removed line is paired with the added line most like it (the same
line with a few tokens changed); the tokens only the added line has are the new value, the ones
only the removed line has are retired (``Finding.retires``), unless another added line of the
reply still names them.

The memory keeps the added line as written, with the file it is in, so that nothing is reworded
or invented. Lines that are prose (comments), too long to be one setting, or changed too much to
be the same line are not read. A reply that asks before applying ("want me to apply this?")
states no change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher

from actors.llm.rules_clause import Finding
from actors.llm.rules_text import ASKS_FIRST
from engine.models import Kind

__all__ = ["ASKS", "FENCE", "TEST_PATH", "diff_findings", "enclosing", "hunks", "readable", "setting_key", "span", "tokens"]

FENCE = re.compile(r"^(`{3,}|~{3,})([^\n`]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
# A value or a name inside a line: identifiers, numbers, versions, hosts, paths, URIs.
_TOKEN = re.compile(r"[A-Za-z0-9_@#$~][\w.:/@#$~+-]*(?<![.:,-])")
_COMMENT = re.compile(r"^\s*(?:#(?!define|include|if|else|endif|undef)\s|//|--\s|;|/\*|\*\s)")
# The reply asks before applying: its diff is a proposal, not a change.
ASKS = re.compile(rf"\b(?:{ASKS_FIRST}|shall i|would you like|if you(?:'d)? like|i'd suggest|i would suggest|"
                   r"i propose|proposed|suggested)\b", re.I)
# A retired token must identify something on its own (a number, a host, a path, an identifier with
# a separator); a plain word ("build", "Hendrik") would retire every memory that uses it.
_DISTINCTIVE = re.compile(r"\d|[./:_@-]")
# A file of tests: what a test sets up is not how the project is configured.
TEST_PATH = re.compile(r"(?:^|/)(?:tests?|spec|specs|__tests__|testdata|fixtures)/|[._-](?:test|spec)\.\w+$|(?:^|/)test_[^/]+$")
MAX_LINE_CHARS = 160
MIN_SAME_SHARE = 0.5  # share of the pair's tokens left unchanged for two lines to be one setting
MAX_CHANGES_PER_REPLY = 8


@dataclass(frozen=True, slots=True)
class Hunk:
    """One run of removed lines and the added lines after them, in the file they change."""

    path: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    parent: str = ""  # the unchanged line its changes belong to ("healthcheck:", "- name: x", "[server]")


def _is_diff(info: str, body: str) -> bool:
    lines = body.splitlines()
    marked = [ln for ln in lines if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return info.strip().lower() in ("diff", "patch", "udiff") or (
        any(ln.startswith("@@") or ln.startswith("+++ ") for ln in lines) and bool(marked))


def hunks(text: str) -> Iterator[Hunk]:
    """The removed-then-added runs of every diff fenced in ``text``, in order."""
    for fence in FENCE.finditer(text):
        info, body = fence.group(2), fence.group(3)
        if not _is_diff(info, body):
            continue
        path, parent = "", ""
        context: list[str] = []  # the unchanged lines of this hunk so far
        removed: list[str] = []
        added: list[str] = []
        for line in [*body.splitlines(), ""]:
            if line.startswith(("+++ ", "--- ", "diff --git ")):
                if removed or added:  # the next file's header ends this file's last run
                    yield Hunk(path, tuple(removed), tuple(added), parent)
                removed, added, parent, context = [], [], "", []
                found = _FILE.match(line)
                path = found.group(1) if found else path
                continue
            if line.startswith("-"):
                if added:  # a new run starts
                    yield Hunk(path, tuple(removed), tuple(added), parent)
                    removed, added = [], []
                if not removed:
                    parent = enclosing(context, line[1:])
                removed.append(line[1:])
            elif line.startswith("+"):
                if not removed and not added:
                    parent = enclosing(context, line[1:])
                added.append(line[1:])
            else:
                if removed or added:
                    yield Hunk(path, tuple(removed), tuple(added), parent)
                removed, added = [], []
                if line.startswith("@@"):
                    context.clear()
                else:
                    context.append(line[1:] if line.startswith(" ") else line)


# A line that opens what the lines below it belong to: a block ("healthcheck:"), the head of a YAML list
# item ("- name: zephyr"), a TOML or INI section ("[tool.ruff]"), a Kconfig entry ("config APP_LOG_LEVEL").
_OPENS = re.compile(r"^\s*(?:[^\s#/].*:(?:\s*[{\[])?|-\s+[\w.-]+\s*:\s*\S.*|\[[\w.\": -]+\]|(?:menu)?config\s+[A-Z][A-Z0-9_]*)\s*$")
MAX_PARENT_CHARS = 60
MAX_PARENT_LOOKBACK = 200  # lines: a pasted diff of thousands of context lines stays linear


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def enclosing(context: list[str], changed: str) -> str:
    """The unchanged line above that ``changed`` belongs to: the nearest one less indented that opens a
    block or a list item, or a section header at any indent. A blank line ends the search, and so does
    a line as little indented as the changed one that opens nothing (a sibling of the changed line's
    block). The search looks back ``MAX_PARENT_LOOKBACK`` lines at most."""
    depth = _indent(changed)
    for line in reversed(context[-MAX_PARENT_LOOKBACK:]):
        stripped = line.strip()
        if not stripped:
            return ""
        opens = _OPENS.match(line) is not None
        if opens and (_indent(line) < depth or stripped.startswith("[")):
            return stripped if len(stripped) <= MAX_PARENT_CHARS else ""
        if _indent(line) < depth:
            return ""  # a less indented line that opens nothing: the changed line is in no block we can name
    return ""


def tokens(line: str) -> list[str]:
    return _TOKEN.findall(line)


# A line of program logic rather than of configuration: a statement that opens with a keyword of control
# flow or of bringing in code (not a YAML key of that name: ``import: x``), a lone brace or a line that opens
# a block, or one that computes: a comparison or a logical operator between spaces (a pin ``celery==5.4.0``
# stays a setting), arithmetic on the right of an assignment, a C cast. Quoted text and a closing comment are left out first, so
# that ``requires-python = ">=3.12"`` and ``cron = "*/5 * * * *"`` stay settings.
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_STATEMENT = re.compile(
    r"^\s*(?:(?:if|else|elif|for|foreach|while|switch|case|return|assert|import|require|try|catch|except|finally|raise|"
    r"throw|yield|await|def|fn|func|function|class|struct|impl|match|with|using|#include)(?=[\s(])(?!\s*[:=])"
    r"|(?:include|require)\s*\(|require\s+['\"]"
    r"|from\s+[\w.]+\s+import\b|use\s+[\w:]+::|(?:pub\s+)?(?:let|var)\s+(?:mut\s+)?[a-z_]\w*\s*(?::\s*[^=]+)?=)"
    r"|^\s*[{}]\s*[;,)]*\s*$|\{\s*$")
_COMPUTES = re.compile(r"\s[=!<>]=\s(?!\s*v?\d)|\s(?:&&|\|\|)\s(?!\s*(?:exit\s+\d+|true)\b|\s*['\"]?[\w.:/-]+['\"]?\s*;?\s*$)|"
                       r"\sif\s.+\selse\b|\s(?:and|not|in)\s(?!:)|\sor\s(?!\s*['\"]?[\w.:/-]+['\"]?\s*$)|(?<![\w)\]])\((?:u?int\d*_t|size_t|ssize_t|char|float|double|long|unsigned)\b")
_ARITHMETIC = re.compile(r"^[^=]*?[^=!<>:]=(?!=)[^=]*?(?:[\w)]\s[*/+%]\s[\w(]|\d\s-\s\d)")
_TRAILING_COMMENT = re.compile(r"\s(?:#|//|--)\s.*$")


def _code_statement(line: str) -> bool:
    """Whether a changed line is program logic (``if (len != size) {``, ``off = idx * SIZE;``, ``return amount``)
    rather than a setting: what code does is no value of the project's configuration."""
    bare = _TRAILING_COMMENT.sub("", _QUOTED.sub('""', line))
    return bool(_STATEMENT.search(bare) or _COMPUTES.search(bare) or _ARITHMETIC.search(bare))


def readable(line: str, parent: str = "") -> bool:
    """A line that can hold one setting: short, not a comment, not program logic (``_code_statement``),
    naming something beside its value (itself, or the block it is in: ``ports:`` above ``- "5433:5433"``)."""
    stripped = line.strip()
    return (bool(stripped) and len(stripped) <= MAX_LINE_CHARS and not _COMMENT.match(line)
            and not stripped.endswith(":") and len(tokens(line)) + bool(parent) >= 2 and not _code_statement(line))


def _calls(line: str, tokens: list[str]) -> bool:
    """Whether a changed token is code being called (``YAML.safe_load_file(``): behaviour, not a value."""
    return any(re.search(re.escape(t) + r"\(", line) for t in tokens)


def _changed(old: list[str], new: list[str]) -> tuple[list[str], list[str], float]:
    """Tokens only the old line has, only the new line has, and the share of tokens kept."""
    match = SequenceMatcher(a=old, b=new, autojunk=False)
    gone: list[str] = []
    came: list[str] = []
    for op, a0, a1, b0, b1 in match.get_opcodes():
        if op != "equal":
            gone.extend(old[a0:a1])
            came.extend(new[b0:b1])
    kept = 2 * sum(size for _, _, size in match.get_matching_blocks()) / max(len(old) + len(new), 1)
    return gone, came, kept


def span(line: str, tokens: list[str]) -> str:
    """The part of ``line`` from the first of ``tokens`` to the last, as written (a value is said
    as one phrase: "Aiyana Redcloud (@aiyana.r)", not the tokens joined), a bracket it opens closed."""
    starts = [m for m in _TOKEN.finditer(line) if m.group(0) in tokens]
    if not starts:
        return " ".join(tokens)
    begin, end = starts[0].start(), starts[-1].end()
    for opener, closer in ("()", "[]", "{}"):
        while line.count(opener, begin, end) > line.count(closer, begin, end) and line.startswith(closer, end):
            end += 1
    return line[begin:end]


def _pairs(hunk: Hunk) -> Iterator[tuple[str, list[str], list[str], str]]:
    """(added line, retired tokens, new tokens) for each removed line whose added twin is found."""
    used: set[int] = set()
    for old in hunk.removed:
        if not readable(old, hunk.parent):
            continue
        best: tuple[float, int, list[str], list[str]] | None = None
        for i, new in enumerate(hunk.added):
            if i in used or not readable(new, hunk.parent):
                continue
            gone, came, kept = _changed([hunk.parent, *tokens(old)], [hunk.parent, *tokens(new)])
            if came and kept >= MIN_SAME_SHARE and not _calls(new, came) and (best is None or kept > best[0]):
                best = (kept, i, gone, came)
        if best is not None:
            used.add(best[1])
            yield hunk.added[best[1]], best[2], best[3], old


def setting_key(line: str, came: list[str]) -> str:
    """The setting a line holds: its words without the new value, as a key ("aws_region value")."""
    words = [t.lower() for t in tokens(line) if t not in came and any(ch.isalpha() for ch in t)]
    return " ".join(words[:6])


def diff_findings(reply: str) -> list[Finding]:
    """Changes an assistant's reply shows as diffs: the added line of each changed setting."""
    if ASKS.search(reply):
        return []
    found = list(hunks(reply))
    still_named = {t for h in found for line in h.added for t in tokens(line)}
    out: list[Finding] = []
    seen: set[str] = set()
    for hunk in found:
        if TEST_PATH.search(hunk.path):
            continue  # a test's fixture values are not the project's settings
        for line, gone, came, old in _pairs(hunk):
            value = span(line, came)
            if value in seen:
                continue
            seen.add(value)
            shown = line.strip() if "`" in line else f"`{line.strip()}`"
            within = [f"under `{hunk.parent}`"] if hunk.parent else []
            within += [f"in {hunk.path}"] if hunk.path else []
            where = f" ({' '.join(within)})" if within else ""
            out.append(Finding(setting_key(f"{hunk.parent} {line}", came), value, Kind.DECISION, f"{shown}{where}.",
                               retires=_retired(old, gone, still_named)))
            if len(out) >= MAX_CHANGES_PER_REPLY:
                return out
    return out


def _word_of(line: str, token: str) -> str:
    """A short token as the option of ``line`` it is written in ("4" in ``--workers=4``): a value of one or two
    characters identifies nothing alone, the command-line option it belongs to does."""
    if len(token) >= 3:
        return token
    for word in line.split():
        word = word.strip("\"'`,;()[]{}")
        if word.startswith("-") and token in tokens(word) and word != token and len(word) <= 40:
            return word
    return token


def _retired(old: str, gone: list[str], still_named: set[str]) -> tuple[str, ...]:
    """The old values a change retires: each distinctive one alone ("8081", "us-east-2"); when a
    plain word went with them ("sidekiq" "7.2"), all of them together, so that "7.2" alone (another
    tool's version) is not retired. Never a value another added line of the reply still names."""
    still = [_word_of(old, t) for t in dict.fromkeys(gone) if t not in still_named]
    still = [t for t in dict.fromkeys(still) if t not in still_named]
    if not still:
        return ()
    if all(_DISTINCTIVE.search(t) and len(t) >= 3 for t in still):
        return tuple(still)
    together = span(old, still)
    return (together,) if _DISTINCTIVE.search(together) and len(still) > 1 else ()
