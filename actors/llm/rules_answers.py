"""A question the user asked about the project and the reply's first sentence that answers it.

Developers ask the agent what they do not remember ("who maintains the tariff tables?", "where do
the thumbnails get built") and the reply answers from the code base: "`tariffs/` is Halvard's per
CODEOWNERS". The answer is a fact the next session wants, but the sentence alone is often not
self-contained ("It's the quillfmt preset in the root config") and no pattern reads it. The pair is kept as
said, the question first: nothing is rewritten, and a later question worded like the first one finds
it (the bundled embedder scores two questions about one thing far closer than a question and the
statement that answers it).

Only a clear pairing is read: exactly one question in the user's turn, asking who, which, what, where
or how of something that holds (not why, not what happened, not what went wrong), and a reply whose
first sentence states a value (``VALUE_SHAPE``: code, a path, a host, a version, a name) without
hedging, refusing or proposing. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from actors.llm.rules_clause import ESTIMATE, Finding, cap
from actors.llm.rules_text import PROPOSAL, assistant_ok, is_statement, strip_fillers
from engine.keys import normalize_belief
from engine.models import Kind

__all__ = ["answered_fact"]

# A question about what holds: a wh-word opening the sentence, or opening a clause after a comma or a
# conjunction when the sentence ends with a question mark (", which is faster" is a relative clause, not a
# question). Its subject has two words at least. Not asked about what holds: "what if", "what about", "how
# come", "how so", "who else" (no fact), nor "how many / much / long / big / fast / slow / hard / bad" (a
# count or a judgement of the moment, read too often from a dashboard or a guess).
_WH = (r"(?:who|who's|whos|whom|which|what|what's|whats|where|where's|how)\b"
       r"(?!\s+(?:if|about|else|come|so|hard|many|much|long|big|bad|fast|slow)\b)(?:\s+[^\s?,;]+){2,20}")
_ASKED = re.compile(rf"^(?P<q>{_WH})\s*(?:\?|[,;]|$)|(?:[,;]\s+|\b(?:and|so|also|but)\s+)(?P<q2>{_WH})\s*\?\s*$",
                    re.IGNORECASE)
# A question about an event or a fault, not about what holds: "what happened", "what did you change",
# "what's wrong with it", "where does the import crash".
_EVENT = re.compile(r"\b(?:did|happened|went|wrong|broke\w*|fail\w*|error\w*|crash\w*|bug)\b", re.IGNORECASE)
# A pseudo-cleft opens with a wh-word and asks nothing: "what we do is deploy from main".
_CLEFT = re.compile(r"^(?:what|where|how)\s+(?:we|i|you|they)\s+\w+(?:\s+\w+)?\s+is\b", re.IGNORECASE)
# A question that asks for advice on a task ("which files need to move for the rename"), not for what holds.
_ADVICE = re.compile(r"\bneed(?:s)?\s+to\b|\bway\b", re.IGNORECASE)
# A value in the question itself ("is it still 4%", "the one on 6543"): the user may be wrong, and the
# memory would repeat it beside the answer.
_VALUE_IN_QUESTION = re.compile(r"\d|`|\w/\w|\w\.\w")
# A reply that declines, doubts or denies before it answers, or that points at something on the
# screen ("That's the launcher from ...", "This one is ..."): an answer about the moment, not the project.
_NO_ANSWER = re.compile(r"^(?:no|not|nope|none|nothing|there(?:'s| is| are) no|i (?:don't|do not|can't|cannot|couldn't|"
                        r"could not|didn't|did not|haven't|have not)|unclear|unknown|hard to say|"
                        r"that|this|these|those)\b"
                        r"|^(?:just\s+)?run\b", re.IGNORECASE)  # "Run `x`": a command, read by ``answered_command``
MAX_ANSWER_WORDS = 40
MAX_QUESTION_WORDS = 25


def _question(user_sentences: Sequence[str]) -> str:
    """The user's one question about what holds, as the sentence that asks it, or "".

    It must be the last thing the user said, so that the reply opens with its answer, and the
    only question of the turn (with two, which one the reply answers first is not known)."""
    said = [strip_fillers(sentence)[0].strip() for sentence in user_sentences]
    asked = [(text, found.group("q") or found.group("q2")) for text in said if (found := _ASKED.search(text))]
    others = [text for text in said if text.endswith("?") and not _ASKED.search(text)]
    if len(asked) != 1 or others or asked[0][0] != said[-1]:
        return ""
    text, question = asked[0]
    if _EVENT.search(question) or _ADVICE.search(question) or _CLEFT.match(question) or _VALUE_IN_QUESTION.search(text) \
            or len(text.split()) > MAX_QUESTION_WORDS:
        return ""
    return text


def answered_fact(user_sentences: Sequence[str], reply_sentences: Sequence[str], value_shape: re.Pattern[str],
                  reading: Callable[[str], Finding | None] = lambda _: None) -> Finding | None:
    """The question and the reply's first sentence, when the user asked one thing about the project
    and the reply opens by stating it (``value_shape``: what counts as a value).

    ``reading`` reads the answer sentence as the patterns do. When it finds a setting ("the API
    listens on 8080": ``api port``), the pair takes that key and value, so that a later value of
    the setting supersedes the pair too; otherwise the pair has no key."""
    question = _question(user_sentences)
    if not question:
        return None
    answer = next((s for s in (strip_fillers(r)[0].strip() for r in reply_sentences) if len(s.split()) >= 2), "")
    words = answer.split()
    if not 4 <= len(words) <= MAX_ANSWER_WORDS or answer.endswith("?") or _NO_ANSWER.match(answer) \
            or ESTIMATE.search(answer):
        return None
    if not is_statement(answer, False) or not assistant_ok(answer) or PROPOSAL.search(answer):
        return None
    value = value_shape.search(answer)
    if value is None:
        return None
    # The answer first, then what it answers: a memory states what holds, it never asks (issue 13).
    text = f"{cap(answer.rstrip(':;,. '))} (answer to: {question.rstrip('?.!,; ')})."
    read = reading(answer)
    if read is not None and read.key and not read.negated:
        return Finding(read.key, read.belief, Kind.FACT, text, weight=-0.1, as_said=True)
    return Finding("", normalize_belief(value.group(0).strip("`")), Kind.FACT, text, weight=-0.1)
