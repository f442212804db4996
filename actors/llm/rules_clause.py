"""The clause and finding types of ``rules_extract``, with the helpers every extractor shares.

A ``Clause`` is one cleaned clause of a turn; an extractor (``rules_facts``, ``rules_procedures``,
``rules_choices``) reads it and may return one ``Finding``: a canonical key, the value it
asserts and a template sentence. Shared here: picking the asserted value among several
("to X", not "from X"), reading the noun phrase that names a subject, and the word lists
more than one extractor rejects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from actors.llm.rules_text import STOPWORDS
from engine.models import Kind

_I = re.I


@dataclass(frozen=True)
class Clause:
    text: str  # original case, fillers and "from now on" removed
    low: str
    changed: bool  # an explicit change marker: "from now on", "now", "switched"...
    remember: bool  # "remember that ...", "note that ..."
    speaker: str  # "user" or "assistant"
    explicit: bool = False  # "from now on", "going forward"...: a stated rule, not a remark
    listed: bool = False  # an item of a bulleted list or a line of a written document
    report: bool = False  # the assistant's reply opens with it, reporting what it did ("Done: ...", "Moved X to Y")
    document: bool = False  # a line of a document the assistant wrote (a fenced markdown block)
    project: str = ""  # the project the turn belongs to: its name is the whole project, never a part of it


@dataclass(frozen=True)
class Finding:
    key: str
    belief: str
    kind: Kind
    text: str
    negated: bool = False
    weight: float = 0.0
    retires: tuple[str, ...] = ()  # old values the clause says are replaced ("from 8081 to 9090")
    as_said: bool = False  # kept as said beside a reading of the same key and value (``rules_answers``)
    update_only: bool = False  # names a setting with a new value: applies only to a memory held for it (``engine.mentions``)


# When a change happened, closing its clause ("last sprint", "a while ago"): English time adverbials,
# never part of the value ("we replaced Jest with Vitest last sprint" chose Vitest).
WHEN_SAID = (
    r"(?:(?<!\s)\s+(?:(?:as\s+of|since|starting)\s+)?(?:a\s+while\s+ago|a\s+(?:few|couple\s+of)\s+(?:days|weeks|months)\s+ago|"
    r"(?:last|this|earlier\s+this)\s+(?:week|sprint|month|quarter|year|release|cycle)|yesterday|today|recently|"
    r"already|earlier|at\s+last|finally|for\s+good|now|from\s+now\s+on|going\s+forward|these\s+days|"
    r"on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december)))?")

# ---------------------------------------------------------------- shared value picking

EXCLUDED_BEFORE = re.compile(
    r"(?:\bfrom|\bnot|\bno longer(?:\s+\w+)?|\binstead of|\brather than|\bwas|\bwere|"
    r"\bpreviously|\bformerly|\bold|\bused to be|\bisn't|\baway from|\boff(?:\s+of)?|\bover|\breplac\w*)"
    r"\s+(?:the\s+)?(?:port\s+|on\s+|at\s+|localhost:|using\s+|use\s+)?$",
    _I,
)
TO_BEFORE = re.compile(r"\b(?:to|with|by|in favou?r of)\s+(?:port\s+|localhost:|using\s+)?$", _I)


def pick(text: str, matches: list[re.Match[str]]) -> re.Match[str] | None:
    """Choose the asserted value among matches: prefer ``to X``, skip ``from X``/``not X``."""
    live = [m for m in matches if not EXCLUDED_BEFORE.search(text[: m.start()])]
    if not live:
        return None
    to = [m for m in live if TO_BEFORE.search(text[: m.start()])]
    return to[-1] if to else live[0]


def lower_first(phrase: str) -> str:
    """'The billing service' -> 'the billing service'; 'API base' and 'iOS app' stay."""
    first, _, rest = phrase.partition(" ")
    if first[:1].isupper() and first[1:].islower():
        first = first.lower()
    return f"{first} {rest}".strip()


def cap(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def without_project_name(words: list[str], project: str) -> list[str]:
    """``words`` without those that spell the project's own name ("tidewater", "tidewater-web" or "web" in project
    ``tidewater-web``): said as a subject or a part, the name is the whole project, not a part of it."""
    name = {w for w in re.split(r"[\s_-]+", project.lower()) if w}
    return [w for w in words if not (name and set(re.split(r"[_-]+", w.lower())) <= name)]


def plural(word: str) -> bool:
    """An English plural by its ending: "sessions", "queries", "quotas"; not "bus", "status", "analysis", "class",
    "alias", nor a word of three letters ("dns", "gas")."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ias"))


def article_free(phrase: str) -> str:
    return re.sub(r"^(?:all\s+(?:of\s+)?)?(?:the|our|my|a|an|this|that|we|all)\s+", "", phrase.strip(), flags=_I)


# ---------------------------------------------------------------- subjects named by noun phrases

# Words that end a noun phrase: verbs, prepositions, adverbs and time words developers put
# around a subject ("the docs site *binds* to", "*after* the restructure").
# Verbs that report what someone says or feels: a noun phrase ends before one ("Tomasz says R7 is dead": the
# thing is R7), and a subject holding one is a report, not the name of a setting ("Ana complains the build is slow").
SPEECH_VERBS = frozenset("says say said thinks thought reckons told confirms confirmed mentioned complains complained".split())
_NP_BREAK = STOPWORDS | frozenset(
    "listens listen runs run binds bind lives live sits sit holds hold keeps keep goes go gets get "
    "points pointing pointed connects connecting talks calls calling hits moved move migrated migrate relocated switched switch bumped changed replaced failed stored kept got gets "
    "served hosted reachable deployed located defined placed belongs belong owns own took passed needs "
    "locally today yesterday tomorrow starting after before since until once because while anymore "
    "last week sprint release everywhere again too please find put point connect port ports "
    "reviews review reviewed ask telling tell container serves serve exposes exposed responds accepts handles "
    "returns return answers answer replies reply emits emit".split()
) | SPEECH_VERBS
_NP_WORD = re.compile(r"[A-Za-z][\w.+-]*")
_POSSESSIVE = re.compile(r"([A-Za-z][\w.+-]*)['’]s")


def np_words(text: str, start: int, backwards: bool = False, limit: int = 5) -> str:
    """The noun phrase that starts (or, backwards, ends) at ``start``: up to ``limit`` words
    before an article, verb, preposition or punctuation ("the docs site binds" -> "docs site")."""
    if backwards:
        chunk = text[:start].rstrip()
        words: list[str] = []
        for raw in reversed(chunk.split(" ")):
            word = raw.strip()
            if not word or not _NP_WORD.fullmatch(word.rstrip(",:;")) or word != word.rstrip(",:;.!?"):
                break  # punctuation after a word ends the phrase before it ("... directly. Key")
            if word.lower() in _NP_BREAK or len(words) >= limit:
                break
            words.insert(0, word)
        return " ".join(words)
    words = []
    for raw in text[start:].lstrip().split(" "):
        word = raw.rstrip(",:;.!)")
        owner = _POSSESSIVE.fullmatch(word)
        if owner and words and raw == word:  # "the home server's SSH port": the owner's word, then what it owns
            raw = word = owner.group(1)
        if not word or not _NP_WORD.fullmatch(word) or word.lower() in _NP_BREAK or len(words) >= limit:
            break
        words.append(word)
        if word != raw:
            break  # punctuation ends the phrase
    return " ".join(words)


def np_after_article(text: str) -> list[tuple[int, str]]:
    """Every "the/our/my X Y" phrase of the clause, with its position."""
    out = []
    for m in re.finditer(r"\b(?:the|our|my|your)\s+", text, _I):
        phrase = np_words(text, m.end())
        if phrase:
            out.append((m.start(), phrase))
    return out


# ---------------------------------------------------------------- shared word lists

NOT_SUBJECTS = frozenset(
    "it this that there which what everything something nothing he she they i we you bug error "
    "issue problem crash failure exception typo fix change diff hit hits match matches result results "
    "mention mentions reference references occurrence occurrences one ones both either neither each another".split()
)
# An approximate quantity ("~13 h", "≈ 670 a year", "roughly 40 ms") is an estimate or a measurement,
# not a setting: a clause stating one is reasoning about the project, not a fact to keep.
ESTIMATE = re.compile(r"(?:~|≈|\babout\s|\broughly\s|\bapprox(?:imately|\.)?\s|\baround\s)\s*\d", _I)


EVALUATIVE = frozenset(
    "great good fine done broken failing wrong weird slow fast ok okay working correct right "
    "true false better worse annoying confusing nice cool awesome ready fixed clear possible "
    "important needed required missing empty flaky green red passing failed weird strange "
    "bad terrible amazing perfect interesting fun easy hard tricky complicated simple".split()
)
MEASURE = re.compile(r"^~?\d[\d.,]*(?:[a-z%]{1,3}\d*)+$", _I)  # 40ms, 1.4s, 4x, 2m10s, 95%
