"""The secret detectors of ``engine/redact.py``, rendered for the opencode plugin.

The plugin keeps an outbox of turns on disk while the sidecar is down; those turns must be
redacted like everything else the system stores (DESIGN §9, issue 13), and the plugin cannot
call Python. So the detectors are translated to JavaScript regular expressions and written
into ``bridge/opencode/dynmem.js`` between ``BEGIN``/``END`` markers; ``plugin install``
writes them fresh, and a test fails when the checked-in copy is stale
(``python -m bridge.plugin_redact --write`` regenerates it).

Translation: leading inline flags (``(?i)``, ``(?im)``) become JS flags; ``(?P<n>`` becomes
``(?<n>`` and ``(?P=n)`` becomes ``\\k<n>``; verbose patterns lose their whitespace and
comments. JS ``\\w``/``\\b`` are ASCII-only where Python's are Unicode: the detectors match
ASCII secrets, so the two agree on them (checked by tests/bridge/test_plugin_redact.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from engine import redact

__all__ = ["BEGIN", "END", "js_block", "js_regex", "render_into"]

BEGIN = "// BEGIN secret detectors (generated from engine/redact.py by `python -m bridge.plugin_redact --write`)"
END = "// END secret detectors"
PLUGIN = Path(__file__).resolve().parent / "opencode" / "dynmem.js"
_INLINE_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


def _strip_verbose(source: str) -> str:
    """A verbose pattern without its whitespace and comments (outside classes and escapes)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            out.append(source[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif ch == "#":
            while i < len(source) and source[i] != "\n":
                i += 1
            continue
        elif not ch.isspace():
            out.append(ch)
        i += 1
    return "".join(out)


def js_regex(pattern: re.Pattern[str]) -> dict[str, str]:
    """``{"source", "flags"}`` of the JavaScript equivalent of a compiled Python pattern."""
    source = pattern.pattern
    inline = ""
    m = _INLINE_FLAGS.match(source)
    if m:
        inline, source = m.group(1), source[m.end():]
    flags = set(inline)
    if pattern.flags & re.I:
        flags.add("i")
    if pattern.flags & re.M:
        flags.add("m")
    if pattern.flags & re.S:
        flags.add("s")
    if "x" in flags or pattern.flags & re.X:
        source = _strip_verbose(source)
    source = re.sub(r"\(\?P<(\w+)>", r"(?<\1>", source)
    source = re.sub(r"\(\?P=(\w+)\)", r"\\k<\1>", source)
    source = source.replace(r"\Z", "$(?![\\s\\S])")
    return {"source": source, "flags": "".join(sorted(flags & set("ims")))}


def js_block() -> str:
    """The generated block: detectors in priority order, and the not-a-value pattern."""
    detectors = [{"kind": d.kind, **js_regex(d.pattern)} for d in redact._DETECTORS]
    not_a_value = js_regex(redact._NOT_A_VALUE)
    return "\n".join([
        BEGIN,
        f"const SECRET_DETECTORS = {json.dumps(detectors, indent=0)};",
        f"const NOT_A_VALUE = {json.dumps(not_a_value)};",
        END,
    ])


def render_into(text: str) -> str:
    """``text`` (the plugin source) with a fresh generated block."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + js_block() + text[end:]


if __name__ == "__main__":
    current = PLUGIN.read_text(encoding="utf-8")
    fresh = render_into(current)
    if "--write" in sys.argv[1:]:
        PLUGIN.write_text(fresh, encoding="utf-8")
        print(f"wrote the secret detectors into {PLUGIN}")
    else:
        print("up to date" if fresh == current else "stale: run with --write")
        raise SystemExit(0 if fresh == current else 1)
