"""Signals that memory failed, read from the user's own words (DESIGN §6).

Two of the repair signals are visible in the text of a turn:

- a **correction** at the start of a user turn (``no, it's 9090``, ``I told you we use
  pnpm``, ``we stopped using Redis``): the memory injected before it, or its absence, let
  the agent get a project fact wrong;
- a **memory question** (``what port does the API use?``, ``remind me where the runbook
  is``): when recall abstains or comes back thin on such a question, the fact may be in
  the log without ever having become a memory.

``key_terms`` turns either into the distinctive words an investigator searches the log
for. Everything here is pure: text in, decisions out.
"""

from __future__ import annotations

import re

from engine.lexical import STOPWORDS, tokenize

__all__ = ["QUESTION_WORDS", "is_correction", "is_memory_question", "key_terms", "shared_terms", "stem"]

_MEMORY_BLOCK = re.compile(r"<dynmem-memory\b.*?(?:</dynmem-memory>|\Z)", re.S | re.I)
_LEAD = re.compile(r"^[\s>*_\"'`(\[\u201c\u201d]+")
# Fillers that may precede a correction or a question without changing what it is.
_FILLER = re.compile(r"^(?:(?:hey|hi|hmm+|um+|uh+|ok(?:ay)?|so|and|also|well|btw|quick question)\b[\s,:;.!-]*)+", re.I)
_DASH = r"[,.;:!]|\s[-–—]+|[-–—]+\s|[–—]"

# "no, thanks" / "no problem" / "no, that's fine" are chit-chat, not corrections.
_CHITCHAT = re.compile(
    r"^(?:thanks?|thank you|ty|problem|problems|worries|worry|need|rush|biggie|prob|"
    r"(?:that'?s|that is|it'?s|it is|this is)\s+(?:fine|ok|okay|alright|all right|good|great|enough|it|all)\b|"
    r"i'?m (?:good|fine|ok|okay|done)|all good|not (?:yet|now|really|right now|today|for now|needed|necessary)\b|"
    r"nothing|later|go ahead|leave it|don'?t bother|never ?mind|sorry|please|stop|wait|"
    r"that'?ll do|i think (?:that'?s|it'?s) (?:fine|ok|okay|good))\b",
    re.I,
)
_NO = re.compile(rf"^(?:no+|nope|nah|negative)(?:{_DASH})+\s*(?P<rest>\S.*)$", re.I | re.S)
# "no it's 9090", "no the staging host is ..." (no punctuation after "no").
_NO_BARE = re.compile(
    r"^(?:no+|nope|nah)\s+(?P<rest>(?:it'?s|it is|its|it was|the|we|we'?re|we'?ve|our|you|that'?s|that is|"
    r"i said|i told|i meant|actually|not|use|it should|they|he|she)\b.*)$",
    re.I | re.S,
)
_CORRECTION = re.compile(
    r"^(?:"
    r"i(?:'ve| have)?\s+(?:already\s+)?(?:told|said|mentioned|explained|asked)\b"
    r"|i\s+(?:already\s+)?(?:told|said)\b"
    r"|as i (?:already\s+)?(?:said|told you|mentioned|explained)\b"
    r"|like i (?:already\s+)?(?:said|told you|mentioned)\b"
    r"|(?:that'?s|that is|this is|it'?s|it is|you'?re|you are)\s+(?:wrong|not right|not correct|incorrect|"
    r"outdated|out of date|not true|stale|no longer (?:true|right|correct|the case)|mistaken)\b"
    r"|(?:wrong|incorrect|not quite|not true|correction)\s*(?:$|[,.;:!]|\s[-–—]|\s+(?:again|port|host|"
    r"command|path|file|branch|one|value|version|name|answer|database|url)\b)"
    r"|(?:you (?:got it|have it|got that) wrong|you forgot|you keep (?:forgetting|getting)|"
    r"that'?s not what i said|you misremember)"
    r"|actually\s*,?\s+(?:it'?s|it is|its|that'?s (?:wrong|not)|we (?:use|don'?t|do not|stopped|switched|moved|"
    r"never|no longer)|our \w+|the \w+(?:\s+\w+){0,3}\s+(?:is|are|was|lives|runs|listens|uses)\b|"
    r"it should be|you'?re wrong|no\b)"
    r"|we(?:'ve| have)?\s+(?:stopped|quit|no longer|never)\s+(?:using|use|used)\b"
    r"|we (?:don'?t|do not|aren'?t|are not|'re not)\s+(?:use|using|on)\b.*\b(?:anymore|any more|any longer|no more)\b"
    r"|we(?:'re| are) not (?:on|using)\s+.*\b(?:anymore|any more|any longer)\b"
    r"|we (?:moved|switched|migrated) (?:away )?(?:off|from)\b"
    r")",
    re.I | re.S,
)
# "not 8080, 9090" / "not npm — pnpm" / "not staging2 but staging3".
_NOT_X_Y = re.compile(
    rf"^not\s+(?P<x>[^\s,;:]+(?:\s+[^\s,;:]+){{0,3}}?)\s*(?:{_DASH}|\s+but\s+)+\s*(?P<y>\S.*)$", re.I | re.S
)
_NOT_CHITCHAT = re.compile(r"^(?:yet|now|really|today|sure|quite|exactly|that|this|me|really)$", re.I)


def _lead(text: str) -> str:
    """The start of a turn: no injected memory block, no quote marks, no leading filler."""
    text = _MEMORY_BLOCK.sub(" ", text).replace("\u2019", "'").replace("\u2018", "'")
    text = _LEAD.sub("", text)
    return _FILLER.sub("", text).strip()[:400]


def is_correction(user_text: str) -> bool:
    """True when a user turn opens by correcting the agent on a fact.

    Only the start of the turn counts: a correction is the user's first reaction
    (``no, it's ...``, ``I told you ...``, ``that's wrong``, ``not X, Y``, ``we stopped
    using ...``). Chit-chat that happens to start with "no" (``no problem``,
    ``no, thanks``) and words that merely begin with "no" (``nothing``, ``Node 20``,
    ``now``, ``notes``) are not corrections.
    """
    text = _lead(user_text)
    if not text:
        return False
    for pattern in (_NO, _NO_BARE):
        match = pattern.match(text)
        if match:
            rest = match.group("rest").strip()
            return bool(rest) and not _CHITCHAT.match(rest) and any(ch.isalnum() for ch in rest)
    if _CORRECTION.match(text):
        return True
    match = _NOT_X_Y.match(text)
    if match:
        first = match.group("x").split()[0]
        return not _NOT_CHITCHAT.match(first) and not _CHITCHAT.match("not " + match.group("x"))
    return False


# Questions that reach for a project fact. Strong forms count without a question mark;
# bare wh-questions need one ("what I want is ..." is a statement).
_STRONG_QUESTION = re.compile(
    r"^(?:remind me\b|(?:can|could|would) you remind me\b|(?:do|did) you (?:remember|recall)\b"
    r"|do you know (?:what|which|where|who|when|how|if|whether)\b"
    r"|where (?:do|does|did|is|are|was|were|should|can|'s|s)\b|where'?s\b"
    r"|how (?:do|did|should|can|would) (?:i|we|you|one)\s+(?:run|start|build|deploy|test|install|release|lint|"
    r"format|set up|setup|configure|connect|access|get to|log ?in|migrate|publish|launch|debug|reach|"
    r"restart|seed|reset|create|generate|bump|tag|ship|rollback|roll back|upgrade|update|invoke|call|use)\b"
    r"|how (?:is|are|was|were) (?:the|our|we)\b.*\b(?:configured|set up|deployed|run|named|called|hosted|"
    r"structured|organi[sz]ed|versioned|released|tested|built)\b"
    r"|what (?:did|do|have) we (?:decide|decided|agree|agreed|choose|chose|pick|picked|settle|settled|say|said|"
    r"use|call|name)\b"
    r"|which\s+\w+"
    r")",
    re.I | re.S,
)
_WEAK_QUESTION = re.compile(
    r"^(?:what(?:'s|s| is| are| was| were)?\b|which\b|who\b|whose\b|when\b"
    r"|(?:do|does|did) (?:we|our|the)\b|(?:are|is) (?:we|our)\b)",
    re.I,
)
# Questions about the code at hand or the conversation, not about a remembered fact.
_NOT_MEMORY = re.compile(
    r"^(?:what|which|who|when)(?:'s|s| is| are| was| does| do| did)?\s+(?:do you think|you think|wrong|up|next|"
    r"going on|happening|happened|the (?:problem|issue|error|matter|difference|point|plan)|this|that|it|these|those|"
    r"you mean|i (?:do|should|mean)|if|else)\b"
    r"|^what (?:does|do|did) (?:this|that|it|these|those)\b|^when you\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[?!.])\s+|\n+")

QUESTION_WORDS = frozenset(
    """what whats which where wheres when who whom whose how why remind remember recall know
    knew tell told say said mention mentioned again think thought wonder wondering kept keep
    stored store located live lives find found look looked go goes tho though exactly
    currently anymore still did does do is are was were set setup called""".split()
)


def is_memory_question(text: str) -> bool:
    """True when a sentence of ``text`` asks for a project fact (a port, a command, a path, a name).

    ``what port does the API use?``, ``which package manager do we use``, ``where do
    the fixtures live?``, ``how do I run the tests``, ``remind me who owns billing``.
    Questions about the code on screen (``what does this function do?``), opinions
    (``what do you think?``) and small talk are not memory questions.
    """
    for sentence in _SENTENCE.split(_MEMORY_BLOCK.sub(" ", text).replace("\u2019", "'"))[:6]:
        s = _FILLER.sub("", _LEAD.sub("", sentence)).strip()
        if not s or _NOT_MEMORY.match(s) or not key_terms(s):
            continue
        if _STRONG_QUESTION.match(s):
            return True
        if _WEAK_QUESTION.match(s) and s.rstrip().endswith("?"):
            return True
    return False


def key_terms(text: str) -> list[str]:
    """Distinctive query terms: identifier-aware tokens without stopwords or question words.

    Order is first appearance; duplicates are dropped. ``where is the pager rotation
    kept?`` gives ``["pager", "rotation"]``.
    """
    out: dict[str, None] = {}
    for token in tokenize(_MEMORY_BLOCK.sub(" ", text).replace("\u2019", "'")):
        token = token.strip("'")
        if token.endswith("'s"):
            token = token[:-2]
        if len(token) < 2 and not token.isdigit():
            continue
        if token in STOPWORDS or token in QUESTION_WORDS:
            continue
        out.setdefault(token, None)
    return list(out)


def stem(token: str) -> str:
    """A crude stem for matching a word with its plural or ``-ed``/``-ing`` form."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def shared_terms(terms: list[str], text: str) -> list[str]:
    """The ``terms`` that ``text`` contains, allowing a plural or ``-ed``/``-ing`` form.

    ``shared_terms(["pager", "rotation"], "the rotations live in ops/")`` is ``["rotation"]``.
    """
    tokens = set(tokenize(text.replace("\u2019", "'")))
    stems = {stem(t) for t in tokens}
    return [t for t in terms if t in tokens or stem(t) in stems]
