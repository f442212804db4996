"""Pattern extraction for the rules client: one turn in, candidate memories out.

Pipeline per unit: clean and segment the user and assistant text (``rules_text``), drop
questions, hypotheticals, plans and memory-system talk, split sentences into clauses, then
try the extractors of ``EXTRACTORS`` in order; the first that matches a clause wins. The
extractors live in ``rules_facts`` (ports, hosts, locations, versions, env vars, key-value
facts), ``rules_procedures`` (commands, branches, owners, deadlines, conventions) and
``rules_choices`` (tool choices, storage, removals, switches); ``Clause``, ``Finding`` and
their shared helpers in ``rules_clause``. Extractors give a canonical key (``api port``,
``package manager``, ``test command``...) so that different phrasings of the same subject
supersede each other, and a template sentence that states the latest value without "now"
or "from now on". Credentials pasted in a turn are handled here: only the environment
variable they are read from is kept, never the secret.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from actors.llm import durable, removal
from actors.llm.rules_answers import answered_fact
from actors.llm.rules_choices import (
    removed_store,
    REMOVAL,
    extract_choice,
    extract_uses_name,
    extract_kept,
    extract_removal,
    extract_replacement,
    extract_role,
    extract_switch,
)
from actors.llm.rules_clause import (
    ESTIMATE,
    EVALUATIVE,
    EXCLUDED_BEFORE,
    MEASURE,
    NOT_SUBJECTS,
    Clause,
    Finding,
    article_free,
    cap,
    np_words,
)
from actors.llm.rules_configs import config_findings
from actors.llm.rules_diffs import diff_findings
from actors.llm.rules_facts import (
    ENV_NAME,
    VERSIONED_NAME,
    extract_destination,
    extract_env,
    extract_host,
    extract_called,
    extract_kv,
    extract_named_value,
    extract_quantity,
    extract_location,
    extract_port,
    extract_setting,
    extract_version,
)
from actors.llm.rules_procedures import (
    NOT_PEOPLE,
    STARTS_EXE,
    answered_command,
    extract_branch,
    extract_command,
    extract_convention,
    extract_deadline,
    extract_owner,
)
from actors.llm.rules_text import (
    third_person,
    HISTORICAL,
    ASKS_FIRST,
    CHANGE,
    STOPWORDS,
    TECH_PATTERN,
    MEMORY_TALK,
    PROPOSAL,
    assistant_ok,
    clauses,
    drop_plan_lists,
    is_statement,
    Documents,
    document_lines,
    listed_lines,
    mask_code,
    sentences,
    split_trailing_requests,
    strip_fillers,
    strip_memory_blocks,
    tech_category,
    tech_name,
)
from engine.grounding import find_whole, occurs_whole
from engine.keys import normalize_belief, normalize_key, normalize_text, value_kind
from engine.mentions import KINDS_OF_SHAPE
from engine.models import Candidate, Kind, Origin, Unit
from engine.utterance import statements, unwrap
from engine.values import CLOCK_TIME, value_shapes

__all__ = ["EXTRACTORS", "PROMPT_VERSION", "Clause", "Finding", "extract_unit"]

PROMPT_VERSION = "rules-v1"
_I = re.I


def _note(c: Clause) -> Finding | None:
    if not c.remember or len(c.text.split()) < 3 or c.text.lower().startswith("to "):
        return None  # "remember to switch it back on in May": a task to do, not a fact to keep
    return Finding("", "", Kind.FACT, cap(c.text) + ".", weight=0.1)


# A value by its shape, whatever the vocabulary: a number, a version, a path, a host, code,
# an ENV_VAR, a camelCase or CapitalisedName inside the sentence.
_VALUE_SHAPE = re.compile(
    r"`[^`]+`|(?<![\w.])\d+(?:[.:]\d+)*(?:ms|s|m|h|d|mb|gb|k|%)?\b|\b[\w-]+(?:/[\w.-]+)+/?|"
    r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|app|internal|local|lan|cloud|co|sh|ai)\b|"
    r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|(?<=\s)[A-Z][a-z]+[A-Z]\w*|(?<=\s)[A-Z][\w.+-]*[a-z][\w.+-]*|"
    r"\b[a-z][a-z0-9+.-]*://[^\s`'\")]+|(?<=\s)#[a-z][\w-]+"  # a URL with its scheme; a #channel
)
# A lead-in that announces what follows ("update from the standup:", "heads up:"): a few words
# with no value before a colon.
_LEAD_IN = re.compile(r"^(?P<head>[^:`]{1,60}?):\s+(?P<body>\S.*)$", re.S)


def _durable(text: str, speaker: str) -> bool:
    """The learned durability of a clause, judged also without a lead-in before a colon.

    "news from the planning call: we moved the queue to NATS at nats://mq:4222" states what
    its second part states; the lead-in is kept in the memory's text, only the judgement
    looks past it. A lead-in holding a value ("port: 8080") is part of the statement.
    """
    if durable.is_durable(text, speaker):
        return True
    lead = _LEAD_IN.match(text)
    if lead is None or len(lead.group("head").split()) > 6 or _VALUE_SHAPE.search(" " + lead.group("head")):
        return False
    return len(lead.group("body").split()) >= 3 and durable.is_durable(lead.group("body"), speaker)




# A distinctive value called old, previous or former: "the old 3.38 V cutoff", "the previous `v2` API".
_CALLED_OLD = re.compile(r"\b(?:old|previous|former)\s+(`[^`]+`|\d[\w.:/-]*|[\w-]+(?:[./:][\w-]+)+)", _I)


def _extractive(c: Clause) -> Finding | None:
    """The ``extractive`` profile's last resort: the clause as said, if the durable-clause model vouches for it."""
    return _as_said(c, vouched=False)


# How a reply reports a change it has just made: "Done", "All done", a statement of what holds "now",
# or a verb of changing a value, in the past tense, that took something *to* a new value ("Moved the
# cache to ...", "I've lowered the cap to 3"). Other past-tense openings report an action, not a
# setting: "Checked the logs ...", "Pushed as ...", "Appended a hook to `ci.yml`" (a place, not a value).
# "For now", "from now", "until now" and "by now" tell a time, not a change.
_CHANGED_TO = (r"(?:chang|mov|switch|rais|lower|bump|increas|decreas|reduc|cut|drop|updat|migrat|renam|point|pinn?|"
               r"upgrad|downgrad|swapp?|flipp?|extend|shorten|shrunk|set|reset|tun|adjust|halv|doubl)(?:ed)?")
_REPORT_OPENING = re.compile(rf"^\W*(?:all\s+)?done\b|(?<!\bfor )(?<!\bfrom )(?<!\buntil )(?<!\bby )\bnow\b|^\W*(?:i(?:'ve| have)?\s+)?{_CHANGED_TO}\b[^.:;]*?\sto\s", _I)
# A parenthesis, closed or left open by the sentence's end; code spans inside it may hold parentheses.
_PAREN_REST = r"(?:[^()`]|`[^`]*`)*(?:\)|$)"
# A report's aside after its value ("5 (`MAX_RETRIES` in `retry.py`)"); "(previously X)" stays: it names the old value.
_REPORT_ASIDE = re.compile(r"\s+\((?!\s*(?:previously|formerly|was|were)\b)" + _PAREN_REST)


def _reported(c: Clause) -> Finding | None:
    """What the assistant's reply opens by reporting it changed ("Done, uploads now go to the cold bucket
    `s3://ix-cold`", "Lowered the poll interval to 45s"): the clause as said (``_findings`` cut its aside),
    a closing colon before a code block cut, as a decision. A report of work done states how the turn left the
    project, so no learned judgement of durability is asked; a value shape is still required."""
    if c.speaker != "assistant" or not c.report or REMOVAL.search(c.text):
        return None  # a removal names what is gone, not a value that holds
    text = c.text
    if text.endswith(":"):  # it opens a code block: the clause must have said its value before the colon
        text = text.rstrip(" :")
        if not any(m.start() > 0 for m in _VALUE_SHAPE.finditer(text)):
            return None  # "`tool sync` now prints:": only the subject is said, what it prints is in the block
    if text != c.text:
        c = dataclasses.replace(c, text=text, low=text.lower())
    found = _as_said(c, vouched=True)
    if found is None or not found.text:
        return found  # nothing, or only values the report says are gone
    shaped = {normalize_belief(m.group(0).strip("`")) for m in _VALUE_SHAPE.finditer(text)}  # a capital opening no name
    if found.belief not in shaped:
        return None  # no value, or a plain word ("enough", "online"): an opening with no setting in it
    return dataclasses.replace(found, kind=Kind.DECISION)


def _document_line(c: Clause) -> Finding | None:
    """A line of a document the assistant wrote for the project (a README, an onboarding page, in a fenced
    markdown block) that no reading above keys: the line as written. Whoever writes a project's document
    states what holds; the line must still name a value (a shape: code, a path, a number, a name)."""
    if c.speaker != "assistant" or not c.document:
        return None
    found = _as_said(c, vouched=True)
    if found is None or not found.text:
        return None
    return found if _VALUE_SHAPE.search(" " + c.text) else None


def _as_said(c: Clause, vouched: bool) -> Finding | None:
    """The speaker's own clause, when a learned model reads it as a durable statement (or ``vouched``: the
    caller knows it states what holds, as an opening report of a change does).

    What no pattern reads is kept as said, cleaned, so nothing is rewritten and nothing is
    invented: "the nightly export writes to s3://acme-exports". Whether a clause states
    something that holds (and is not a question, plan, complaint, report or measurement) is
    decided by ``actors.llm.durable``, trained on a corpus written for it, not by word lists.
    A value the clause says was replaced ("from 8081 to 9090", "instead of `poetry`",
    "(previously X)") is cut from the memory's text and named in ``retires``, so the engine
    retires memories that still state it.
    """
    words = c.text.split()
    if len(words) > 40 or "`code`" in c.text:
        return None
    called_old = tuple(dict.fromkeys(m.group(1).strip("`") for m in _CALLED_OLD.finditer(c.text)))
    if called_old:
        # "so the old 3.38 V threshold was below brown-out": a value called old has been replaced;
        # the clause explains the change, the memory to keep is the change itself.
        return Finding("", "", Kind.FACT, "", retires=called_old)
    text, old = without_old_values(c.text)
    text = without_asides(text)
    text, gone = without_retired_parts(text)
    old = tuple(dict.fromkeys(old + gone))
    if not text:
        # The clause only says things are gone ("zerolog is gone, and so is the old cron", "dropping
        # brindle"): nothing to state, only values to retire. A removal is no statement the
        # durable-clause model has to vouch for.
        return Finding("", "", Kind.FACT, "", retires=old) if old else None
    if len(words) < 3 or ESTIMATE.search(text) or (not vouched and _POINTS_BACK.match(text)) \
            or not (vouched or _durable(c.text, c.speaker)):
        return None
    if len(text.split()) < 3 or (gone and not (vouched or _durable(text, c.speaker))):
        return None
    # The value the clause asserts: not one it names as replaced, nor one after "from", "off",
    # "not", "instead of" (the source of a move, an old value).
    value = _complement(text, old) or next((m for m in _VALUE_SHAPE.finditer(text) if m.group(0).strip("`") not in old
                                            and not EXCLUDED_BEFORE.search(text[: m.start()])), None)
    key, belief = _subject_key(text, value.group(0)) if value else ("", "")
    if value and not belief:
        belief = normalize_belief(value.group(0).strip("`"))
    return Finding(key, belief, Kind.FACT, cap(text) + ".", weight=-0.1, retires=old)


# A clause whose subject is a pronoun that points back ("That's the launcher from X", "It now runs
# on 9090", "They were moved to /srv"): what it is about is in another sentence, so the clause alone
# is no self-contained memory. "This project", "that file" (a determiner before a noun) still name it.
_POINTS_BACK = re.compile(
    r"^(?:[Ii]t|[Tt]hat|[Tt]his|[Tt]hese|[Tt]hose|[Tt]hey|[Hh]e|[Ss]he)(?:['’](?:s|re|ll|ve|d)\b|\s+(?:is|are|was|"
    r"were|will|would|should|can|could|does|did|do|has|have|had|must|might|may|now|also|still|just|only|then|all)\b)")


# A clause that ends in a present copula and one word: "the cache in front of the Wagtail site is
# nuster". The complement is what the clause asserts, whatever names its subject holds ("Wagtail").
# A past copula ("was", "were") states an old value, never the current one.
_COMPLEMENT = re.compile(r"\b(?:is|are)\s+(?:now\s+|still\s+)?(`[^`]+`|[\w.+#@:/-]+)\s*[.!]?$", _I)


def _complement(text: str, old: tuple[str, ...]) -> re.Match[str] | None:
    """The one-word complement closing a copular clause, as a match of that word, when it can be a
    value (no stopword, evaluative word or value called replaced)."""
    m = _COMPLEMENT.search(text)
    if m is None:
        return None
    word = m.group(1).strip("`").lower()
    if len(word) < 2 or word in STOPWORDS | EVALUATIVE | NOT_SUBJECTS or word in {o.lower() for o in old}:
        return None
    return re.compile(re.escape(m.group(1))).search(text, m.start(1))


# An old value next to the new one: "from X to Y", "X -> Y", "instead of X", "rather than X",
# "replacing X", "(previously X)", "(was X)". English constructions of a change, whatever the subject.
_OLD_TOKEN = r"(?:`[^`]+`|[\w.:/@~+-]*\w)"
_OLD_PAREN = re.compile(rf"\s*\((?:previously|formerly|was|were|used to be|replacing|replaces|not)\s+({_OLD_TOKEN})[^)]*\)", _I)
_OLD_INSTEAD = re.compile(rf",?\s*\b(?:instead of|rather than|replacing|in place of|in favou?r of nothing but)\s+(?:the\s+)?({_OLD_TOKEN})", _I)
# A contrast closing the clause: "logs over UDP, not syslog", "we stay with A, no B".
_OLD_CONTRAST = re.compile(rf",\s*(?:not|no|never)\s+(?:the\s+|more\s+)?({_OLD_TOKEN})\s*(?=$|[,;.])", _I)
_OLD_FROM_TO = re.compile(rf"\b(?:from|off|off of|away from)\s+(?:port\s+)?({_OLD_TOKEN})\s+(?P<to>to|onto|into|->|→)\s+", _I)
# A move off a place with no destination said: "we migrated off Jenkins last spring".
_OLD_MOVED_OFF = re.compile(
    rf"\b(?:migrat|mov|switch|port|transition)\w*\s+(?:\w+\s+){{0,4}}?(?:off(?:\s+of)?|away from)\s+({_OLD_TOKEN})", _I)
_OLD_ARROW = re.compile(rf"({_OLD_TOKEN})\s*(?:->|→|=>)\s*(?={_OLD_TOKEN})", _I)


def _names_something(token: str) -> bool:
    """Whether a token can be a replaced value: code, a value shape with a digit or an identifier
    character, or a word of three letters or more that is not a stopword."""
    if token.startswith("`"):
        return True
    if re.search(r"\d", token):
        return True
    if re.search(r"[./:_@#-]", token):
        return len(token) >= 2
    return len(token) >= 3 and token.lower() not in STOPWORDS | NOT_SUBJECTS | _SUBJECT_FILLER


def _cut_moved_off(old: list[str]) -> Callable[[re.Match[str]], str]:
    """ "migrated off Jenkins" -> "migrated", naming Jenkins as replaced (a name only)."""
    def sub(m: re.Match[str]) -> str:
        if not _names_something(m.group(1)):
            return m.group(0)
        old.append(m.group(1).strip("`"))
        return re.sub(r"\s+(?:off(?:\s+of)?|away from)\s*$", "", m.group(0)[: m.start(1) - m.start(0)])
    return sub


def without_old_values(text: str) -> tuple[str, tuple[str, ...]]:
    """The clause with the replaced values cut out, and those values.

    "api port changes from 8081 to 9090" -> ("api port changes to 9090", ("8081",)).
    """
    old: list[str] = []

    def cut(keep: str) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            value = m.group(1).strip("`")
            if not _names_something(m.group(1)):
                return m.group(0)  # "~13 h -> ~670": a unit or a stopword is no replaced value
            if _VALUE_SHAPE.fullmatch(m.group(1)) or m.group(1).startswith("`") or len(value.split()) == 1:
                old.append(value)
                # "off X onto Y" keeps its "onto"; an arrow becomes "to"
                to = (m.groupdict().get("to") or "").lower()
                return f"{to} " if keep and to in {"to", "onto", "into"} else keep
            return m.group(0)
        return sub

    out = _OLD_PAREN.sub(cut(""), text)
    out = _OLD_FROM_TO.sub(cut("to "), out)
    out = _OLD_ARROW.sub(cut(""), out)
    out = _OLD_MOVED_OFF.sub(_cut_moved_off(old), out)
    out = _OLD_INSTEAD.sub(cut(""), out)
    out = _OLD_CONTRAST.sub(lambda m: m.group(0) if m.group(1).lower() in EVALUATIVE else cut("")(m), out)
    out = re.sub(r"\s{2,}", " ", out).strip(" ,;")
    return out, tuple(dict.fromkeys(v for v in old if v and not occurs_whole(v, out)))


# An aside in parentheses that is a clause of its own ("(the old box kept 6379 busy for a
# week)", "(oslo, where the on-call people sit)"): it gives a reason or a side fact, often
# with other values, and is no part of what the clause states. A short one ("(eu/west)",
# "(per GPU)") names or qualifies the value and stays.
_ASIDE = re.compile(r"\s*\(" + _PAREN_REST)
_COPULA = re.compile(r"\b(?:is|are|was|were)\b", _I)


def without_asides(text: str) -> str:
    """The clause without its parenthesised asides of four words or more, or with a copula of their
    own ("(7445 is the legacy relay)" says something of another value); an aside left open at the end of
    the clause (the sentence was cut inside it) is an aside too. A closing contrast in the past tense
    ("..., whereas the old pool was 40") tells how things were, not how they are, and is cut too."""
    def cut(m: re.Match[str]) -> str:
        inner = m.group(0).strip(" ()")
        return "" if len(inner.split()) >= 4 or _COPULA.search(inner) else m.group(0)

    out = _PAST_CONTRAST.sub("", _ASIDE.sub(cut, text))
    return re.sub(r"\s{2,}", " ", out).strip(" ,;")


# A contrast clause whose own verb is in the past: "while / whereas <subject> was|were|used to ...". Not "but":
# "..., but the session store was migrated to X" states what holds now.
_PAST_CONTRAST = re.compile(r",?\s+\b(?:while|whereas)\s+(?:\S+\s+){1,5}?(?:was|were|used to|had been)\b.*$", _I)


# A part of a clause that says its subject is no longer there: "#old-builds got archived",
# "Zerolog is gone", "the v1 endpoint has been retired". English predicates of an ending (a closed
# list of words for "no longer exists"), whatever the subject; the subject comes first.
_RETIRED_PART = re.compile(
    r"^(?P<subject>\S+(?:\s+\S+){0,3}?)\s+(?:(?:is|are|was|were|got|gets|has been|have been|been|"
    r"is now|are now|now)\s+)?(?:now\s+)?(?:gone|removed|dropped|deleted|retired|archived|deprecated|"
    r"decommissioned|dead|disabled|turned off|shut down|sunset|sunsetted|ripped out|killed|"
    r"no longer (?:used|needed|in use|around|a thing)|not used anymore|not in use anymore)\b"
    r"(?P<rest>[^,;]*)$",
    _I,
)
# The same with the verb first: "(we) dropped / are dropping / ripped out / got rid of X", X a name
# and the whole part. The verbs are the removal verbs above; a negation before them ("don't
# drop X") is no removal.
_REMOVAL_FIRST = re.compile(
    r"^(?:(?:we|i|we've|we're|we are|we have|i've|i'm)\s+)?(?:just\s+|finally\s+|now\s+)?"
    r"(?:dropped|dropping|removed|removing|retired|retiring|deprecated|deprecating|ditched|ditching|killed|killing|"
    r"ripped out|ripping out|got rid of|getting rid of|decommissioned|decommissioning|sunsetted|sunsetting)\s+"
    r"(?P<thing>`[^`]+`|[\w.+/#@-]+)(?:\s+from\s+\S+(?:\s+\S+){0,5})?$",
    _I,
)
# A bare value continuing a list of removals: "Removed `a`, `b`, the `c` flag from the build".
_LISTED_VALUE = re.compile(r"^(?:the\s+)?(?P<thing>`[^`]+`)(?:\s+\w+){0,2}(?:\s+from\s+\S+(?:\s+\S+){0,5})?$", _I)
# Where one part of a clause ends and another begins: ", ", "; ", " and ", " but ", " so ".
_PART_SPLIT = re.compile(r"(,\s+(?:and\s+|but\s+|so\s+)?|;\s+|\s+(?:and|but|so)\s+)", _I)
_SUBJECT_FILLER = frozenset("the a an our old previous former legacy whole entire".split())


def _retired_values(subject: str) -> tuple[str, ...]:
    """The values a retired part names: its value-shaped words, or a one-word subject."""
    padded = " " + subject
    shaped = [m.group(0).strip("`") for m in _VALUE_SHAPE.finditer(padded)
              if m.group(0).lower() not in NOT_SUBJECTS | _SUBJECT_FILLER | STOPWORDS]
    if shaped:
        # A module path names its package by its last part: removing `github.com/acme/brindle`
        # removes brindle.
        tails = [v.rstrip("/").rsplit("/", 1)[-1] for v in shaped if re.fullmatch(r"[\w-]+(?:\.[\w-]+)+(?:/[\w.-]+)+/?", v)]
        return tuple(dict.fromkeys(shaped + [t for t in tails if len(t) >= 4 and not t[:1].isdigit()]))
    # A bare one-word subject is a name ("zerolog is gone"); with an article it is a common noun
    # ("the old dashboard is gone"), which names nothing distinctive enough to retire.
    words = re.findall(r"[\w.+/-]+", subject)
    if len(words) != 1 or len(words[0]) < 4 or words[0].lower() in NOT_SUBJECTS | _SUBJECT_FILLER:
        return ()
    return (words[0],)


def without_retired_parts(text: str) -> tuple[str, tuple[str, ...]]:
    """The clause without its parts that say a thing is gone, and the values those parts name.

    "build logs go to #ci-noise now, #ci-old got archived" -> ("build logs go to #ci-noise
    now", ("#ci-old",)). A part is cut only when it names a value to retire; code spans
    are never split.
    """
    spans: list[str] = []

    def hide(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    def show(part: str) -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)

    pieces = _PART_SPLIT.split(re.sub(r"`[^`]*`", hide, text))
    parts, joins = pieces[0::2], pieces[1::2]
    kept: list[str] = []
    gone: list[str] = []
    listing = False
    for i, part in enumerate(parts):
        said = re.sub(r"^\(?[a-z0-9]\)\s+", "", show(part).strip(), flags=_I)  # "(c) Removed ..."
        m = _RETIRED_PART.match(said)
        values = _retired_values(m.group("subject")) if m and len(m.group("rest").split()) <= 4 else ()
        if not values:
            # The verb first: "dropping brindle", "we ripped out `libfoo`", "removed `x` from the deps"
            first = _REMOVAL_FIRST.match(said) or (_LISTED_VALUE.match(said) if listing else None)
            values = _retired_values(first.group("thing")) if first else ()
            listing = bool(values)
        if values:
            gone.extend(values)
        else:
            kept.append((joins[i - 1] if i and kept else "") + part)
    if not gone:
        return text, ()
    return show("".join(kept)).strip(" ,;"), tuple(dict.fromkeys(gone))


# The verbs that end a subject phrase ("the nightly backups | run at 02:30"): a closed list of
# auxiliaries and the commonest verbs of project talk, in their present and past forms.
_SUBJECT_END = re.compile(
    r"^(?:is|are|was|were|be|been|has|have|had|should|must|will|can|may|needs?|gets?|got|runs?|ran|goes|go|"
    r"went|lives?|lived|sits?|uses?|used|points?|pointed|listens?|writes?|wrote|reads?|moved?|moves|"
    r"takes?|took|deploys?|deployed|builds?|built|ships?|shipped|leaves?|left|starts?|started|stays?|"
    r"stayed|comes?|came|happens?|belongs?|lands?|landed|publish(?:es|ed)?|sends?|sent|stores?|stored|"
    r"expires?|expired|rotates?|rotated|times? out|defaults?|defaulted|requires?|required|calls?|called|"
    r"talks?|connects?|connected|hits?|serves?|served|owns?|owned|handles?|handled|lasts?|caps?|capped)$",
    _I,
)
_SUBJECT_SKIP = frozenset("the a an our my your their its this that all every each now still also currently usually "
                           "always just actually really".split())


# A clause whose subject is the speaker, or that starts with its verb, names what it is about as the
# verb's object: pronoun?, verb, a determiner and a noun phrase, then the preposition that brings
# the value ("we moved the nightly export to 03:00", "bumped the retry limit to 7"). The
# determiner marks the noun phrase; the prepositions are those of a value given to a thing.
_OBJECT_SUBJECT = re.compile(
    r"^(?:(?:we|i|you)(?:'ve|'re|'ll)?\s+(?:\w+\s+)?)?[a-z]+\s+(?:the|our|a|an|this|that|its|their)\s+"
    r"(?P<np>[\w.+-]+(?:\s+[\w.+-]+){0,3}?)\s+(?:to|onto|into|at|on|in|as|for)\s+", _I)


_DETERMINERS = frozenset("the our its their this that these those my your".split())


def _verb_before_function_word(words: list[str]) -> list[str]:
    """The subject of "<determiner> <noun>... <verb> <function word or value>" when the verb is none
    of ``_SUBJECT_END``: "the sync worker polls every 30 seconds" -> ["sync", "worker"]. English
    puts the verb right before the words that bring its object or value, so the last word before
    the first function word (or value) is taken as the verb and the words before it as the noun
    phrase; with no determiner first, nothing is taken."""
    if not words or words[0].lower() not in _DETERMINERS:
        return []
    phrase: list[str] = []
    for word in words[1:7]:
        if word.lower() in _SUBJECT_SKIP:
            continue  # "now", "still", "also": an adverb before the verb
        if word.lower() in STOPWORDS or _VALUE_SHAPE.fullmatch(word):
            break
        phrase.append(word.lower())
    else:
        return []
    return phrase[:-1] if 2 <= len(phrase) <= 5 else []


def _subject_key(text: str, value: str) -> tuple[str, str]:
    """A key from the clause's own subject phrase and the kind of its value, or none.

    The subject is a noun phrase of one to four words before a verb, or, when the speaker is the
    subject or the verb comes first, the verb's object before the preposition that brings the
    value (``_OBJECT_SUBJECT``). The kind is the value's (``engine.keys.value_kind``), so one
    subject keeps one value per kind ("backups time", "backups location"). Other pronouns give
    no key, so the memory is kept by its text and never supersedes anything.
    """
    belief = normalize_belief(value.strip("`"))
    kind = value_kind(belief)
    obj = _OBJECT_SUBJECT.match(text)
    # Only when the preposition brings the value itself: in "the retry limit on the mobile client
    # to 7" the phrase after "on" qualifies the subject, and a key without it would merge subjects.
    if obj is not None and text[obj.end():].lstrip("` ").startswith(value.strip("`")):
        subject = [w.lower() for w in obj.group("np").split() if w.lower() not in _SUBJECT_SKIP]
        if 1 <= len(subject) <= 4 and not any(_VALUE_SHAPE.fullmatch(w) or w in STOPWORDS for w in subject):
            return f"{' '.join(subject)} {kind}", belief
        return "", ""
    words = re.findall(r"[\w.+/-]+", text)
    subject = []
    for word in words[:6]:
        if _SUBJECT_END.match(word):
            break
        if word.lower() not in _SUBJECT_SKIP:
            subject.append(word.lower())
    else:
        subject = _verb_before_function_word(words)
        if not subject:
            return "", ""
    if not 1 <= len(subject) <= 4 or subject[0] in {"we", "i", "you", "they", "it", "he", "she"} or value.lower() in subject:
        return "", ""
    if any(_VALUE_SHAPE.fullmatch(w) for w in subject):
        return "", ""
    return f"{' '.join(subject)} {kind}", belief


# A clock time in a clause: "03:30", "7:45"; "6pm" and "6:30pm" are no clock value here (too often a meeting).
_CLOCK = re.compile(rf"{CLOCK_TIME}(?![\w.])")


def _clock_time(c: Clause) -> Finding | None:
    """A schedule stated with a clock time ("the ledger sync runs every night at 01:40"): the speaker's own
    clause, keyed by its subject and the kind ``time``, when the durable-clause model reads it as a
    standing fact (not an event: "the deploy failed at 14:02"). Nothing is rewritten."""
    if not _CLOCK.search(c.text):
        return None
    found = _extractive(c)
    if found is None or not found.text or not _CLOCK.fullmatch(found.belief or ""):
        return None
    return found


# A labelled line ("Timezone: Europe/Dublin for all clinics", "Staging: https://staging.example.org"):
# a label of a few plain words, a colon, then what it is. How documents, READMEs and checklists state
# facts, one per line.
_LABELLED = re.compile(r"^(?P<label>[A-Za-z][A-Za-z /&-]{1,40}?)\s*:\s+(?P<rest>\S.*)$")
# A labelled line's whole value when it is short and holds a digit ("fp8", "3e-4", "512 × 512"), its aside cut.
_SHORT_VALUE = re.compile(r"^ ?(?P<v>(?=[^()]*\d)[^\s()]++(?: [×x*] [^\s()]++)?+) ?(?:\([^()]*\))?\.?$")
_COUNTED = re.compile(r"\s*~?\d[\d.,]*\s+[a-z]")  # a number and a unit or a counted noun
_PARTICIPLE = re.compile(r"[^e]ed$")  # "added", "fixed"; not "feed", "speed"


def _labelled(c: Clause) -> Finding | None:
    """A fact the assistant wrote down as a labelled line of a document: the line as written, keyed
    by its label and the kind of its first value (``engine.keys.value_kind``), so that a later line
    with the same label and another value supersedes it. The user's lead-ins ("heads up: ...") are
    no labels: only the assistant's writing is read this way. The durable-clause model is not asked:
    it was trained on sentences, and a labelled line is a noun phrase and a value."""
    if c.speaker != "assistant" or not c.listed:
        return None
    m = _LABELLED.match(c.text)
    if m is None or len(c.text.split()) > 25:
        return None
    label = [w.lower() for w in m.group("label").split() if w.lower() not in _SUBJECT_SKIP]
    rest = " " + m.group("rest")
    value = next((v for v in _VALUE_SHAPE.finditer(rest) if "`code`" not in v.group(0)), None)
    short = _SHORT_VALUE.match(rest)
    if short and not MEASURE.match(short.group("v")):
        value = short  # "Dtype: fp8", "Learning rate: 3e-4", "Crop size: 512 × 512": the whole short value
    if not 1 <= len(label) <= 4 or value is None or any(w in STOPWORDS for w in label):
        return None
    if _COUNTED.match(rest):
        return None  # "Before: 420 ms p95", "Impact: 312 users logged out": a measurement or a count
    if ESTIMATE.search(rest) or _PARTICIPLE.search(label[-1]):
        return None  # "Added: ...", "Fixed: ...": a past participle reports an action, not a fact ("Feed:" is a noun)
    belief = normalize_belief((value.group("v") if value is short else value.group(0)).strip("`"))
    # A known tool keeps the key a sentence about it gets ("State: Redux Toolkit" and "we use Redux
    # for state" are one setting), so that a change or a removal said either way reaches it.
    key = tech_category(tech_name(belief)) or f"{' '.join(label)} {value_kind(belief)}"
    return Finding(key, belief, Kind.FACT, cap(c.text.rstrip(".")) + ".", weight=-0.1)


# A value after which a unit or a count noun stands is a quantity, not a setting's value ("30 seconds", "4 replicas").
_QUANTITY_AFTER = re.compile(r"^\s*(?:[a-z%]+\b)?", _I)
# What a mention may carry: one value of a shape a setting is keyed by (``engine.mentions.KINDS_OF_SHAPE``).
_MENTIONED_SHAPES = frozenset({"url", "host", "path", "number"})


def _mention(c: Clause) -> Finding | None:
    """A durable statement that no reading keys and that holds exactly one value of a setting's shape (a host, a
    URL, a path, a port-like number) after its subject: "since the rebuild the image cache sits on ic4.ber.example.org".
    It is kept as said with ``update_only``: the engine applies it to the memory already held for a setting whose
    subject the clause names, as that setting's new value, and drops it otherwise (``engine.mentions``). So a change
    worded in a way no reading knows still retires the value it replaces, and nothing new is learned from it alone."""
    words = c.text.split()
    if not 3 <= len(words) <= 30 or "`code`" in c.text or ESTIMATE.search(c.text) or _POINTS_BACK.match(c.text):
        return None
    shapes = value_shapes(c.text)
    urls = shapes.get("url", frozenset())
    values = {v for shape, found in shapes.items() if shape != "code" for v in found
              if not (shape == "host" and any(v in u for u in urls))}
    coded = {v for v in shapes.get("code", frozenset()) if v not in values}
    if len(values) != 1 or coded or not set(shapes) - {"code"} <= _MENTIONED_SHAPES:
        return None
    value = next(iter(values))
    if value_kind(value) not in KINDS_OF_SHAPE:
        return None  # "foo.py", "fly.io": a name, which no mention updates
    at = find_whole(value, c.text)
    if at < 0 or EXCLUDED_BEFORE.search(c.text[:at]) or _secret_shaped(value):
        return None
    if len(c.text[:at].split()) < 2 or _PERSON_FIRST.match(c.text):
        return None  # "ship 2.4.1 to beta", "I fixed the bug in src/x.py": no setting is the subject before the value
    if _QUOTED.search(c.text[:at]):
        return None  # an example or a message quoted ('e.g. "error: status 409"'), not a setting's value
    if _NOT_SO.search(c.text[:at] + " " + c.text[at + len(value):]):
        return None  # denied, conditional, compared or an example: no value that holds
    if "number" in shapes:
        after = _QUANTITY_AFTER.match(c.text[at + len(value):])
        if not 2 <= int(value) <= 65535 or (after is not None and after.group(0).strip() and
                                            after.group(0).strip().lower() not in _NOT_A_UNIT):
            return None
        if not _PORT_BEFORE.search(c.text[:at]):
            return None  # "status 409", "PR 4411", "line 88": a number of the noun before it
    lead = _LEAD_IN.match(c.text)
    said = (c.text, lead.group("body")) if lead is not None and not _VALUE_SHAPE.search(" " + lead.group("head")) else (c.text,)
    if max(durable.score(t, c.speaker) for t in said) < MENTION_MIN_DURABLE:
        return None
    return Finding("", normalize_belief(value), Kind.FACT, cap(c.text.rstrip(".")) + ".", weight=-0.1, update_only=True)


# The durable-clause model's probability a mention needs: lower than a clause kept on its own needs (the
# model's threshold), as a mention must also name a setting memory holds before it changes anything.
MENTION_MIN_DURABLE = 0.5


# A clause whose subject is a person (the speaker, the listener, the team): what someone did or will do.
_PERSON_FIRST = re.compile(r"^\W*(?:i|we|you)(?:['’](?:m|ve|re|ll|d)|\b)", _I)
# A clause that denies, supposes, compares or illustrates: "don't move X to Y", "X can be overridden with Y",
# "X is slower than Y", "the sample config puts X on Y". English function words, a closed class.
_NOT_SO = re.compile(r"n['’]t\b|\b(?:not|never|no|can|could|may|might|would|should|must|will|['’]ll|if|unless|than|"
                     r"like|versus|vs|compared|example|sample|e\.g|for instance|such as|overrid\w*)\b", _I)
# An open quotation before a value: the value is inside what is quoted.
_QUOTED = re.compile(r"(?:^|[\s(])[\"“][^\"”]*$")
# What may stand right before a port-like number: a preposition, a copula, a colon or an equals sign, or "port".
_PORT_BEFORE = re.compile(r"(?:\b(?:to|on|onto|at|is|are|now|port|be|becomes|became|via|uses?|using)\s+|[:=]\s*)$", _I)
# Words that may follow a port-like number without making it a quantity ("moved to 2933 in the last PR").
_NOT_A_UNIT = frozenset({"in", "on", "at", "for", "and", "or", "but", "now", "today", "since", "after", "with", "from",
                         "by", "as", "so", "then", "again", "instead", "too", "also", "here", "there", "inside", "behind"})


READINGS: tuple[Callable[[Clause], Finding | None], ...] = (
    extract_replacement, extract_command, extract_port, extract_branch, extract_env, extract_setting, extract_host,
    extract_version, extract_removal, extract_choice, extract_role, extract_uses_name, extract_kept, extract_location, extract_destination, extract_owner, extract_deadline,
    _clock_time, extract_convention, extract_switch, extract_quantity, extract_kv, extract_named_value, extract_called, _labelled, _reported, _note, _document_line,
)
# A clause no reading keys may still name a held setting with a new value (``_mention``): tried last.
EXTRACTORS = (*READINGS, _mention)
# The "extractive" profile: the same readings, then the speaker's own clause as a last resort.
EXTRACTIVE = (*READINGS, _extractive, _mention)
# A clause longer than this is a paste (a log line, a minified blob), never one memory sentence.
MAX_CLAUSE_CHARS = 400
_BASE_SALIENCE = {Kind.DECISION: 0.65, Kind.PREFERENCE: 0.65, Kind.PROCEDURE: 0.6, Kind.FACT: 0.55, Kind.NOTE: 0.4}


# A verb denied just before a value: "does not answer on 7311", "was never on 5999", "is not served
# from 8444": at most three plain words between the negation and the value, none of them a number or
# a contrast ("isn't on 7311 but on 7312" asserts 7312); a negation that governs a whole clause ("I
# can't believe the relay is on 7312") has more words in between.
_DENIAL = re.compile(r"(?:\bnot|n't|\bnever|\bno longer)(?:\s+(?!but\b|instead\b|rather\b)[a-z-]+){0,3}\s+`?$", _I)


# Personal pronouns (a closed class of English): never the subject a key names.
_PRONOUNS = frozenset("i me we us you he him she her it they them".split())


def _pronoun_subject(key: str, clause: str) -> bool:
    """Whether a key's first word is a personal pronoun of the clause, not an acronym that spells one
    ("US region", "IT owns the laptops")."""
    first = key.split()[0].lower()
    return first in _PRONOUNS and not re.search(rf"\b{re.escape(first.upper())}\b", clause)


# Whose a thing is when it is not the project's: a person named ("Dana's", not a tool: "Kafka's"), a third
# person's ("his", "her", "their"), or a person by role ("my colleague's", "a client's"). English, a closed class.
# People by role (a closed class of English nouns), shared by the checks of whose a thing or a habit is.
_ROLES = (r"(?:colleague|co-?worker|friend|partner|client|customer|vendor|boss|manager|team-?mate|contractor|neighbou?r|"
          r"wife|husband|brother|sister)")
_OTHER_OWNER = re.compile(
    rf"(?:\b(?P<name>(?-i:[A-Z][a-z]+))['’]s|\b(?:his|her|their)|\b{_ROLES}s?['’]s?)\s+"
    r"(?:(?:own|old|new|local|personal)\s+)?$", _I)


_SETUP_WORDS = frozenset("prod production staging stage dev development local test testing qa uat sandbox preview "
                         "project app application repo service server team company product platform site cluster".split())


def _someone_elses(key: str, clause: str) -> bool:
    """Whether the first word of a key's subject is owned, in the clause, by someone other than the project
    (``_OTHER_OWNER``): "Dana's ledger proxy listens on X" keys no setting of ours; "the ledger proxy listens on X" does."""
    first = key.split()[0]
    at = re.search(rf"\b{re.escape(first)}", clause, _I)
    owner = _OTHER_OWNER.search(clause[: at.start()]) if at is not None else None
    # A capitalised name may be a tool's ("Kafka's broker port") or a part of the setup's opening a sentence
    # ("Staging's database is X"): only a name no tool list knows, and no such word, is a person's.
    return owner is not None and _a_person(owner.group("name") or "")


def _a_person(name: str) -> bool:
    """Whether a possessive's owner (empty for a pronoun or a role) is a person: a capitalised name no tool list
    knows and no part of the setup ("Kafka's", "Staging's" are not)."""
    return not (name and (tech_category(tech_name(name.lower())) or name.lower() in _SETUP_WORDS))


# A place that is someone else's ("on his laptop", "in Dana's .env", "from my colleague's machine"), or a subject
# that is ("so his .env has ...", at the start of a clause or after a conjunction; not "per Dana's request").
_ON_SOMEONES = re.compile(r"(?:\b(?:on|in|from)\s+|(?P<bare>^|\b(?:so|and|but|because|since|while|then)\s+))(?:\b(?:his|her|their)|(?!(?:let|it|that|there|here|what|who|where|how|he|she|this)['’])"
                          r"(?P<name>(?-i:[A-Z][a-z]+))['’]s|(?:a|my|our|the)\s+"
                          rf"{_ROLES}['’]s)"
                          r"\s+(?:(?:own|old|new|local|personal)\s+)?[\w.-]", _I)


def _on_someones(clause: str, value: str = "") -> bool:
    """Whether the clause places what it says on someone else's thing ("Tomasz runs Postgres on his mac on 5433",
    "the token is in Dana's .env"), or says it of someone else's thing before the value ("his .env has X=1884"):
    that person's setup, not the project's. A name that a tool list knows ("in Kafka's config") or a part of the
    setup ("on Staging's box") is no person."""
    at = clause.lower().rfind(value.lower()) if value else -1  # the value's last mention: "on 1884 ..., so his .env has 1884"
    for m in _ON_SOMEONES.finditer(clause):
        if m.group("bare") is not None and not 0 <= m.start() < at:
            continue  # a possessive subject counts before the value only
        if _a_person(m.group("name") or ""):
            return True
    return False


# A third person's habit: "she runs everything through X", "he prefers X" (English verbs of using, a closed class).
_THEIR_HABIT = re.compile(rf"\b(?:he|she|(?:my|a)\s+{_ROLES})\s+(?:\w+ly\s+|still\s+|always\s+)?(?:uses|runs|prefers|likes|loves|swears\s+by|"
                          r"sticks\s+(?:to|with)|works\s+(?:in|with)|is\s+used\s+to)\b", _I)


def _their_habit(value: str, clause: str) -> bool:
    """Whether the value follows a third person's habit in the clause ("Priya is on the frontend and she runs
    everything through yarn"): what that person uses, not what the project chose."""
    if not value:  # a rule without a value ("my coworker always runs the tests with --bail"): the habit opens it
        return bool(_THEIR_HABIT.match(clause.strip()))
    at = find_whole(value, clause)
    return at > 0 and bool(_THEIR_HABIT.search(clause[:at]))


def _denied(value: str, clause: str) -> bool:
    """Whether the clause denies ``value`` (the first place it names it whole) rather than asserting it:
    "not on 8080, it is on 808" denies 8080 only."""
    at = find_whole(value, clause)
    return at > 0 and bool(_DENIAL.search(normalize_text(clause)[:at]))


# A change in shorthand: "cache port 6379 -> 6380", "bumped deno 1.44 → 1.46", "sdk -> v4.2.0". One arrow outside code,
# a value right after it; what stands before it is the old value, the subject, or both.
_UNIT = r"\s?(?i:ms|s|secs?|mins?|h|hrs?|d|days?|[kmgt]i?b|kg|g|mg|km|cm|mm|m|mv|ma|v|a|kw|w|[kmg]?hz|%|px|rpm)(?![\w.])"
_ARROW = re.compile(rf"^(?P<left>[^`]*?)(?P<old>`[^`]+`|(?<![\w.])\d+(?:[.,]\d+)*{_UNIT}|[\w.:/@+-]*\w)(?:\s+(?:->|=>)\s+|\s*→\s*)"
                    rf"(?P<new>`[^`]+`|\d+(?:[.,]\d+)*{_UNIT}|[\w.:/@+-]*\w)"
                    r"(?P<rest>(?:[\s,;.)(].*)?)$", re.S)
_ARROWS = re.compile(r"->|→|=>")
_VERSION_LIKE = re.compile(r"v?\d+\.\d+", _I)
# What may follow the new value: nothing, a remark after a comma, an aside, or a word of time ("... -> 20 today").
_ARROW_REST = re.compile(r"^\s*(?:$|[,;.(]|(?:now|today|yesterday|tonight|this\s+(?:morning|week)|last\s+week)\b)", _I)
# Measurements, not settings: a latency percentile, a coverage, a usage.
_MEASURED = re.compile(r"\b(?:p\d\d|latency|coverage|usage|throughput|error\s+rate|uptime)\b", _I)
_DETERMINER = re.compile(r"(?:the|our|my|their|his|her|its|a|an)\s", _I)
# Nouns of an order of steps: an arrow after one joins two steps ("build steps: `make build` -> `make deploy`").
_SEQUENCE = re.compile(r"\b(?:steps|stages|flow|order|sequence|chain|pipeline)\s*$", _I)
_CHANGE_VERB = re.compile(r"\b(?:bump|upgrad|downgrad|mov|switch|chang|migrat|updat|rais|lower|set|renam|swapp?)\w*\s", _I)


def arrow_change(text: str) -> tuple[str, ...]:
    """A user's shorthand change with an arrow, written out in the words the readings know (a remark after a comma
    split off as a clause of its own): "SUBJECT OLD -> NEW"
    as "bumped SUBJECT from OLD to NEW" (a number or version) or "changed SUBJECT from OLD to NEW" (a word), the
    user's own verb kept when one stands before the subject; "SUBJECT -> NEW" as "bumped / changed SUBJECT to NEW".
    The word before the arrow is the old value when it has the new value's shape (both with digits), or when a
    subject of its own stands before it. A sequence of steps ("build → test → ship", more than one arrow), or an
    arrow with no subject or no value after it, is no change."""
    if len(_ARROWS.findall(text)) != 1:
        return (text,)
    m = _ARROW.match(text)
    if m is None:
        return (text,)
    left, old, new, rest = m.group("left"), m.group("old"), m.group("new"), m.group("rest")
    if new.lower() in STOPWORDS or old.lower() in STOPWORDS or re.search(r"\b(?:is|are|was|were)\s*$", left, _I):
        return (text,)  # "the port is 8080 -> no wait": no value after the arrow
    cut = max(left.rfind(ch) for ch in ":;,)(") + 1
    before, subject = left[:cut], left[cut:].strip()
    if not subject and before.rstrip().endswith(":"):  # "the API: 1111 -> 1320": the label says what changed
        head = before.rstrip()[:-1]
        cut = max(head.rfind(ch) for ch in ":;,)(") + 1
        before, subject = head[:cut], head[cut:].strip()
    if strip_fillers(before)[0] or not _ARROW_REST.match(rest) or new.endswith("%") or _MEASURED.search(subject):
        return (text,)  # "proposal: ...", "staging only: ...", "... on my machine", "... broke login", "p99 800ms -> 120ms"
    words = subject.lower().split()
    if not _CHANGE_VERB.search(subject) and (len(words) > 4 or any(w in _PRONOUNS for w in words)
                                             or any(w in {"the", "our", "my", "a", "an"} for w in words[1:])):
        return (text,)  # "i thought the port changed ...", "the client wants the sla ...": no noun phrase alone
    digits = bool(re.search(r"\d", new))
    # The word before the arrow is the old value when it has the new value's shape (both with digits) or is a tool
    # by name ("cache backend memcached -> dragonfly"); a plain word is the subject's last ("user sessions -> X").
    is_old = (digits and bool(re.search(r"\d", old))) or (bool(subject) and not digits and bool(TECH_PATTERN.fullmatch(old))) \
        or (all(v.startswith("`") and (" " in v.strip("`") or STARTS_EXE.match(v.strip("`"))) for v in (old, new))
            and not _SEQUENCE.search(subject))
    # (two command lines in code: one replaced by the other; "`get_user` -> `fetch_user`" is a rename, no command)
    if not is_old:
        if not digits and (subject or TECH_PATTERN.fullmatch(old) or not (TECH_PATTERN.fullmatch(new) or new.startswith("`"))):
            return (text,)  # "jest -> vitest" (a swap the readings know), "user sessions -> X": no subject said whole
        subject = f"{subject} {old}".strip()
    if not subject:
        return (text,)  # "5432 -> 6432": nothing says what changed
    if _CHANGE_VERB.search(subject):
        verb = ""  # "bumped node 18 → 20": the user's own verb
    elif digits and (VERSIONED_NAME.fullmatch(subject.split()[-1]) or _VERSION_LIKE.match(new)):
        verb = "bumped "  # "deno 1.44 -> 1.46", "sdk -> v4.2.0": a version
    else:
        verb = "changed " if len(subject.split()) == 1 or _DETERMINER.match(subject) else "changed the "
    change = f"{verb}{subject} from {old} to {new}" if is_old else f"{verb}{subject} to {new}"
    said = f"{before}{' ' if before else ''}{change}"
    remark = re.match(r"\s*,\s*(?P<r>\S.*)$", rest, re.S)  # "..., less ops work": a clause of its own
    return (said, remark.group("r")) if remark else (said + rest,)


# A value that opens with a word of negation is no value: what follows it is denied (``_findings``).
_NEGATION_WORD = re.compile(r"(?:no longer|not|no|never|none|nothing)(?:$|\s)", _I)


# A correction in two clauses: what no longer holds, then the value that does, pointed back to by "it"
# ("the worker isn't on 7001 any more, it's 7002"; "the registry is no longer quay.io; it is ghcr.io now";
# "deploys don't go through Jenkins anymore, it's Buildkite"). The second clause alone names no subject.
_NO_LONGER = re.compile(
    r"^(?P<subject>\S.*?)\s+(?:(?P<copula>is|are)(?:n['’]?t|\s+not|\s+no\s+longer)|(?:do|does)(?:n['’]?t|\s+not)\s+(?P<verb>[a-z]+)|"
    r"no\s+longer\s+(?P<inflected>[a-z]+))\s+(?P<prep>(?:on|at|in|into|to|through|via|under|with|behind)\s+)?"
    r"(?P<old>`[^`]+`|[^\s,;]+)(?:\s+(?:any\s*more|now|these\s+days))?\s*$", _I)
_IT_NOW = re.compile(r"^(?:but\s+|now\s+)?it(?:['’]?s|\s+is)\s+(?:now\s+)?(?P<prep>(?:on|at|in|into|to|through|via|under|with|behind)\s+)?"
                    r"(?P<new>`[^`]+`|[^\s,;]+?)(?:\s+(?:now|instead|these\s+days))?\s*[.!]?$", _I)


_NO_MORE = re.compile(r"\b(?:any\s*more|no\s+longer|now|these\s+days)\b", _I)  # what says the old value held before


def corrected(parts: list[str]) -> list[str]:
    """Clauses with a correction (``_NO_LONGER`` then ``_IT_NOW``, in one clause or two) written as one statement
    of what holds, the old value named as replaced: "the worker now listens on 7002 instead of 7001". The new
    value must have a value's form and differ from the old one ("it's fine", "it's still 7001": no correction), the old
    one too, and the correction must say that the old value held before ("any more", "no longer", "now"): "the
    slowness isn't Postgres, it's Redis" is a diagnosis."""
    out: list[str] = []
    i = 0
    while i < len(parts):
        if len(parts[i]) > MAX_CLAUSE_CHARS:  # a paste, never one clause; and the patterns stay linear in its size
            out.append(parts[i])
            i += 1
            continue
        pair = None
        if i + 1 < len(parts):
            pair = (parts[i], parts[i + 1])
        splice = re.match(r"^(?P<a>.+?)\s*[,—–]\s*(?P<b>(?:but\s+|now\s+)?it(?:['’]?s|\s+is)\s.+)$", parts[i], _I)
        for a, b, used in (((splice.group("a"), splice.group("b"), 1),) if splice else ()) + (((*pair, 2),) if pair else ()):
            gone, now = _NO_LONGER.match(a.strip()), _IT_NOW.match(b.strip())
            if gone is None or now is None:
                continue
            old, new = gone.group("old"), now.group("new")
            if old.strip("`").lower() == new.strip("`").lower() or not _VALUE_SHAPE.search(f" {new}") \
                    or not _VALUE_SHAPE.search(f" {old}") or new.lower() in STOPWORDS \
                    or not _NO_MORE.search(f"{a} {b}"):
                continue  # "the slowness isn't Postgres, it's Redis": a diagnosis, not a value that changed
            prep = now.group("prep") or gone.group("prep") or ""
            if gone.group("copula"):
                said = f"{gone.group('subject')} {gone.group('copula')} now {prep}{new} instead of {old}"
            else:
                verb = gone.group("inflected") or (
                    third_person(gone.group("verb")) if "does" in gone.group(0).lower() else gone.group("verb"))
                said = f"{gone.group('subject')} now {verb} {prep}{new} instead of {old}"
            out.append(said)
            i += used
            break
        else:
            out.append(parts[i])
            i += 1
    return out


# A decision announced before what was decided: "we decided: ...", "decision from the call: ...",
# "we agreed that ...". What follows is the statement, and it holds although it may be in the future
# tense ("the sync window will be 45 minutes").
_DECIDED_PREFIX = re.compile(r"^(?:we|i|they|the team)\s+(?:have\s+)?(?:decided|agreed)(?:\s+that|\s+to(?=\s+[a-z]+\s))?\s+(?=\S+\s+\S+\s+\S)", _I)
_DECIDED_HEAD = re.compile(r"\b(?:we|i|they|the team)\s+(?:have\s+|finally\s+)?(?:decided|agreed)$", _I)
_DECISION_WORD = re.compile(r"\b(?:decided|decision|agreed|final)\b", _I)
# A lead-in that names the subject of the decision: "tokenizer decision", "the queue choice".
_ABOUT_HEAD = re.compile(r"^(?:the\s+|our\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+(?:decision|choice)$", _I)


def _decided(text: str) -> tuple[str, bool]:
    """The clause without a lead-in that announces a decision ("decision:", "agreed in the call:", "we
    decided (that)"), and whether there was one."""
    prefix = _DECIDED_PREFIX.match(text)
    if prefix:
        return text[prefix.end():], True
    lead = _LEAD_IN.match(text)
    inner = _DECIDED_PREFIX.match(lead.group("body")) if lead is not None and len(lead.group("head").split()) <= 6 else None
    if lead is not None and inner is not None and not _VALUE_SHAPE.search(" " + lead.group("head")):
        return lead.group("body")[inner.end():], True  # "news from the sync: we agreed to move X to Y"
    announced = lead is not None and _DECIDED_HEAD.search(lead.group("head"))  # "at the sync with ops we agreed:"
    if lead is None or (len(lead.group("head").split()) > 4 and not announced) \
            or not _DECISION_WORD.search(lead.group("head")):
        return text, False  # other lead-ins ("heads up:", "from the call:") are left to the readings
    if len(lead.group("body").split()) < 3:
        return text, False
    if _ABOUT_HEAD.match(lead.group("head").strip()):
        return text, True  # "tokenizer decision: we picked X": the lead-in names what was decided on
    return lead.group("body"), True


# A lead-in that only names a file, in backticks or with its folder ("`setup.md`: ...", "config/app.toml: ...";
# not "Next.js: ..."): where the assistant wrote a statement, in its summary of edits; the statement is read alone.
_FILE_LEAD = re.compile(r"^(?:`(?:[\w.-]+/)*[\w.-]+\.\w{1,5}`|(?:[\w.-]+/)+[\w.-]+\.\w{1,5})\s*:\s+(?=\S)")


# A lead-in that says what follows does not hold (yet, here): a plan, a wish, an option, another party's product.
_NOT_A_REPORT = re.compile(r"\b(?:todo|to-do|to do|plan\w*|wish\w*|ideas?|options?|proposals?|consider\w*|maybe|"
                           r"competitor\w*|example|hypothetic\w*|draft|someday|later|might|may|could|would)\b", _I)
# A clause that opens on its own subject: a determiner and a word ("the gauges ...", "our staging box ...").
_OWN_SUBJECT = re.compile(r"^(?:the|our|all|every|each)\s+[a-z][\w-]*", _I)
_IT_IS = re.compile(r"^it(?:'s|’s|\s+is)\s+(?:now\s+)?", _I)
_LEAD_THING = re.compile(r"\b(?:the|our)\s+(?!(?:same|other|new|old|whole)\b)(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})\s*$", _I)


# A value named first and then identified: "mq-2.lan is the nightly broker", "release-x is our base branch",
# "add mq-2.lan to your hosts file, that's the nightly broker". The value is one word: a shape (a host, a path,
# a number, code) or a name, or after a comma the last value by its shape before it; the thing after "the" or "our"
# is a noun phrase of one to four words ending the clause, or such a phrase and what it is for or of ("Valkey is the
# primary store for the rate limits").
_IS_THE = re.compile(r"^(?P<v>`[^`]+`|[\w][\w.:/@+-]*)\s+is\s+(?:the|our)\s+(?P<np>(?P<head>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
                     r"(?:\s+(?:for|of)\s+(?:the\s+|our\s+|all\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})?)\s*[.!]?$", _I)
_THATS_THE = re.compile(r",\s+(?:that's|that\s+is|which\s+is)\s+"
                        r"(?:the|our)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)(?:\s+(?:here|now|too))?\s*[.!]?$", _I)


# What a value named first can be identified as: a place of the project's infrastructure or code (a closed class of
# nouns; never a secret: "hunter2 is the staging password" stays unread, nor a judgement: "redis is the bottleneck").
_PLACES = frozenset("database db cache host server box machine node branch registry bucket queue broker endpoint url "
                    "domain region cluster store datastore directory folder path repo repository channel gateway proxy "
                    "instance mirror home".split())
# Words that make the thing named an old or another party's one: "db-3.lan is the legacy database".
_NOT_CURRENT = frozenset("old legacy previous former competitor competitors vendor upstream".split())


def _inverted(said: str) -> str:
    """A clause that names a value first and then says what it is (``_IS_THE``, ``_THATS_THE``), written the other way
    round, or "" when it is no such clause. The value is no pronoun or plain function word, the thing named no
    judgement ("PR-42 is the culprit", "that one is the problem")."""
    m = _IS_THE.match(said) or _THATS_THE.search(said)
    if m is None:
        return ""
    if m.re is _THATS_THE:  # the value pointed back to: the last one by its shape before the comma
        shaped = [v for v in _VALUE_SHAPE.finditer(" " + said[: m.start()]) if v.start() > 0 or v.group(0).strip()]
        if not shaped:
            return ""  # "restart it, that's the staging db": only a value by its shape is pointed back to
        value = shaped[-1].group(0).strip()
    else:
        value = m.group("v")
    words = m.group("np").lower().split()
    head = (m.group("head") if "head" in m.re.groupindex else m.group("np")).lower().split()
    if value.lower() in STOPWORDS | _PRONOUNS or words[0] in NOT_SUBJECTS or head[-1] not in _PLACES \
            or any(w in STOPWORDS or w in EVALUATIVE or w in _NOT_CURRENT for w in words
                   if w not in ("for", "of", "the", "our", "all")) or HISTORICAL.search(said):
        return ""
    thing = re.sub(r"\b(for|of)\s+(?:the|our|all)\s+", r"\1 ", m.group("np"), flags=_I)  # "store for the rate limits"
    return f"the {thing} is {value}"


# A team saying what it is by a tool's name: "we're pnpm", "we are a gradle shop" (only a known tool's name counts).
_WE_ARE_TOOL = re.compile(r"(?:^|[,;]\s+)(?:but\s+|and\s+|fwiw\s+)?we(?:['’]re|\s+are)\s+(?:an?\s+)?(?:all\s+)?"
                          r"(?P<tool>[\w+#-]+(?:\.js)?)(?:\s+(?:shop|team|house|people|folks))?"
                          r"(?P<part>\s+on\s+the\s+[a-z]+)?(?:\s+(?:here|only|all the way|not\s+[\w.+#-]+))?(?=\s*(?:$|[,;.!]))", _I)


def _antecedent(head: str, body: str) -> str:
    """The body of a lead-in with "it" read as the thing the lead ends on: "board v2 swaps the level sensor: it's a
    VL53L1X now" -> "the level sensor is a VL53L1X now". Any other body is returned as it is."""
    it, thing = _IT_IS.match(body), _LEAD_THING.search(head)
    return f"the {thing.group('np')} is {body[it.end():]}" if it and thing else body


# A sentence whose subject is "it" and a verb: what "it" is was named before.
_IT_SUBJECT = re.compile(r"^(?:and\s+|so\s+)?it(?=\s+(?:is|was|has|now|still|also|just|only|[a-z]+s)\b|['’]s\b)", _I)


_ASKS = re.compile(r"^(?:(?:can|could|would|will)\s+you|please|pls|let['’]?s)\b", _I)


def _pointed_back(split: list[str]) -> list[str]:
    """Sentences with a leading "it" read as the thing a question or request before them ends on: "could you add a
    runbook entry for the status page? it binds to 18450" -> "the status page binds to 18450". Otherwise "it" stays (a reading may then
    take the project's main service, or nothing)."""
    out = list(split)
    for i in range(1, len(split)):
        it = _IT_SUBJECT.match(split[i].strip())
        before = split[i - 1].strip()
        # only after a question or a request: a statement's last noun is often its object ("the API depends on the
        # cache. It serves on 4000": "it" is the API), and its subject is no safer a guess
        asked = before.endswith("?") or _ASKS.match(before)
        thing = _LEAD_THING.search(before.rstrip("?.!:").rstrip()) if it and asked else None
        if it and thing:
            out[i] = f"the {thing.group('np')}{split[i].strip()[it.end():]}"
    return out


def _findings(sentence: str, speaker: str, extractors: tuple[Callable[[Clause], Finding | None], ...],
              listed: tuple[str, ...] = (), opening: bool = False, documents: Documents = Documents(),
              project: str = "") -> list[Finding]:
    in_list = any(sentence in line for line in listed)
    in_document = speaker == "assistant" and documents.holds(sentence)
    reporting = report = opening and speaker == "assistant" and bool(_REPORT_OPENING.search(sentence))
    opened = decision = False
    out: list[Finding] = []
    label = _LABELLED.match(sentence) if in_list and speaker == "assistant" else None
    said_parts = [q for p in corrected(clauses(sentence)) for q in (arrow_change(p) if speaker == "user" else (p,))]
    for n, said in enumerate(said_parts):
        labelled = label is not None and n > 0 and not _LABELLED.match(said)
        # "| Hosting | Render; previews deploy with `render preview` |": each clause of a labelled line is read under its
        # label, and as said when the label leaves it no statement ("- Next steps: rerun seeds; the db is now X")
        variants = (f"{label.group('label').strip()}: {said}", said) if label is not None and labelled else (said,)
        lead = _LEAD_IN.match(said) if label is None and speaker == "user" else None
        if lead is not None and len(lead.group("head").split()) <= 10 and len(lead.group("body").split()) >= 3 \
                and is_statement(lead.group("head"), False) and not _NOT_A_REPORT.search(lead.group("head")):
            if _OWN_SUBJECT.match(lead.group("body")) and len(lead.group("head").split()) >= 3 \
                    and not _VALUE_SHAPE.search(" " + lead.group("head")):
                # "notes from the supplier meeting: the gauges are X": the body names its own subject, so no
                # key spans the colon; a lead-in of three words or more is where it was heard (a shorter one
                # qualifies what follows: "staging: the api listens on 7070")
                variants = (lead.group("body"), said)
            elif len(lead.group("head").split()) <= 6:
                variants = (said, _antecedent(lead.group("head"), lead.group("body")))  # "news from the bench: it's X"
        if lead is not None and len(lead.group("head").split()) <= 6 \
                and (_NOT_A_REPORT.search(lead.group("head")) or not is_statement(lead.group("head"), False)):
            continue  # "todo: bump the runtime to 22", "tomorrow: move the queue": what the head plans is not done
        inverted = _inverted(said) if speaker == "user" else ""  # a reply explains logs of other systems that way
        identity = _WE_ARE_TOOL.search(said.strip(" .!")) if speaker == "user" else None
        if identity is not None and tech_category(tech_name(identity.group("tool"))):
            variants = (*variants, f"we use {identity.group('tool')}{identity.group('part') or ''}")  # "we're pnpm"
        if inverted:  # "mq-2.lan is the nightly broker" reads as "the nightly broker is mq-2.lan"
            variants = (inverted, *variants)
        tried: list[tuple[Clause, str]] = []  # the clauses no reading keyed, for a mention (``_mention``) at the end
        found_before = len(out)
        for part in variants:
            before = len(out)
            if len(part) > MAX_CLAUSE_CHARS:
                continue  # no memory is a 400-character clause; and patterns stay linear in the turn's size
            text, changed, remember = strip_fillers(part)
            if speaker == "assistant":  # its summary of edits: "`docs/setup.md`: the relay is now X": X holds
                text = _FILE_LEAD.sub("", text)
            if speaker == "user":
                text, decided = _decided(text)
                decision = decision or decided  # "we agreed: three was too few, the cap will be 5": it covers both
                changed = changed or decision
            if text:  # the report is the first clause said, and a later one of the sentence that says what holds now
                report, opened = reporting and (not opened or bool(_REPORT_OPENING.search(text))), True
            if not text or MEMORY_TALK.search(text) or not is_statement(text, changed) or PROPOSAL.search(text):
                continue  # a question, a plan, a hypothesis or a reported proposal states nothing
            if speaker == "assistant" and not assistant_ok(text):
                continue
            if report:  # "Upgraded to Zig 0.13 (`build.zig.zon` too)": the aside is a detail, not the change
                text = _REPORT_ASIDE.sub("", text).rstrip()
            text = mask_code(text, STARTS_EXE)
            clause = Clause(text, text.lower(), changed or bool(CHANGE.search(text)), remember, speaker, changed,
                            listed=in_list, report=report, document=in_document, project=project)
            tried.append((clause, part))
            for extractor in extractors:
                if extractor is _mention:
                    continue
                finding = extractor(clause)
                if finding is None:
                    continue
                if finding.belief and not occurs_whole(finding.belief, part):
                    continue  # a value the clause does not say ("`fly`" from "fly.io"): try the next reading
                if finding.key and _pronoun_subject(finding.key, part):
                    continue  # "move them to 2.3": a pronoun names no setting ("them version")
                if not finding.negated and ((finding.key and _someone_elses(finding.key, part))
                                            or ((finding.key or finding.belief) and _on_someones(part, finding.belief))
                                            or _their_habit(finding.belief, part)):
                    continue  # "Dana's ledger proxy listens on X", "X runs on her laptop": another person's setup
                if not finding.negated and finding.belief and _denied(finding.belief, part):
                    continue  # "the cache box does not answer on 7311": the clause denies the value it names
                if not finding.negated and _NEGATION_WORD.match(finding.belief) and len(finding.belief.split()) <= 4:
                    # "the queue is no longer X", "the base branch is not Y": a denial read as the value (a short one:
                    # a rule worded as a prohibition is a convention). A distinctive value denied (a shape: a host, a
                    # version, a path) no longer holds, as "no longer" says; a plain name ("no longer Postgres") names
                    # too much else to retire (the staging db's Postgres is not the production db's)
                    denied = _NEGATION_WORD.sub("", finding.belief, count=1).strip()
                    said_so = re.search(re.escape(denied), part, _I) if denied else None
                    denied = said_so.group(0) if said_so else denied  # as the clause writes it
                    if denied and re.search(r"[\d./:_@-]", denied) and re.match(r"no longer\s", finding.belief, _I):
                        out.append(Finding("", "", Kind.FACT, "", retires=(denied,)))
                        break
                    continue
                if not finding.key and not finding.belief and not finding.negated and _their_habit("", part):
                    continue  # "my coworker always runs the tests with --bail": their habit, no rule of ours
                if clause.changed and finding.kind is Kind.FACT:
                    finding = dataclasses.replace(finding, kind=Kind.DECISION)
                out.append(_in_environment(finding, part))
                break
            if len(out) > before:
                break
        if len(out) == found_before and _mention in extractors:
            # No reading keyed any variant of the clause: it may still name a held setting with a new value.
            for clause, part in tried:
                named = _mention(clause)
                if named is not None and occurs_whole(named.belief, part) and not _denied(named.belief, part) \
                        and not _on_someones(part, named.belief):
                    out.append(named)
                    break
    return out


# A clause fronted by the environment it is about: "for prod, ...", "in production ...", "on staging, ...", "qa: ...".
_FRONTED_ENVIRONMENT = re.compile(
    r"^(?:(?:for|in|on)\s+(?:the\s+)?)?(?P<env>staging|stage|prod|production|dev|development|qa|uat|preview|sandbox|canary)"
    r"(?:\s+(?:env|environment|cluster))?(?:\s*[,:]\s+|\s+(?=(?:the|our|we)\b))", _I)
_ENVIRONMENT_WORDS = frozenset("staging stage prod production dev development qa uat preview sandbox canary".split())


def _in_environment(found: Finding, part: str) -> Finding:
    """A setting read from a clause fronted by its environment is that environment's: "for prod, the gateway
    sits at X" keys the prod gateway, which a later value of the gateway said for no environment (or another)
    does not replace. A key that already names an environment is left as read."""
    env = _FRONTED_ENVIRONMENT.match(part.strip())
    if env is None or not found.key or found.negated or _ENVIRONMENT_WORDS & set(found.key.lower().split()):
        return found
    word = env.group("env").lower()
    return dataclasses.replace(found, key=f"{word} {found.key}", text=f"{found.text.rstrip('.')} (in {word}).")


# ---------------------------------------------------------------- credentials

# An environment variable that holds a credential: its name ends with a secret word.
_CREDENTIAL_ENV = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|KEY|KEY_ID|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|PASS|"
    r"CREDENTIALS?|AUTH|PAT)\b"
)
_CREDENTIAL_WORD = re.compile(r"\b(?:api key|key|token|secret|password|passwd|credentials?|pat)\b", _I)
# A value that must never be stored: a redaction marker, a long hex string, a long token.
_SECRET_LIKE = re.compile(
    r"\[REDACTED|\b[0-9a-f]{24,}\b|(?<![\w/.-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{24,}(?![\w/.-])"
)


def _credential_service(text: str, env: str) -> str:
    """The service a pasted credential is for: "the Stripe key", "for Twilio", else the env var's prefix."""
    for match in _CREDENTIAL_WORD.finditer(text):
        phrase = np_words(text, match.start(), backwards=True, limit=3)
        if phrase and phrase.split()[-1].lower() not in {"env", "var", "variable"} and not ENV_NAME.search(phrase):
            return phrase
    for match in re.finditer(r"\b(?:for|with|to|and)\s+(?:the\s+)?([A-Z][\w.-]*(?:\s[A-Z][\w.-]*)?)", text):
        if not ENV_NAME.fullmatch(match.group(1)) and match.group(1) not in NOT_PEOPLE:
            return match.group(1)
    return env.split("_")[0].title()


def _secret_word(env: str) -> str:
    """What kind of secret an environment variable holds, by its last part: `X_API_KEY` an API key,
    `X_TOKEN` a token ("credential" when the name does not say)."""
    last = env.rsplit("_", 2)
    tail = "_".join(last[-2:]) if len(last) > 2 and last[-2] in {"API", "SECRET", "KEY"} else last[-1]
    return {"API_KEY": "API key", "SECRET_KEY": "secret key", "KEY_ID": "key id", "TOKEN": "token", "KEY": "key",
            "SECRET": "secret", "PASSWORD": "password", "PASSWD": "password", "PASS": "password",
            "CREDENTIALS": "credentials", "CREDENTIAL": "credential", "PAT": "access token"}.get(tail, "credential")


def _credentials(text: str) -> tuple[list[Finding], bool]:
    """Credentials a turn gives, as the environment variable they are read from; never the secret.

    "pasting the Stripe key: sk_live_... the app reads it from STRIPE_SECRET_KEY" ->
    "The Stripe credential is read from the STRIPE_SECRET_KEY environment variable."
    Returns the findings and whether the turn holds a credential at all.
    """
    names = list(dict.fromkeys(m.group(0) for m in _CREDENTIAL_ENV.finditer(text)))
    given = re.search(r"\b(?:goes in|go in|put it in|reads? it from|read from|env var|environment variable)\b|"
                      r"\b[A-Z][A-Z0-9_]+=", text, _I)
    if not names or not (_SECRET_LIKE.search(text) or given or _CREDENTIAL_WORD.search(_CREDENTIAL_ENV.sub(" ", text))):
        return [], False
    out = []
    for env in names:
        service = _credential_service(_CREDENTIAL_ENV.sub(" ", text), env)
        service = re.sub(r"^(?:the|our|my|a|an)\s+", "", service, flags=_I)
        service = service if service[:1].isupper() else f"the {service}"
        out.append(Finding(f"{article_free(service)} credential", env.lower(), Kind.FACT,
                           f"{cap(service)} {_secret_word(env)} is read from the {env} environment variable."))
    return out, True


# A pasted token: ten characters or more of letters and digits (and the punctuation of passwords), no path or URL.
_TOKEN_LIKE = re.compile(r"(?<![\w/.:-])(?=[\w!#$%&*+=?@^~-]*\d)(?=[\w!#$%&*+=?@^~-]*[A-Za-z])[\w!#$%&*+=?@^~-]{10,}(?![\w/.:])")
# What a key names when its value is a secret: "the pw is ...", "admin password: ...", "the signing key is ...".
_SECRET_KEY = re.compile(r"\b(?:password|passwd|pass|pw|pwd|passphrase|secret|token|api[ _-]?key|access[ _-]?key|"
                         r"private[ _-]?key|signing[ _-]?key|credentials?)$", _I)


def _a_secrets_value(found: Finding) -> bool:
    """Whether a finding states the value of a secret (its key names one) rather than where it is read from."""
    return bool(found.key and found.belief and _SECRET_KEY.search(found.key.strip())
                and not re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", found.belief))


def _credentials_read(reply: str) -> list[Finding]:
    """The credential variables a reply reads from the environment (``env("X_API_KEY")``, ``getenv``,
    ``process.env.X_TOKEN``, or named as where to put the value), said by the variable's service."""
    out = []
    for env in dict.fromkeys(m.group(0) for m in _CREDENTIAL_ENV.finditer(reply)):
        if _SECRET_LIKE.search(env):
            continue
        service = env.split("_")[0].title()
        out.append(Finding(" ".join(env.lower().split("_")), env.lower(), Kind.FACT,
                           f"{service} {_secret_word(env)} is read from the {env} environment variable."))
    return out


# A polite request for a change ("can you switch the linter to biome?", "could you please move
# the db to 6543?"): a question in form, an instruction in meaning.
_REQUEST = re.compile(
    r"(?:^|(?<=[.!\n]))\s*(?:(?:hey|ok(?:ay)?|so|and|also|pls|please)[,\s]+)*(?:can|could|would|will)\s+(?:you|we)\s+"
    r"(?:please\s+|pls\s+|just\s+|go ahead and\s+)*(?P<body>(?:switch|move|change|set|bump|upgrade|downgrade|"
    r"migrate|rename|point|use|update|replace|swap|pin|get\s+(?:on|onto)|go\s+(?:to|with))\b[^?\n]{3,160}?)"
    r"(?:\s+(?:pls|please))?\s*(?:\?|(?=[,;.]\s|\n|$))",
    _I,
)
# The assistant refuses, defers or proposes something else.
_DECLINED = re.compile(r"\b(?:can't|cannot|won't|wouldn't|couldn't|didn't|not possible|rather not|instead|hold off|"
                       rf"advise against|not sure|before i|{ASKS_FIRST})\b", _I)


def confirmed_requests(user: str, assistant: str) -> str:
    """The user's text with each polite request the assistant carried out said as an instruction.

    "can you switch the linter over to biome?" + "Done: ... added biome.json" reads as "switch
    the linter over to biome." A request counts as carried out when the reply names its last
    word (the requested value) and neither refuses nor asks back in its first sentences; else
    it stays a question, and questions state nothing.
    """
    head = assistant.strip()[:240]
    if not head or _DECLINED.search(head):
        return user

    def instruction(match: re.Match[str]) -> str:
        body = match.group("body").strip()
        last = re.findall(r"[\w.:/@-]+", body)
        if not last or not occurs_whole(last[-1].strip(".:"), assistant):
            return match.group(0)
        return " " + body + "."

    return _REQUEST.sub(instruction, user)


# A request to write a statement down ("can you put a line in the runbook that X?", "please document that X", "leave a
# comment in the config saying X"): the speaker asserts X; the request is only where it goes.
_RECORD_THAT = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?(?:"
    r"(?:add|put|write|leave|include)\s+(?:a|an|one)\s+(?:[\w.-]+\s+){0,2}?(?:note|line|comment|section|sentence|entry|paragraph)"
    r"\b[^?]{0,50}?\b(?:that|saying)|(?:document|note down|write down)\b[^?]{0,40}?\bthat)\s+(?P<said>[^?]{8,}?)\s*[?.!]*$", _I)


def _recorded(sentence: str) -> str:
    """The statement a request asks to write down (``_RECORD_THAT``), else the sentence itself."""
    m = _RECORD_THAT.match(sentence.strip())
    return cap(m.group("said")) + "." if m else sentence


def extract_unit(unit: Unit, scope: str, extractive: bool = False) -> list[Candidate]:
    """Candidates stated in one turn: the user's statements, and the assistant's completed changes.

    ``extractive``: also keep the user's own clause for a statement with a value that no
    pattern reads, and a question with the reply that answers it (the ``extractive`` profile).
    """
    extractors = EXTRACTIVE if extractive else EXTRACTORS
    seen: set[tuple[str, str, bool, str]] = set()
    values: dict[tuple[str, bool], str] = {}
    out: list[Candidate] = []
    credentials = _credentials(strip_memory_blocks(unit.user))[0]
    secret_turn = bool(credentials)
    # A secret pasted without saying where it goes, and a reply that reads it from the environment: the reply's
    # variables name where the project reads it ("the key is xkeysib-..." + `env("MAILER_API_KEY")`).
    told = strip_memory_blocks(unit.user)
    replied = [] if credentials or not (_SECRET_LIKE.search(told) or _TOKEN_LIKE.search(told)) \
        else _credentials_read(unit.assistant)  # (the log redacts what it recognises as a secret: "[REDACTED...]")
    pasted = _TOKEN_LIKE.findall(strip_memory_blocks(unit.user)) if replied else []
    user = confirmed_requests(unwrap(unit.user), unit.assistant)
    bodies = {"user": unwrap(user), "assistant": unwrap(drop_plan_lists(unit.assistant))}
    # Only the assistant's fenced documents are read (``rules_text.clean``); a user's paste is not.
    listed = {speaker: listed_lines(body, speaker == "assistant") for speaker, body in bodies.items()}
    documents = document_lines(bodies["assistant"])
    said = {}
    for speaker, body in bodies.items():
        split = _pointed_back(sentences(body, speaker == "assistant"))
        if speaker == "user":  # "could you add a note that the worker listens on 7301?": the user states it
            split = [_recorded(sentence) for sentence in split]
        stated = [sentence for sentence in statements(split_trailing_requests(split))  # never a question or request (issue 13)
                  if not MEMORY_TALK.search(sentence)]
        said[speaker] = [_findings(sentence, speaker, extractors, listed[speaker], opening=bool(split) and sentence == split[0],
                                   documents=documents if speaker == "assistant" else Documents(), project=unit.project)
                         for sentence in stated]
        # What the statements say is gone, read by the learned model (``removal``): each such thing
        # retires the memories that still state it, unless a reading above (of either speaker) already does.
        retired = [set(_words(value)) for groups in said.values() for group in groups for f in group
                   for value in ((f.belief,) if f.negated else ()) + f.retires]
        said[speaker].append([Finding("", "", Kind.FACT, "", retires=(thing,))
                              for thing in removal.gone(_for_removal(stated), speaker)
                              if not any(set(_words(thing)) <= r for r in retired)])
        # A plain name read as gone ("we retired Quarrystore for the thumbnails") retires only where the message says it kept
        # something: a plain word names too much else to retire every memory that mentions it.
        said[speaker].append([f for thing in removal.gone(_for_removal(stated), speaker, plain=True)
                              if not any(set(_words(thing)) <= r for r in retired)
                              for f in dict.fromkeys(removed_store(s, thing) for s in stated
                                                     if thing in removal.gone(s, speaker, plain=True)) if f is not None])
    # A diff the assistant shows is the change it made, line by line (``rules_diffs``).
    said["assistant"].append(diff_findings(unit.assistant))
    # A configuration file the assistant shows as it stands is read line by line (``rules_configs``).
    said["assistant"].append(config_findings(unit.assistant))
    answer = answered_command(unit.user, sentences(bodies["assistant"], True))  # "how do we build the docs?" "Run `x`."
    said["assistant"].append([answer] if answer else [])
    if extractive and answer is None:
        # "who maintains the tariff tables?" "`tariffs/` is Halvard's per CODEOWNERS.": the pair, as said
        # (``rules_answers``), in the extractive profile only: measured on TIDE's held-out wording, the default
        # profile would serve 0.5-2.1 points more stale values, as a pair states a value whose later change no
        # reading catches.
        fact = answered_fact(sentences(bodies["user"]), sentences(bodies["assistant"], True), _VALUE_SHAPE,
                             lambda said_: next((f for f in _findings(said_, "assistant", EXTRACTORS) if f.key), None))
        said["assistant"].append([fact] if fact else [])
    # The assistant reporting a change it made ("Upgraded: the toolchain is now 2.4.1") says how the
    # turn left a setting: the user's value for that key in the same turn is the one asked to be
    # changed ("toolchain 2.3 is end of life, upgrade it"), not a second current value.
    reported = {normalize_key(f.key) for group in said["assistant"] for f in group
                if f.key and not f.negated and f.kind is Kind.DECISION}
    for speaker in ("user", "assistant"):
        for found in said[speaker]:
            if speaker == "user" and reported:
                found = [f for f in found if f.negated or normalize_key(f.key) not in reported]
            if secret_turn and speaker == "user":
                found = []  # a turn pasting a credential states where it is read from, nothing else
            else:  # a secret-looking value is never stored, whatever the sentence says, nor any value of a secret
                found = [f for f in found if not (_SECRET_LIKE.search(f.text) or _CREDENTIAL_ENV.search(f.text)
                                                  or _a_secrets_value(f))]
            if speaker == "user" and credentials:
                found, credentials = credentials + found, []
            if replied and any(t in f.text for f in found for t in pasted):
                found = [f for f in found if not any(t in f.text for t in pasted)]  # the secret the reply keeps out
            if speaker == "assistant" and replied:
                found, replied = replied + found, []
            # A replaced value named by a kept clause retires what still states it, before the
            # clause itself is stored: "from 8081 to 9090" is "no longer 8081" and "9090".
            found = [Finding("", value, Kind.FACT, f"No longer current: {value}" + (f" ({f.text.rstrip('.')})." if f.text else "."),
                             negated=True)
                     for f in found for value in f.retires if not _secret_shaped(value)] + [f for f in found if f.text]
            for f in found:
                ident = (f.key, f.belief, f.negated, f.text if not f.key or f.as_said else "")
                if f.negated and not f.key:  # one removal of a value a turn, however many readings find it
                    ident = ("", normalize_belief(f.belief), True, "")
                if ident in seen:
                    continue
                if f.key:
                    # One turn gives one value per key: the first stated (the user's before the
                    # assistant's); a second value is a side case ("JS: `yarn test`").
                    first = values.setdefault((normalize_key(f.key), f.negated), normalize_belief(f.belief))
                    if first != normalize_belief(f.belief):
                        continue
                seen.add(ident)
                salience = _BASE_SALIENCE[f.kind] + f.weight + (-0.1 if speaker == "assistant" else 0.0)
                out.append(
                    Candidate(
                        text=f.text,
                        key=normalize_key(f.key),
                        belief=normalize_belief(f.belief),
                        kind=f.kind,
                        salience=round(min(max(salience, 0.1), 0.95), 3),
                        scope=scope,
                        source_unit_ids=(unit.id,),
                        valid_from_ms=unit.ts_ms,
                        origin=Origin.EXTRACTOR,
                        prompt_version=PROMPT_VERSION,
                        negated=f.negated,
                        update_only=f.update_only,
                    )
                )
    # A clause kept as said never restates what the same turn says is gone: "pull the sealed_bids
    # flag and everything behind it" beside "sealed bids is dead" would serve the dead value.
    gone = [set(_words(c.belief)) for c in out if c.negated and c.belief]
    return [c for c in out if c.negated or c.key or not any(g and g <= set(_words(c.text)) for g in gone)]


_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")


def _for_removal(stated: list[str]) -> str:
    """The statements of a message as the removal model reads them: a line with no full stop (a list
    item, a line of a report) ends one, so that two lines are never read as one clause, and each item
    of a list under a line that ends with a colon is read after that line ("Removed: `a`. Removed: `b`.")."""
    out: list[str] = []
    header = ""
    for sentence in stated:
        text = sentence.strip()
        closed = re.search(r"[.!?;]\s*$", text) is not None
        if header and not closed:
            out.append(f"{header} {_BULLET.sub('', text)}.")
            continue
        header = text if text.endswith(":") else ""
        if not header:
            out.append(text if closed else text + ".")
    return " ".join(out)


# A value that may be a secret: a long random-looking token, credentials in a URL, or a long segment
# mixing letters and digits ("AKIAIOSFODNN7EXAMPLE", a webhook's token). A removal never stores one.
_URL_CREDENTIALS = re.compile(r"://[^/\s@]*:[^/\s@]*@")


def _secret_shaped(value: str) -> bool:
    return bool(_SECRET_LIKE.search(value) or _URL_CREDENTIALS.search(value)) or any(
        len(seg) >= 16 and re.search(r"\d", seg) and re.search(r"[A-Za-z]", seg)
        for seg in re.split(r"[/.+:=?&@]", value))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())
