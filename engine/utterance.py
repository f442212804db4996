"""The shape of a message: its wrapping removed, and whether it asks rather than states.

Messages reach the extractor in the shapes people and tools send them: wrapped in literal
quotes by a shell (``opencode run "Does the API run on port 3000?"`` delivers the quotes),
in brackets, after a prefix (``Q:``, ``> ``, ``User:``), over several lines, with code,
ending in "pls", with the question mark inside the quotes. A question, or a request for
information, states nothing whatever its shape, so it is never a fact (issue 13: a quoted
question became "The API server listens on port 3000.").

- :func:`unwrap` removes what wraps a whole message or sentence: prefixes, matching quote
  or bracket pairs (repeatedly: ``> "(is it 3000?)"``), with the punctuation after a closing
  quote moved inside.
- :func:`asks` says whether a sentence (or a whole message) is a question or a request for
  information: an interrogative (a trailing ``?`` once unwrapped, a wh-word, an inverted
  auxiliary, a tag such as ", right"), or a request (``tell me``, ``check whether``,
  ``can you``, ``I want to know``...). Trailing politeness ("pls", "thanks", emoji) is
  ignored. Directives ("use pnpm from now on", "don't use npm") are not requests: they
  state how the project works.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import re

__all__ = ["asks", "statements", "unwrap"]

# Quote and bracket pairs that may wrap a whole message.
_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "„": "“", "`": "`", "(": ")", "[": "]", "{": "}", "<": ">"}
# Prefixes that introduce a message: quote markers, speaker labels, question labels, slash commands.
_PREFIX = re.compile(
    r"^(?:>+\s*"
    r"|(?:\*\*|__)?(?:q|question|user|me|human|prompt|ask|query|request|task|quick q(?:uestion)?|"
    r"sanity check|follow[- ]?up)\s*(?:\d+\s*)?[:>-]\s*(?:\*\*|__)?\s*"
    r"|\[(?:q|question|user|ask|query|request)\]\s*:?\s*"
    r"|/(?:ask|q|question)\b\s*"
    r"|@[\w.-]+[:,]?\s+)",
    re.I,
)
# Interjections before the real sentence ("hey,", "ok so", "btw").
_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|um+|uh+|hmm+|btw|also|and|but|quick question|one more thing|"
    r"sorry|yo|well|actually|wait|right|alright|sanity check|question)\b[\s,:;!.-]*)+",
    re.I,
)
# Politeness and noise after the real sentence ("pls", "thanks!", ":)", emoji).
_TAIL = re.compile(
    r"(?:[\s,;:.!-]*(?:pls|plz|please|thx|thanks|thank you|ty|tia|asap|real quick|quickly|:\)|:\(|;\)|"
    r"[\U0001F300-\U0001FAFF\u2600-\u27BF]))+[\s.!]*$",
    re.I,
)
_WH = re.compile(r"^(?:what|what's|whats|which|who|who's|whom|whose|why|how|how's|hows)\b", re.I)
# "when"/"where" start statements too ("When you deploy, run ..."): a question only before an auxiliary.
_WH_AUX = re.compile(
    r"^(?:when|where|whereabouts)(?:'s|\s+(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|"
    r"have|has|had|am|might|may|must)\b)",
    re.I,
)
_SUBJECT = (r"(?:we|you|u|i|it|they|he|she|this|that|these|those|there|our|your|my|its|their|any|anyone|anybody|"
            r"someone|somebody|something|anything|everyone|all)")
# An inverted auxiliary opens a question. "Is", "Does", "Did", "Has" cannot open a statement; the
# others can open a directive ("Do the release on Tuesdays", "Have CI run on push"), so they
# count only before a subject pronoun.
_AUX = re.compile(
    r"^(?:(?:is|isn't|are|aren't|was|wasn't|were|weren't|does|doesn't|did|didn't|has|hasn't|am)\s+(?!not\b)\S"
    r"|(?:do|don't|can|can't|could|couldn't|would|wouldn't|will|won't|shall|should|shouldn't|have|haven't|had|"
    r"may|might)\s+" + _SUBJECT + r"\b)",
    re.I,
)
_REQUEST = re.compile(
    r"^(?:(?:please|pls|plz|kindly)\s+)?(?:"
    r"(?:can|could|would|will|won't)\s+(?:you|u|someone|somebody|anyone)\b"
    r"|(?:tell|show|remind|give)\s+(?:me|us)\b"
    r"|let\s+(?:me|us)\s+know\b"
    r"|(?:find|figure|work)\s+out\b|look\s+(?:up|into)\b|dig\s+into\b"
    r"|(?:check|see|verify|confirm|double[- ]check|make sure|ask|investigate|determine)\s+"
    r"(?:whether|if|that|what|which|how|why|where|who|when)\b"
    r"|(?:confirm|verify|double[- ]check|explain|describe|clarify|summari[sz]e|list)\b"
    r"|i\s+(?:want|need|would\s+like|'d\s+like|wanna)\s+to\s+(?:know|understand|check|confirm|find\s+out|see|learn)\b"
    r"|(?:i\s+)?(?:wonder|am\s+wondering|'m\s+wondering|was\s+wondering|wondering)\b"
    r"|i'm\s+wondering\b|i\s+wonder\b"
    r"|(?:do|does)\s+(?:you|anyone|anybody)\s+(?:know|remember|recall)\b"
    r"|(?:any|got\s+an?)\s+idea\b|anyone\s+know\b|curious\s+(?:whether|if|what|which|how|why|where|who|when)\b"
    r"|(?:remind|tell)\s+(?:me|us)\b"
    r")",
    re.I,
)
# Tag questions: "we use 3000, right", "... or not", "... yes or no".
_TAG = re.compile(
    r"(?:,|\s)\s*(?:right|correct|no|yes|yeah|true|isn't it|aren't we|aren't they|don't we|doesn't it|"
    r"didn't we|is it|are we|or not|yes or no|or what|am i right|true or false|eh)\s*$",
    re.I,
)


_ESCAPED_PAIR = re.compile(r'^\\"(.*)\\"([?!.]*)$', re.S)


def _strip_pair(text: str) -> str:
    """Remove one pair of matching quotes or brackets around the whole text, if there is one."""
    if len(text) < 2:
        return text
    # JSON-escaped quotes: opencode delivers a quoted shell argument as "\"...\""
    escaped = _ESCAPED_PAIR.match(text)
    if escaped:
        return (escaped.group(1) + escaped.group(2)).strip()
    opener = text[0]
    closer = _PAIRS.get(opener)
    if closer is None:
        return text
    if text.startswith("```"):
        return text  # a code fence is content, not wrapping
    # punctuation after the closing quote belongs to the sentence: `"Does X"?` -> `Does X?`
    body, tail = text, ""
    m = re.search(r"[?!.]+$", text)
    if m and text[: m.start()].endswith(closer) and m.start() > 1:
        body, tail = text[: m.start()], m.group(0)
    if body.endswith(closer) and len(body) >= 2:
        inner = body[1:-1]
        if opener == closer:
            if inner.count(opener) == 0 or opener in "\"“”":
                return (inner + tail).strip()
            return text
        if _balanced(inner, opener, closer):
            return (inner + tail).strip()
        return text
    # an unterminated opening quote (a shell or a paste cut it): drop it when it is the only one
    if opener in "\"“'‘«„" and text.count(opener) == 1 and (closer == opener or closer not in text):
        return text[1:].strip()
    return text


def _balanced(inner: str, opener: str, closer: str) -> bool:
    depth = 0
    for ch in inner:
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def unwrap(text: str) -> str:
    """``text`` without the prefixes and quote or bracket pairs that wrap all of it.

    Only wrapping is removed: ``"we use pnpm"`` -> ``we use pnpm``; ``we use "pnpm"`` is
    unchanged. A dangling closing quote at the end (left by a sentence split) goes too.
    """
    out = text.strip()
    for _ in range(8):  # nested wrappings: > "(is it 3000?)"
        before = out
        out = _PREFIX.sub("", out, count=1).strip()
        out = _strip_pair(out)
        if out == before:
            break
    # A sentence cut from a quoted message keeps one unmatched quote at an end.
    for q in ('"', "“", "”", "«", "»", "'"):
        if out.count(q) == 1 and q not in ("'",):
            out = out.strip(q).strip()
    # Nothing wrapped it: keep the text as it was (its indentation marks code for the extractor).
    return text if out == text.strip() else out


def _core(text: str) -> tuple[str, bool]:
    """The sentence without wrapping, interjections and politeness; and whether it ended with '?'."""
    t = unwrap(text)
    question_mark = t.rstrip(" \t\"'”’»)]}`*_.!").endswith("?")
    for _ in range(3):
        before = t
        t = _TAIL.sub("", t).strip()
        t = unwrap(t)
        t = _LEAD.sub("", t).strip()
        t = unwrap(t)
        if t == before:
            break
    question_mark = question_mark or t.rstrip(" \t\"'”’»)]}`*_.!").endswith("?")
    return t, question_mark


def asks(text: str) -> bool:
    """True when ``text`` (a sentence or a whole message) is a question or a request for information.

    >>> asks('"Does the API run on port 3000?"'), asks("Q: which port pls"), asks("we use port 3000")
    (True, True, False)
    """
    core, question_mark = _core(text)
    if question_mark:
        return True
    if not core:
        return False
    first_line = core.splitlines()[0].strip() if core.strip() else core
    head = unwrap(first_line)
    if _WH.match(head) or _WH_AUX.match(head) or _AUX.match(head) or _REQUEST.match(head):
        return True
    return bool(_TAG.search(core.rstrip(" .!")))


_TERMINAL = re.compile(r"[.!?:;]\W*$")


def statements(fragments: list[str]) -> list[str]:
    """The fragments that are not part of a question or request, in order.

    ``fragments`` are the sentences of one message as a splitter cut them; a line break
    inside a sentence cuts it too (``"Does the API\\nrun on port 3000?"``), so a fragment
    without closing punctuation followed by one that starts in lower case is one sentence
    with it, and is judged with it.
    """
    groups: list[list[str]] = []
    for frag in fragments:
        head = unwrap(frag)
        if groups and not _TERMINAL.search(unwrap(groups[-1][-1])) and head[:1].islower():
            groups[-1].append(frag)
        else:
            groups.append([frag])
    return [frag for group in groups if not asks(" ".join(group)) for frag in group]
