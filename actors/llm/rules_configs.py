"""Readings of the configuration files an assistant shows as they are.

A coding assistant that looks through a project often shows a configuration file as it stands:
"`config/relay.toml`:" and then the file in a fenced block. Each setting line of that block is a
fact about the project, said by whoever read the file, however the prose around it is worded.
This module reads that structure: a fenced block of a configuration language (TOML, YAML, INI,
dotenv, JSON, HCL, a devicetree), introduced by a line that names the file it shows, in a reply
that proposes nothing. Every line that sets a value becomes a memory of the line as written, with
its section and its file, keyed as the diff reader keys the same line (``rules_diffs``), so that a
later diff of that setting replaces it.

Not read: a block the user pastes (it may come from any system), a block introduced as a proposal
or an example ("something like", "I'd add", "for example"), a block of a programming language or
a shell session, a line that points elsewhere (``${VAR}``, ``{{ var }}``), and a line whose value
has no shape (a plain word such as ``true`` or ``info`` says too little alone to be recalled by).
"""

from __future__ import annotations

import re

from actors.llm.rules_clause import Finding
from actors.llm.rules_diffs import ASKS, FENCE, MAX_LINE_CHARS, TEST_PATH, enclosing, readable, setting_key, span, tokens
from engine.models import Kind

__all__ = ["config_findings"]

# The info string of a fence that holds configuration.
_CONFIG_LANGS = frozenset("toml yaml yml ini cfg conf env dotenv properties hcl tf json jsonc json5 dts kconfig".split())
# A line that names the file the block shows: a path with an extension, a dotfile, or a file known by name.
_FILE_NAMED = re.compile(r"(?:[\w./-]*[\w-]\.(?:toml|ya?ml|ini|cfg|conf|env|properties|hcl|tf|json|dts|dtsi|overlay)|"
                         r"(?<![\w.])\.env(?:\.[\w-]+)?|\b(?:Dockerfile|Containerfile|Kconfig|prj\.conf|\.tool-versions))\b")
# An introduction that offers, proposes, illustrates, instructs or looks back rather than shows what is there now:
# "something like", "add this to", "the old file had", "before my change", "the upstream defaults", "I'll change".
_PROPOSED = re.compile(r"\b(?:could|would|might|suggest\w*|propos\w*|example|e\.g\.|for instance|something like|"
                       r"option|alternatively|if you|i'd|i would|i'll|i will|going to|we could|should|needs? to|instead|"
                       r"template|sample|upstream|docs?|documentation|defaults?|vendor|look like)\b|^\W*(?:add|create|put|"
                       r"append|insert|paste|use|set|change|replace|update|edit|copy|save|write|make)\b", re.I)
# An introduction that looks back ("the old file had", "before my change it was"), unless it says what holds now.
_LOOKS_BACK = re.compile(r"\b(?:old|before|previous\w*|was|were|had|wrong|broken|invalid|error)\b", re.I)
_BACKTICKED = re.compile(r"`[^`]*`")
# A setting whose value is a credential, by its name or by a password inside a URL: never stored.
_CREDENTIAL = re.compile(r"(?:pass(?:word|wd)?|secret|token|api_?key|private_?key|credential|auth|webhook|dsn|"
                         r"access_?key)[\w.-]*[\"']?\s*[:=]|://[^/\s:@]+:[^@\s]+@", re.I)
# A value that only points elsewhere: an environment reference or a template expression.
_INDIRECT = re.compile(r"\$\{|\$\(|\{\{|\{%|<%|%\(")
# The setting and its value: "name = value", "name: value", "NAME=value", a quoted JSON name.
_SETS = re.compile(r"^\s*(?P<item>-\s+)?(?P<name>[\"']?[A-Za-z_][\w.@/-]*[\"']?)\s*(?:=\s*|:\s+)(?P<value>\S.*)$")
# An item of a list under a named block: "ports:" and then '- "5433:5432"'.
_ITEM = re.compile(r"^\s*-\s+(?P<value>[^\s:#][^#]*?|\"[^\"]*\"|'[^']*')\s*$")
# A value with a shape worth recalling by (quotes aside): a digit, a path, a host or an inner separator.
_SHAPED = re.compile(r"\d|[./:@]|\w[-_]\w")
# A comment closing a line: " # ...", " // ...", " /* ... */".
_COMMENT_AFTER = re.compile(r"\s+(?:#|//|/\*).*$")
MAX_PER_BLOCK = 12
MAX_PER_REPLY = 24


def _intro(reply: str, start: int) -> str:
    """The last line of prose before a fence (what the block is said to be)."""
    before = reply[:start].rstrip()
    return before[before.rfind("\n") + 1:]


def config_findings(reply: str) -> list[Finding]:
    """Settings of the configuration files an assistant's reply shows as they stand."""
    if ASKS.search(reply):
        return []
    out: list[Finding] = []
    keys: set[str] = set()
    for fence in FENCE.finditer(reply):
        info, body = fence.group(2).strip().lower(), fence.group(3)
        intro = _intro(reply, fence.start())
        path = _FILE_NAMED.search(intro)
        if info not in _CONFIG_LANGS or path is None or TEST_PATH.search(path.group(0)) \
                or _PROPOSED.search(words := _BACKTICKED.sub(" ", intro)) \
                or (_LOOKS_BACK.search(words) and not re.search(r"\bnow\b", words, re.I)):  # a path's own words say nothing
            continue
        context: list[str] = []
        taken = 0
        for line in body.splitlines():
            parent = enclosing(context, line)
            context.append(line)
            if len(line) > MAX_LINE_CHARS or _CREDENTIAL.search(line):
                continue  # a paste, not a setting; a credential is never stored
            found = _SETS.match(line)
            item = _ITEM.match(line) if found is None and parent else None
            if (found is None and item is None) or not readable(line, parent) or _INDIRECT.search(line):
                continue
            if found is not None and found.group("item"):
                continue  # "- name: LOG_LEVEL", "- uses: ...": an entry of a list of records, no setting of its own
            name = found.group("name") if found else ""
            value = _COMMENT_AFTER.sub("", (found or item).group("value")).strip().rstrip(",; ")  # type: ignore[union-attr]
            if "{" in value or value in ("[", "|", ">") or not _SHAPED.search(value):
                continue
            came = tokens(value)
            # Keyed by its section and name, as the diff reader keys a change of the value alone.
            key = setting_key(f"{parent} {name}" if name else parent, [])
            if not came or not key or key in keys:
                continue  # one value per setting a reply: a second line of the same name is another node's
            keys.add(key)
            shown = _COMMENT_AFTER.sub("", line).strip().rstrip(",")
            within = [f"under `{parent}`"] if parent else []
            within.append(f"in {path.group(0)}")
            bare = value.strip("\"'`")
            bare = bare[1:-1] if bare[:1] + bare[-1:] in ("<>", "[]") else bare  # "<256>", '["8000:8000"]'
            out.append(Finding(key, bare.strip("\"' ") or span(value, came), Kind.FACT,
                               f"`{shown}` ({' '.join(within)})."))
            taken += 1
            if taken >= MAX_PER_BLOCK or len(out) >= MAX_PER_REPLY:
                break
        if len(out) >= MAX_PER_REPLY:
            break
    return out
