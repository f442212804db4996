"""The values a memory states, by their shape: a time, a day of the week, a version, a host, a path, a URL, a number, code.

Used by retrieval to tell when two memories answer one question with different values of the
same kind (DESIGN §4, "the later statement is current"). Shapes, not vocabularies: nothing here
knows a tool, a service or a benchmark's wording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

# A clock time, the one pattern for it in the project (value shapes, key kinds, the rules client's
# schedule reading): hours 0-23, minutes, optional seconds; not part of a longer number or a version.
CLOCK_TIME = r"(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:]|\.\d)"

# A day of the week, one or many ("Tuesday", "on Thursdays"): a schedule's value as much as a clock time.
WEEKDAY = r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b"

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s`'\")]+", re.I)),
    ("code", re.compile(r"`[^`\n]+`")),
    ("time", re.compile(CLOCK_TIME)),
    ("host", re.compile(r"(?<![\w/.~-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b(?![\w/])", re.I)),
    ("path", re.compile(r"(?:~|\.{1,2})?/[\w.@~-]+(?:/[\w.@~-]*)*|\b[\w-]+(?:/[\w.-]+)+/?")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")),
    ("day", re.compile(WEEKDAY, re.I)),
    ("number", re.compile(r"(?<![\w.:-])\d+(?!\w)(?![.:-]\w)")),
)

# What every match of a shape contains (the pattern cannot match a text without it): a literal,
# found by a substring search, then a cheap pattern, searched from the first digit for the shapes
# that start with one. A shape whose hint is absent is not scanned. A full read is eight scans,
# about 47 us a sentence, and a recall at 100k memories reads a dozen texts that the cache below
# has not seen (issue 15); most texts have no URL, code, clock time or path.
_HINTS: dict[str, tuple[str, re.Pattern[str] | None, bool]] = {  # shape: (literal, pattern, from the first digit)
    "url": ("://", None, False),
    "code": ("`", None, False),
    "time": (":", re.compile(r"\d:\d"), True),  # CLOCK_TIME: hours, a colon, minutes
    "host": (".", re.compile(r"\.[a-z]{2}", re.I), False),  # the last label: a dot and two letters or more
    "path": ("/", None, False),
    "version": (".", re.compile(r"\d\.\d"), True),
    "day": ("", re.compile("day", re.I), False),
    "number": ("", None, True),
}
_DIGIT = re.compile(r"\d")


def _may_hold(name: str, text: str, first_digit: int) -> bool:
    """Whether ``text`` has the hint of shape ``name`` (``first_digit``: where its first digit is, or -1)."""
    literal, pattern, from_digit = _HINTS[name]
    if literal not in text or (from_digit and first_digit < 0):
        return False
    return pattern is None or pattern.search(text, first_digit if from_digit else 0) is not None


_HOST_OF_URL = re.compile(r"://(?:[^@/\s]+@)?([^/:\s]+)")


def _read(text: str, out: dict[str, set[str]]) -> None:
    taken: list[tuple[int, int]] = []
    digit = _DIGIT.search(text)
    first_digit = digit.start() if digit is not None else -1
    for name, pattern in _SHAPES:
        if not _may_hold(name, text, first_digit):
            continue
        for m in pattern.finditer(text):
            lo, hi = m.span()
            if taken and any(lo < end and start < hi for start, end in taken):
                continue
            taken.append((lo, hi))
            value = m.group(0).strip("`").lower().rstrip(".")
            if name == "day":
                value = value.rstrip("s")  # "thursdays" is "thursday"
            out.setdefault(name, set()).add(value)
            if name == "url" and (host := _HOST_OF_URL.search(value)):
                out.setdefault("host", set()).add(host.group(1))  # a URL names its host too
            if name == "code":
                _read(value, out)  # `uv python install 3.11` states a version as well


# A recall compares every pair of its ranked candidates (retrieval._later_values): the same few
# dozen texts are read again and again, and reading one is eight regex scans (it was 15% of a
# live recall at 1k, py-spy, issue 15). Pure in its argument, so a bounded cache is safe.
@lru_cache(maxsize=8192)
def value_shapes(text: str) -> Mapping[str, frozenset[str]]:
    """The values of ``text`` grouped by shape; in one text a value is read by the first shape that reads it."""
    out: dict[str, set[str]] = {}
    _read(text, out)
    return MappingProxyType({k: frozenset(v) for k, v in out.items()})


def other_values(older: str, newer: str) -> bool:
    """Whether ``newer`` states, for a shape that both state, none of the values ``older`` states."""
    a, b = value_shapes(older), value_shapes(newer)
    return any(not (a[s] & b[s]) for s in a.keys() & b.keys())


# A version belongs to the name right before it ("Zig 0.12", "Node v20.11", "Deno 1.46"): the
# name's version, whatever else the sentence is about.
_NAMED_VERSION = re.compile(r"(?<![\w.-])([A-Za-z][\w+-]*(?:\.[A-Za-z]+)?)\s+v?(\d+\.\d+(?:\.\d+)*)\b")


# Words a number follows that name nothing ("is 2.5", "from 3.11 to 3.12", "version 1.2", "about 0.75"):
# function words and a few nouns of measure, a closed class of English.
_NOT_NAMES = frozenset(
    "a an the is are was were be been am to from by of in on at for with and or but than then now v ver version "
    "versions release releases about around roughly approx approximately ~ under over below above up down x "
    "ratio rate factor score weight threshold timeout limit size step steps level levels set sets "
    "it its this that these those each every per of".split()
)


@lru_cache(maxsize=8192)
def named_versions(text: str) -> Mapping[str, frozenset[str]]:
    """The versions of ``text`` by the name before each, lower case: "Zig 0.12, built by CI" -> {"zig": {"0.12"}}."""
    out: dict[str, set[str]] = {}
    for m in _NAMED_VERSION.finditer(text.replace("`", "")):
        name = m.group(1).lower()
        if name not in _NOT_NAMES and not name.isdigit():
            out.setdefault(name, set()).add(m.group(2))
    return MappingProxyType({k: frozenset(v) for k, v in out.items()})


def other_version_of_a_name(older: str, newer: str) -> bool:
    """Whether ``newer`` gives a name that ``older`` versions another version, and names none of ``older``'s
    versions of it ("Zig 0.12, built by CI" then "we build with Zig 0.13")."""
    a, b = named_versions(older), named_versions(newer)
    return any(not (a[n] & b[n]) for n in a.keys() & b.keys())
