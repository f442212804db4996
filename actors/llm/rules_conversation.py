"""The ``conversation`` extraction profile of the rules client: a person's life, not a code base.

For personal-assistant style histories. Each declarative sentence a speaker says about their
life, plans, preferences or events ("I went to a support group yesterday", "my kids love
painting", "we're moving to Sweden next year", "Melanie painted a sunrise last week") becomes
one self-contained memory: the speaker's name stands for I/my/we, and simple relative times
are resolved against the turn's date ("yesterday" -> "the day before 8 May 2023").

Conventions (general, not tied to one data set):
- the speaker is named by a leading ``Name: text`` on the unit's user text; without it the
  speaker is "The user";
- a bracketed note of the speaker's (``[shares a photo: a dog on a beach]``) is a statement of
  its own ("Name shares a photo: a dog on a beach.");
- questions, greetings, pure reactions ("wow", "that's great!"), advice and remarks addressed
  to the listener ("you ...") and very short sentences are skipped;
- no belief key (nothing supersedes), except for one clear attribute: "I'm originally from X",
  "my home country is X" -> ``<name> home country``.

Pure and deterministic like the rest of the rules client; the assistant's side is not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from actors.llm.rules_text import MEMORY_TALK, strip_memory_blocks, third_person
from engine.keys import normalize_belief, normalize_key
from engine.models import Candidate, Kind, Origin, Unit

PROMPT_VERSION = "rules-conversation-v1"
_I = re.I

_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?):\s+(?P<text>.+)$", re.S)
_BRACKET = re.compile(r"\[(?P<note>[^\[\]]{3,300})\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+|\s+-\s+(?=[A-Z])")
_MIN_WORDS = 5

# Leading interjections and vocatives stripped before judging a sentence: "Wow, ", "Hey Mel! ".
_INTERJECTION = re.compile(
    r"^(?:(?:wow|oh|ooh|aw+|hey|hi|hello|yeah|yes|yep|yup|no|nope|ok|okay|sure|well|so|haha|lol|hmm+|"
    r"thanks|thank you|congrats|congratulations|absolutely|definitely|totally|honestly|actually|"
    r"anyway|right|true|great|awesome|cool|nice|amazing|sweet|gosh|omg|ah|uh|um|yay|indeed|exactly)"
    r"(?:\s+[A-Z][a-z]+)?\s*[,!.:;-]+\s*)+",
    _I,
)
_GREETING = re.compile(
    r"^(?:hi|hey|hello|good (?:morning|afternoon|evening|night)|bye|goodbye|see you|talk (?:to you )?(?:soon|later)|"
    r"take care|thanks|thank you|long time no see|nice to (?:see|hear|talk)|great to (?:see|hear|talk)|"
    r"it's (?:so )?(?:good|great|nice) to (?:see|hear|talk|chat))\b",
    _I,
)
_REACTION_WORDS = frozenset(
    "wow that that's thats this this's is it it's its so really very such a an what how great awesome amazing "
    "cool nice lovely beautiful wonderful fantastic incredible stunning gorgeous sweet cute fun good "
    "glad happy sorry sad exciting excited impressive inspiring proud congrats congratulations thanks thank you "
    "sounds looks seems like totally absolutely definitely true agreed indeed oh yeah yes haha lol omg "
    "me too same here must be have been feel i'm am super pretty quite just all well done job".split()
)
_ADVICE_START = re.compile(
    r"^(?:don't|do not|never forget|remember|make sure|be sure|keep|stay|try|let me know|let's|lets|"
    r"go for it|good luck|hang in there|believe|take|enjoy|have (?:a|fun)|you should|you could|you can|"
    r"you've got|you got|you're|you are|you have|your|you)\b",
    _I,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|we'd|we'll|us|our|ours)\b", _I)
_NOT_NAMES = frozenset(
    "The That This These Those It Its There Here Thanks Thank What When Where Why How Which Who Some Any "
    "Every Each All Both Being Having Making Taking Sounds Looks Seems Yes No Not Now Then Just So And But "
    "Or If Because Since Also Really Totally Definitely Absolutely Gonna Excited Loving Great".split()
)
_THIRD_SUBJECT = re.compile(r"^(?:(?P<name>[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?|he|she|they|his|her|their)\b(?!')")


def _third_subject(text: str) -> bool:
    m = _THIRD_SUBJECT.match(text)
    return m is not None and m.group("name") not in _NOT_NAMES
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd)\b", _I)

# ------------------------------------------------------------------ person substitution

_CONTRACTIONS = (
    (r"\bI'm\b", "{n} is"), (r"\bI am\b", "{n} is"), (r"\bI've\b", "{n} has"), (r"\bI have\b", "{n} has"),
    (r"\bI'd\b", "{n} would"), (r"\bI'll\b", "{n} will"), (r"\bI was\b", "{n} was"),
    (r"\bI don't\b", "{n} doesn't"), (r"\bI do\b", "{n} does"),
    (r"\bwe're\b", "{n} and others are"), (r"\bwe've\b", "{n} and others have"),
    (r"\bwe'd\b", "{n} and others would"), (r"\bwe'll\b", "{n} and others will"),
    (r"\bmyself\b", "{n}"), (r"\bmine\b", "{n}'s"), (r"\bmy\b", "{n}'s"), (r"\bme\b", "{n}"),
    (r"\bours\b", "{n}'s"), (r"\bour\b", "{n}'s"), (r"\bus\b", "{n} and others"), (r"\bwe\b", "{n} and others"),
)
_CONTRACTION_PATTERNS = tuple((re.compile(p, 0 if p.startswith(r"\bI") else _I), r) for p, r in _CONTRACTIONS)
_I_VERB = re.compile(r"\bI\s+(?P<adv>(?:(?:really|also|just|still|always|never|often|usually|sometimes|totally|"
                     r"actually|even|only|truly|absolutely|definitely|recently|finally)\s+)*)(?P<v>[a-z]+)\b")


def _substitute(text: str, name: str) -> str:
    """First person -> the speaker's name: "I love my kids" -> "Caroline loves Caroline's kids"."""
    for pattern, repl in _CONTRACTION_PATTERNS:
        text = pattern.sub(repl.replace("{n}", name), text)
    text = _I_VERB.sub(lambda m: f"{name} {m.group('adv')}{third_person(m.group('v'))}", text)
    return re.sub(r"\bI\b", name, text)


# ------------------------------------------------------------------ dates

def _day(dt: datetime) -> str:
    return f"{dt.day} {dt:%B %Y}"


_TIMES: tuple[tuple[re.Pattern[str], Callable[[datetime], str]], ...] = tuple(
    (re.compile(p, _I), f)
    for p, f in (
        (r"\byesterday\b", lambda d: f"the day before {_day(d)}"),
        (r"\b(?:today|tonight|this morning|this afternoon|this evening)\b", lambda d: f"on {_day(d)}"),
        (r"\btomorrow\b", lambda d: f"the day after {_day(d)}"),
        (r"\blast weekend\b", lambda d: f"the weekend before {_day(d)}"),
        (r"\blast week\b", lambda d: f"the week before {_day(d)}"),
        (r"\bnext week\b", lambda d: f"the week after {_day(d)}"),
        (r"\blast month\b", lambda d: f"in {(d.replace(day=1) - timedelta(days=1)):%B %Y}"),
        (r"\bnext month\b", lambda d: f"in {(d.replace(day=28) + timedelta(days=4)):%B %Y}"),
        (r"\bthis month\b", lambda d: f"in {d:%B %Y}"),
        (r"\blast year\b", lambda d: f"in {d.year - 1}"),
        (r"\bnext year\b", lambda d: f"in {d.year + 1}"),
        (r"\bthis year\b", lambda d: f"in {d.year}"),
    )
)
_VAGUE_TIME = re.compile(
    r"\b(?:recently|lately|ago|last (?:night|friday|saturday|sunday|monday|tuesday|wednesday|thursday|summer|"
    r"winter|spring|fall|autumn|time)|this (?:week|weekend|past)|next (?:weekend|summer|winter|spring|fall)|"
    r"the other day|soon|upcoming|just)\b",
    _I,
)


def _render_at(render: Callable[[datetime], str], when: datetime) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that renders ``when`` for every match (a function: no escapes read)."""
    return lambda _m: render(when)


def _resolve_times(text: str, ts_ms: int) -> str:
    """Relative times against the turn's date; a vaguer one keeps the date the turn was said."""
    when = datetime.fromtimestamp(ts_ms / 1000, tz=timezone.utc)
    resolved = False
    for pattern, render in _TIMES:
        text, n = pattern.subn(_render_at(render, when), text)
        resolved = resolved or n > 0
    if not resolved and _VAGUE_TIME.search(text):
        end = len(text.rstrip(".!"))
        text = f"{text[:end]} (said on {_day(when)}){text[end:]}"
    return text


# ------------------------------------------------------------------ sentences

def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][\w'-]*", text)


def _is_reaction(text: str) -> bool:
    words = [w.lower() for w in _words(text)]
    return all(w in _REACTION_WORDS for w in words)


def _keep(sentence: str) -> str | None:
    """The sentence to remember, interjections stripped, or None for a skip."""
    s = _INTERJECTION.sub("", sentence).strip(" -–—\"'")
    if not s or s.endswith("?") or _GREETING.match(s):
        return None
    if _HOME.match(s):
        return s.rstrip(" ,;:-")
    if len(_words(s)) < _MIN_WORDS or _is_reaction(s):
        return None
    first_person = bool(_FIRST_PERSON.search(s))
    if _ADVICE_START.match(s) and not first_person:
        return None  # advice or remarks about the listener: "Don't forget to rest", "You did great"
    if _SECOND_PERSON.search(s) and not first_person:
        return None
    if not first_person and not _third_subject(s) and len(_words(s)) < 7:
        return None
    return s.rstrip(" ,;:-")


_HOME = re.compile(r"^(?:I'm|I am)\s+(?:originally\s+)?from\s+(?P<v>[A-Z][\w-]+(?:\s[A-Z][\w-]+)?)\s*[.!]?$"
                   r"|^my\s+home\s+country\s+is\s+(?P<v2>[A-Z][\w-]+(?:\s[A-Z][\w-]+)?)\s*[.!]?$")
_PREFERENCE = re.compile(r"\b(?:love|loves|like|likes|enjoy|enjoys|prefer|prefers|favou?rite|hate|hates|always|never)\b", _I)


def _memory_text(sentence: str, name: str) -> str:
    if _FIRST_PERSON.search(sentence):
        text = _substitute(sentence, name)
    elif _third_subject(sentence) and not re.match(r"^(?:he|she|they|his|her|their)\b", sentence, _I):
        text = sentence
    else:
        text = f"{name} said that {sentence[0].lower()}{sentence[1:]}" if not sentence[:2].isupper() else f"{name} said that {sentence}"
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!" else text + "."


def extract_unit(unit: Unit, scope: str) -> list[Candidate]:
    """One memory per statement of the speaker's in the turn's user text."""
    raw = strip_memory_blocks(unit.user).strip()
    m = _SPEAKER.match(raw)
    name, body = (m.group("name"), m.group("text")) if m else ("The user", raw)
    possessive_name = name if m else "the user"
    notes = [n.group("note").strip() for n in _BRACKET.finditer(body)]
    body = _BRACKET.sub(" ", body)
    out: list[Candidate] = []
    seen: set[str] = set()
    statements = [(s, False) for s in _sentences(body)] + [(n, True) for n in notes]
    for sentence, is_note in statements:
        if MEMORY_TALK.search(sentence):
            continue
        key = belief = ""
        if is_note:
            if len(_words(sentence)) < 3:
                continue
            text = f"{name} {sentence[0].lower()}{sentence[1:]}".rstrip(" .") + "."
        else:
            kept = _keep(sentence)
            if kept is None:
                continue
            home = _HOME.match(kept)
            if home:
                key = normalize_key(f"{possessive_name} home country")
                belief = normalize_belief(home.group("v") or home.group("v2"))
            text = _memory_text(kept, name if m else "the user")
        text = _resolve_times(text, unit.ts_ms)
        text = text[0].upper() + text[1:]
        if text in seen:
            continue
        seen.add(text)
        kind = Kind.PREFERENCE if _PREFERENCE.search(sentence) and not is_note else Kind.FACT
        out.append(
            Candidate(
                text=text,
                key=key,
                belief=belief,
                kind=kind,
                salience=0.5,
                scope=scope,
                source_unit_ids=(unit.id,),
                valid_from_ms=unit.ts_ms,
                origin=Origin.EXTRACTOR,
                prompt_version=PROMPT_VERSION,
            )
        )
    return out
