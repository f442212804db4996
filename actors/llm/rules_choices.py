"""Choice extractors of the rules client: which tools the project uses, and which it dropped.

Tool choices keyed by category or stated purpose (``package manager``, ``cache``,
``linter``...), where a kind of data is stored (``session storage``), removals ("we dropped
Redis"), and "switched from X to Y". Plain-word tool names (poetry, black, express) only
count next to tooling context. Extractors take a ``Clause`` and return a ``Finding`` or
None (``rules_extract`` tries them in order).
"""

from __future__ import annotations

import dataclasses
import re

from actors.llm.rules_clause import (
    EVALUATIVE,
    EXCLUDED_BEFORE,
    MEASURE,
    NOT_SUBJECTS,
    WHEN_SAID,
    Clause,
    Finding,
    cap,
    lower_first,
    np_words,
    pick,
    plural,
    without_project_name,
)
from actors.llm.rules_procedures import BACKTICKED, CONVENTIONS, STARTS_EXE, purposes_in
from actors.llm.rules_text import (
    CATEGORIES,
    DECISION,
    STOPWORDS,
    TECH_PATTERN,
    tech_category,
    tech_display,
    tech_name,
)
from engine.keys import normalize_belief, normalize_key, same_word
from engine.models import Kind

_I = re.I


_NEGATION = re.compile(
    r"\b(?:dropped|drop|removed|remove|got rid of|get rid of|ditched|ditch|retired|no longer use[sd]?|"
    r"no longer need|no longer using|stopped using|stop using|don't use|do not use|doesn't use|"
    r"does not use|aren't using|are not using|not using|never use|(?:nobody|no one)\b[^.;,]{0,30}?\bus(?:es|ing)|avoid|killed|deprecated|"
    r"(?:we|to|will|'ll|should|must|can)\s+sunset|sunsetted|sunsetting|"
    r"moved (?:away )?(?:off|away from)|uninstalled|no more|ripped out|tore out|phased out|ditched)\s+(?:the\s+|our\s+|any\s+)?",
    _I,
)
# The verbs of taking something out, for readers outside this module.
REMOVAL = _NEGATION
# A removal told after the thing: "pycodestyle is gone", "X was removed from CI last week".
_NEGATION_AFTER = re.compile(
    r"\s+(?:is|are|was|were|has been|have been|got|just got)\s+(?:now\s+)?(?:completely\s+|fully\s+)?"
    r"(?:gone|removed|dropped|deprecated|decommissioned|retired|ripped out|uninstalled|deleted|dead|phased out|"
    r"history|scrapped|axed|binned|ditched|dumped|abandoned|killed|sunset)\b"
    # "the old proxy isn't part of the build any more", "X isn't used any more": a denial that holds from now on
    r"|\s+(?:is|are)(?:n't|\s+not)\s+(?:used|needed|part\s+of\b[^.;,]{0,40}?)\s+any\s?more\b"
    r"|\s+(?:is|are)\s+no\s+longer\s+(?:used|needed|part\s+of)\b",
    _I,
)
_NEGATED_THING = re.compile(
    r"(?P<t>[\w.+#/-]+(?:\s+[\w.+#/-]+){0,2}?)(?=\s+(?:anymore|any more|now|from|for|in favou?r|"
    r"because|since|as|and|entirely|completely|altogether|dependency|dependencies|service|package|"
    r"library|support|container|containers|integration)\b|\s*[,.;!]|\s*$)",
    _I,
)
_THING_SUFFIX = re.compile(r"\s+(?:dependency|dependencies|service|package|library|lib|support|container|containers|integration)$", _I)


_STORE_CATEGORIES = frozenset({"database", "cache", "object storage", "search engine"})
_THING = r"(?P<t>[a-z][a-z-]{2,})"
_STORED_BEFORE = re.compile(  # the words just before the store's name
    rf"(?:\b(?:store|stores|stored|storing|keep|keeps|kept|put|puts|persist|persists|save|saves|saved)\s+"
    rf"(?:the\s+|our\s+|all\s+)?{_THING}|\b{_THING.replace('<t>', '<t2>')}\s+"
    rf"(?:(?:are|is|get|gets|were|was|will be|do|does)\s+)?(?P<neg>no longer\s+|not\s+|never\s+)?(?:now\s+)?"
    rf"(?:stored|kept|persisted|saved|go|goes|live|lives|stay|stays|move|moves|moved|belong|belongs|sit|sits)"
    rf"(?:\s+(?:now|back))?(?:\s+from\s+[\w.-]+)?)\s+(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORED_AFTER = re.compile(rf"^\s+for\s+(?:the\s+|our\s+|all\s+)?{_THING}\b", _I)
_NOT_THINGS = STOPWORDS | CATEGORIES | frozenset(
    "data everything anything stuff things thing caching cache storage persistence now it them "
    "files file tests test development dev production prod local everyone us".split()
)


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if plural(word) else word


_STORE_KINDS = _STORE_CATEGORIES | {"message queue"}
_STORE_VERB_BEFORE = re.compile(
    r"\b(?:store|stores|stored|storing|keep|keeps|put|puts|persist|persists|save|saves|move|moved|migrate|migrated|"
    r"shift|shifted|write|writes)\s+(?P<t>.+?)\s+(?:(?:over\s+)?from\s+\S+(?:\s+\S+)?\s+)?(?:(?:over|back)\s+)?"
    r"(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORE_PASSIVE_BEFORE = re.compile(
    r"\s(?:(?:are|is|get|gets|were|was|will be|do|does)\s+)?(?P<neg>no longer\s+|not\s+|never\s+)?(?:now\s+)?"
    r"(?:stored|kept|persisted|saved|written|go|goes|live|lives|stay|stays|move|moves|moved|belong|belongs|sit|sits)"
    r"(?:\s+(?:now|back))?(?:\s+(?:over\s+)?from\s+\S+)?\s+(?:in|into|to|on|inside)\s+(?:the\s+)?$",
    _I,
)
_STORE_AFTER = re.compile(
    r"^\s+(?:now\s+)?(?:holds|keeps|stores|handles|backs|persists)\s+(?P<t>.+)$"
    r"|^\s+(?:(?:now\s+)?replaced\s+\S+(?:\s+\S+)?\s+)?for\s+(?P<t2>.+)$",
    _I,
)
_REMOVED_FROM = re.compile(r"\b(?:from|out of|for)\s+(?P<t>.+)$", _I)


def _thing_phrase(raw: str) -> str:
    head = re.match(r"(?:the|our|all|all the|any)\s+", raw, _I)
    return np_words(raw, head.end() if head else 0, limit=4)


def _valid_thing(phrase: str) -> bool:
    words = phrase.lower().split()
    if not words or TECH_PATTERN.fullmatch(phrase) or any(TECH_PATTERN.fullmatch(w) for w in words):
        return False
    head = _singular(words[-1])
    if head in {"file", "files"} and len(words) > 1:
        return True  # "uploaded files" is a thing stored; a bare "files" is too vague
    return words[-1] not in _NOT_THINGS and head not in _NOT_THINGS


def _stored_thing(text: str, tech: re.Match[str], removal: bool = False) -> tuple[str, bool] | None:
    """('user sessions', negated) in "we store user sessions in Redis", "sessions go in Postgres",
    "Redis holds sessions", "Redis replaced Mongo for sessions", "drop Redis from sessions"."""
    if tech_category(tech_name(tech.group(1))) not in _STORE_KINDS:
        return None
    before, after = text[: tech.start()], text[tech.end() :]
    candidates: list[tuple[str, bool]] = []
    passive = _STORE_PASSIVE_BEFORE.search(before)
    if passive:
        candidates.append((np_words(before, passive.start() + 1, backwards=True, limit=4), bool(passive.group("neg"))))
    active = _STORE_VERB_BEFORE.search(before)
    if active:
        candidates.append((_thing_phrase(active.group("t")), False))
    later = _STORE_AFTER.match(after)
    if later:
        candidates.append((_thing_phrase(later.group("t") or later.group("t2")), False))
    if removal:
        gone = _REMOVED_FROM.search(after)
        if gone:
            candidates.append((_thing_phrase(gone.group("t")), False))
    category = tech_category(tech_name(tech.group(1))).split()
    for phrase, negated in candidates:
        if phrase and _valid_thing(phrase):
            if _singular(phrase.lower().split()[-1]) in category:
                return None  # "the queue moved to NATS" names the store's own kind: a choice, not a stored thing
            return lower_first(phrase), negated
    return None


def _storage_finding(thing: str, name: str, negated: bool) -> Finding:
    head = thing.lower().split()[-1]
    verb = "are" if plural(head) else "is"
    where = tech_display(name)
    text = f"{cap(thing)} {verb} no longer stored in {where}." if negated else f"{cap(thing)} {verb} stored in {where}."
    # One key per stored thing, by its head noun: "user sessions" and "sessions" share `session storage`
    return Finding(f"{_singular(head)} storage", name, Kind.DECISION, text, negated=negated)


# Tool names that are also ordinary English words ("a poetry reading", "express myself",
# "a black dress"): in prose they only count as a tool with a tooling context around them.
_PLAIN_WORD_TECHS = frozenset(
    "poetry express black bun parcel mocha jest hatch clerk sentry drizzle rollup biome astro react "
    "angular flask rails cypress playwright jenkins travis cassandra azure uv pip mamba maven "
    "spring boot cloud run".split()
) | {"spring boot", "cloud run"}
# Words that make a clause about software tooling: a plain-word tool name next to them is a tool.
_TOOLING_CONTEXT = re.compile(
    r"`|--\w|\w/\w|\b[\w-]+\.(?:py|js|ts|toml|json|lock|ya?ml|cfg|ini|txt)\b|\b\d+\.\d+\b|"
    r"\b(?:package manager|packages?|lockfiles?|lock file|dependenc\w*|deps|lint\w*|format\w*|"
    r"type[- ]?check\w*|tests?|testing|test runner|framework|librar\w*|lib|plugins?|modules?|repo\w*|codebase|"
    r"code|build\w*|ci|pipelines?|deploy\w*|config\w*|install\w*|virtualenv|venv|env|backend|frontend|"
    r"api|server|services?|cli|scripts?|commands?|bundl\w*|compil\w*|project|app|stack|migrat\w*|"
    r"version|upgrade\w*|bump\w*|pinned|pin|cache|database|db|queue|stor(?:e|es|ed|ing)|persist\w*|events?)\b",
    _I,
)
# Verbs of keeping a choice, their object after them: "staying on npm", "sticking with jest", "stuck to make".
_KEEPING = r"stay(?:s|ing|ed)?\s+(?:on|with)|stick(?:s|ing)?\s+(?:with|to)|stuck\s+(?:with|to)"
# A plain-word tool name directly after one of these is the object of a tooling choice.
_TOOL_GOVERNOR = re.compile(
    r"\b(?:use|uses|used|using|switch(?:ed|ing)?\s+(?:\w+\s+)?to|mov(?:e|ed|ing)\s+(?:\w+\s+)?to|"
    r"migrat\w*\s+(?:\w+\s+)?to|" + _KEEPING + r"|back\s+to|"
    r"adopt\w*|install\w*|run|runs|"
    r"(?:managed|installed|built|linted|formatted|run|tested)\s+with|instead of|rather than|"
    r"in favou?r of|replac\w*(?:\s+\w+)?\s+with|went with|go with|chose|picked|settled on)"
    r"\s+(?:the\s+|our\s+)?`?$",
    _I,
)
_PROSE_AFTER = re.compile(r"^\s+(?:to\s+\w+|myself|yourself|himself|herself|ourselves|themselves)\b", _I)


def _tool_in_context(text: str, tech: re.Match[str]) -> bool:
    """Is this tool name about tooling? Always for distinctive names (Redis, pytest); a name
    that is also an ordinary word (poetry, express, black) needs a tooling context: tooling
    words or code in the clause, another tool named, or a choice verb governing it."""
    if tech_name(tech.group(1)) not in _PLAIN_WORD_TECHS or _stored_thing(text, tech, removal=True):
        return True  # a distinctive name, or a store holding something ("sessions go into Cassandra")
    rest = text[: tech.start()] + " " + text[tech.end() :]
    if _TOOLING_CONTEXT.search(rest):
        return True
    if any(tech_name(m.group(1)) not in _PLAIN_WORD_TECHS for m in TECH_PATTERN.finditer(rest)):
        return True
    return bool(_TOOL_GOVERNOR.search(text[: tech.start()])) and not _PROSE_AFTER.match(text[tech.end() :])


def _in_path(text: str, tech: re.Match[str]) -> bool:
    """Is the name a segment of a path or route (`/clerk/auctions/:id`, `src/redis/pool.ts`)?
    A path names a folder or a URL, not a tool the project chose; "Redis/Memcached" is still two names."""
    start = max(text.rfind(c, 0, tech.start()) for c in " \t\n`'\"(") + 1
    ends = [i for i in (text.find(c, tech.end()) for c in " \t\n`'\")") if i >= 0]
    run = text[start : min(ends, default=len(text))]
    if text.startswith("://", tech.end()):
        return False  # `s3://bucket`, `redis://host`: the scheme names the tool
    return run.startswith(("/", "./", "~/", "../")) or run.count("/") >= 2


# The rest of an address after a tool's name used as its scheme: "s3" then "://acme-raw/exports".
_SCHEME_REST = re.compile(r"://[^\s`'\",)]+")


def _techs(text: str) -> list[re.Match[str]]:
    """Technology names, except inside an inline command (`npm install`, `docker compose up`)
    or a path, and plain-word names outside a tooling context ("a transgender poetry reading")."""
    spans = [m.span() for m in BACKTICKED.finditer(text) if " " in m.group(1).strip()]
    return [m for m in TECH_PATTERN.finditer(text)
            if not any(a < m.start() < b for a, b in spans) and not _in_path(text, m)
            and _tool_in_context(text, m)]


def _postfix_removal(c: Clause) -> Finding | None:
    """ "pycodestyle is gone, we ripped it out", "Woodpecker was removed from CI": a bare tool name
    (no article: "the old folder is deleted" is no dependency) before a removal verb."""
    after = _NEGATION_AFTER.search(c.text)
    if not after or c.speaker == "assistant":
        return None
    before = c.text[: after.start()]
    phrase = np_words(c.text, after.start(), backwards=True, limit=3)
    if not phrase or re.search(r"\b(?:the|our|my|this|that|your)\s+(?:\w+\s+)?$", before[: len(before) - len(phrase)], _I):
        return None
    if phrase.lower() in _NOT_REMOVED or phrase.split()[0].lower() in _NOT_REMOVED | NOT_SUBJECTS:
        return None
    name = normalize_belief(phrase)
    return Finding("", name, Kind.DECISION, f"The project no longer uses {phrase}.", negated=True)


def extract_removal(c: Clause) -> Finding | None:
    neg = _NEGATION.search(c.text)
    techs = _techs(c.text)
    post = [m for m in techs if _NEGATION_AFTER.match(c.text, m.end())]
    if not post and (not neg or not techs):
        late = _postfix_removal(c)  # "stylelint was dropped last week": the thing comes first
        if late or not neg:
            return late
    if neg and _MODAL_BEFORE.search(c.text[: neg.start()]):
        return None  # "the old table can be dropped later", "we could remove Redis": not removed yet
    negated = post[:1] or [m for m in techs if neg and m.start() >= neg.end() and m.start() - neg.end() <= 12]
    positive = [m for m in techs if m not in negated and not EXCLUDED_BEFORE.search(c.text[: m.start()])]
    if positive:
        return None  # "we dropped npm in favour of pnpm": the choice extractor states it
    if not negated and not neg:
        return None
    if not negated and any(subject.search(c.text) for _, subject, _ in CONVENTIONS):
        return None  # "never use tabs" is a convention, not a dropped dependency
    if negated:
        name = tech_name(negated[0].group(1))
        stored = _stored_thing(c.text, negated[0], removal=True)
        if stored:
            return _storage_finding(stored[0], name, negated=True)
        display, key = tech_display(name), tech_category(name)
    else:
        # no negated tech here means ``neg`` matched: "not negated and not neg" returned above
        assert neg is not None
        if c.speaker == "assistant":
            return None  # "Removed the TODO from the route": an edit, not a dropped dependency
        thing = _NEGATED_THING.match(c.text, neg.end())
        if not thing:
            return None
        display = _TIME_AFTER.sub("", _THING_SUFFIX.sub("", thing.group("t")).strip(" .,`"))  # "Jenkins yesterday"
        first = display.lower().split()[0] if display else ""
        if not display or first in _NOT_REMOVED or display.lower() in _NOT_REMOVED:
            return None
        if re.search(r"\s(?:down\s+)?to\s+\S", display):
            return None  # "drop the pool to four": a setting lowered to a new value, nothing removed
        if not _plausible_removed(display, c.text, neg):
            return None
        where = re.match(r"\s+(?:from|in|out of)\s+(?:the\s+)?(\S+)", c.text[thing.end() :])
        if where and (re.search(r"[./]", where.group(1)) or display[:1].islower() and " " in display):
            return None  # "drop the note from CONTRIBUTING.md": an edit of a file
        name, key = normalize_belief(display), ""
        if STARTS_EXE.match(display):
            # "drop `make test-all`": the command is retired, under the command's key
            found = purposes_in(display)
            if found:
                return Finding(f"{found[0]} command", name, Kind.DECISION, f"`{display}` is no longer used.", negated=True)
        if neg.group(0).lower().rstrip().endswith(("the", "our")):
            display = "the " + display
    return Finding(key, normalize_belief(name), Kind.DECISION, f"The project no longer uses {display}.", negated=True)


# Removal verbs that are everyday words too ("avoid injuries", "no more excuses"): the thing
# removed must look like software (code-ish, a name) or the clause must be about tooling.
_WEAK_REMOVAL = re.compile(r"^(?:avoid|killed|no more)\b", _I)
_CODEISH_THING = re.compile(r"[`./_\d]|\w-\w|[a-z][A-Z]|^[A-Z][\w-]*[A-Z]|^[A-Z]{2,}")
_PLAIN_MODIFIERS = re.compile(r"(?:ly|ful|ous|ive|ish|less|able|ible)$", _I)
_PRONOUNS = frozenset("her him me you them it us myself yourself himself herself themselves one".split())
# What a verb of removing takes that is no thing the project used: a part of a text being edited ("remove
# the closing paragraph", "drop that sentence"), a time ("can be dropped later"), a hedge or a count that
# makes the verb an event ("the tunnel dropped like 5 times").
_TEXT_PARTS = frozenset("sentence sentences paragraph paragraphs word words line lines bullet bullets heading headings "
                        "section sections typo typos comma commas emoji emojis comment comments".split())
_TIME_WORDS = frozenset("later soon eventually tomorrow today tonight yesterday meanwhile afterwards".split())
_TIME_AFTER = re.compile(rf"(?:\s+(?:{'|'.join(sorted(_TIME_WORDS))}))+$", _I)  # a time word closing the thing
_HEDGES = frozenset("like around roughly nearly almost approximately".split())
_COUNTED_TIMES = re.compile(r"\b(?:\d+|two|three|four|five|several|many|a few|a couple of)\s+times\b|\b(?:twice|once)\b", _I)
# A modal before the verb makes the removal a possibility or a proposal: "X can be dropped", "we could remove X".
_MODAL_BEFORE = re.compile(r"\b(?:can|could|might|may|should|shall|would)(?:n't| not)?\s+(?:be\s+|get\s+|just\s+|also\s+)?$", _I)


def _plausible_removed(display: str, text: str, neg: re.Match[str]) -> bool:
    """A dropped thing is a noun phrase naming something (a module, a service, a dependency),
    not an adverb, adjective, pronoun or date: "captured the sunset perfectly", "got rid of
    her", "dropped on the 11th", "avoid injuries" are no removals."""
    words = display.split()
    low = [w.lower().strip(".,!?'\"") for w in words]
    if low[0] in STOPWORDS or low[-1] in STOPWORDS or low[-1] in _PRONOUNS:
        return False
    if low[0] in _HEDGES or low[0] in _TIME_WORDS or low[-1] in _TEXT_PARTS or _COUNTED_TIMES.search(display):
        return False
    if low[-1] in _NOT_REMOVED or low[-1] in EVALUATIVE or any(w in EVALUATIVE for w in low):
        return False
    if _PLAIN_MODIFIERS.search(low[-1]) and not _CODEISH_THING.search(words[-1]):
        return False  # "perfectly", "peaceful", "negative": a modifier, not a thing
    if re.fullmatch(r"\d+(?:st|nd|rd|th)?", low[-1]):
        return False
    if _WEAK_REMOVAL.match(neg.group(0)):
        rest = text[: neg.start()] + " " + text[neg.end() :]
        return bool(_CODEISH_THING.search(display) or _TOOLING_CONTEXT.search(rest))
    return True


_NOT_REMOVED = frozenset(
    "it that this them those tests test anything everything something nothing any all features feature "
    "code stuff things thing way one ones".split()
)


_CHOICE_VERB = re.compile(
    r"\b(?:use[sd]?|using|switch\w*|mov(?:e|ed|ing)|migrat\w*|go(?:ing)? with|went with|adopt\w*|"
    r"pick\w*|chose|choose|chosen|standardi[sz]\w* on|rel(?:y|ies) on|runs? on|(?:is|are) on|"
    r"we're on|(?:deploy(?:s|ed|ing|ment)?|host(?:s|ed|ing)?)\s+(?:\S+\s+){0,3}?(?:to|on|onto|at|with|via|through|by)|"
    r"stor(?:e|es|ed|ing)|replac\w*|instead of|rather than|over|"
    r"prefer\w*|in favou?r of|settled on|decided on|install\w*|via|through|now|back to|"
    r"stays|" + _KEEPING + r")\b"
    r"|^[\w.-]+(?:\s[\w.-]+)?\s+for\s|^[\w.-]+(?:\s[\w.-]+)?\s+it\s+is$"
    # "for the backend it's poetry": a part, then what it is on
    r"|^for\s+(?:the|our)\s+[\w\s.-]{1,30}?,?\s+it(?:'s|’s|\s+is)\s"
    # "deploy target: X", "hosting: X" (a label); "X hosts the api" (the verb with the tool as its subject)
    r"|\b(?:deploy\w*|host\w*)(?:\s+target)?\s*:|\b(?:hosts|deploys)\s+(?!(?:is|are|was|were|in|on|of|and|with|for)\b)\w",
    _I,
)
_PURPOSE_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, _I), k)
    for p, k in (
        (r"\bpackage manager\b|\b(?:install|manage)\w*\s+(?:packages|deps|dependencies)\b", "package manager"),
        (r"\bcach(?:e|es|ing)\b", "cache"),
        (r"\b(?:database|db|storage|stor(?:e|es|ed|ing)|persist\w*|datastore)\b", "database"),
        (r"\blint(?:er|ers|ing)?\b", "linter"),
        (r"\bformat(?:ter|ting)?\b", "formatter"),
        (r"\btype[- ]?check\w*", "type checker"),
        (r"\b(?:tests?|testing|test runner|test framework)\b", "test framework"),
        (r"\b(?:ci|continuous integration)\b", "ci provider"),
        (r"\b(?:deploy\w*|host(?:ing|ed)?)\b", "deploy target"),
        (r"\b(?:queues?|messaging|message broker|pub/?sub)\b", "message queue"),
        (r"\bbundl\w*", "bundler"),
    )
)
_GROUPS = (
    {"database", "cache", "object storage", "search engine", "message queue"},
    {"linter", "formatter", "type checker"},
    {"ci provider", "deploy target"},
    {"package manager"},
    {"test framework"},
    {"bundler"},
)


def _purpose(text: str, category: str) -> str:
    """The belief key named by the clause ('for caching'), if it fits the chosen tool's kind."""
    if category == "object storage":
        return category
    for pattern, purpose in _PURPOSE_RULES:
        if pattern.search(text):
            if any(purpose in g and category in g for g in _GROUPS):
                return purpose
    return category


# A tool's name that opens a noun phrase ending in an address or code ("the Wasabi bucket `b2://scans`",
# "the GCS bucket gs://raw"): the phrase names a place, and the place is the value said. A preposition or a
# verb between them makes it no such phrase ("we use Postgres for `orders`", "Redis with `maxmemory` set").
_NAMES_A_PLACE = re.compile(r"(?:\s+(?!(?:for|with|to|in|into|on|onto|at|of|from|by|as|and|or|set|is|are|was)\b)[\w-]+){1,3}"
                            r"\s+(?:`[^`\s]+`|[a-z][a-z0-9+.-]*://\S+)", re.I)


def _stretch(text: str, at: int) -> str:
    """The stretch of ``text`` around ``at`` between two commas (code spans may hold commas); the two commas
    around a short aside cut nothing ("we migrated, as planned, to X"; "we switched, finally, to X")."""
    commas = [m.start() for m in re.finditer(r",\s", text) if not text[: m.start()].count("`") % 2]
    aside = {i for a, b in zip(commas, commas[1:], strict=False) if len(text[a + 1 : b].split()) <= 4 for i in (a, b)}
    cuts = [i for i in commas if i not in aside]
    start = max((i + 1 for i in cuts if i < at), default=0)
    end = min((i for i in cuts if i >= at), default=len(text))
    return text[start:end]


_STILL = re.compile(r"\b(?:still|stays?|remains?|keeps?|kept)\b", _I)


def removed_store(sentence: str, name: str) -> Finding | None:
    """The removal of a store of a kind of data that ``sentence`` (one the removal model reads the store gone in)
    names after the store ("we retired X for the invoice archive", "dropped X from the upload path"): that thing's storage key
    with the store denied, so that this reading retires only the memory of where that thing is kept. (Another reading
    may still retire the name as such: "we dropped X" is read as the project no longer using X.)"""
    at = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", sentence)
    if at is None or _STILL.search(sentence):
        return None  # "X still serves the audit logs": what it still does is no removal
    rest = sentence[at.end():].split(";")[0].split(",")[0]
    # the last thing named ("out of the running for the nightly exports": the exports, not the running)
    phrases = [_thing_phrase(rest[m.end():]) for m in re.finditer(r"\b(?:from|out of|for)\s+", rest, _I)]
    phrase = next((p for p in reversed(phrases) if p and _valid_thing(p)), "")
    if not phrase:
        return None
    found = _storage_finding(lower_first(phrase), name, negated=True)
    return dataclasses.replace(found, belief=normalize_belief(name))


def extract_choice(c: Clause) -> Finding | None:
    techs = _techs(c.text)
    if not techs:
        return None
    rest = TECH_PATTERN.sub(" ", c.text)
    for tech in techs:
        stored = _stored_thing(c.text, tech)
        if stored and not EXCLUDED_BEFORE.search(c.text[: tech.start()]):
            url = _SCHEME_REST.match(c.text, tech.end())
            # "raw exports go to s3://acme-raw": the address is where they are stored, its scheme only names the tool
            name = tech.group(0) + url.group(0).rstrip(".") if url else tech_name(tech.group(1))
            return _storage_finding(stored[0], name, negated=stored[1])
    # A tool named only as an address's scheme ("the bucket for exports is s3://acme-raw") is no choice: the
    # address is the value, which another reading keeps whole.
    techs = [m for m in techs if not _SCHEME_REST.match(c.text, m.end())]
    if not techs:
        return None
    named = any(p.search(rest) for p, _ in _PURPOSE_RULES) and re.search(r"\b(?:is|are)\b", c.low)
    swap = _SWAP_FOR.search(c.text) or _KEPT.search(c.text)
    if not (_CHOICE_VERB.search(c.low) or named or swap):
        return None
    if swap and any(m.start() >= swap.end() for m in techs):
        # "swap eslint for biome", "we're ditching jest for vitest": what comes after "for" is the choice;
        # "after trying pnpm we're staying on npm": what is kept comes after the verb of keeping
        techs = [m for m in techs if m.start() >= swap.end()]
    neg = None if swap else _NEGATION.search(c.text)
    live = [m for m in techs if not (neg and 0 <= m.start() - neg.end() <= 12)]
    chosen = pick(c.text, live)
    if chosen is None:
        return None
    if not (named or swap) and not _CHOICE_VERB.search(_stretch(c.text, chosen.start()).lower()):
        return None  # "we switched branches, Redis still times out": the verb is not about Redis
    if _NAMES_A_PLACE.match(c.text, chosen.end()):
        return None  # "onto the Wasabi bucket `b2://scans`": the tool only says whose the place is
    name = tech_name(chosen.group(1))
    key = _purpose(rest, tech_category(name))
    kind = Kind.DECISION if (c.changed or DECISION.search(c.low)) else Kind.FACT
    label = _CATEGORY_LABEL.get(key, key)
    said, part = _part_of_project(c.text, chosen, key, c.project)
    if part:  # "the frontend uses pnpm", "for the backend we use poetry": one setting per part
        many = re.search(r"(?<![siuoa])s$", said) is not None  # "the e2e tests use X as their test framework"
        return Finding(f"{part.lower()} {key}", name, kind, f"The {said} {'use' if many else 'uses'} "
                                                            f"{tech_display(name)} as {'their' if many else 'its'} {label}.")
    return Finding(key, name, kind, f"The project uses {tech_display(name)} as its {label}.")


# A part of the project a choice is made for (a monorepo's frontend and backend, the Python and the
# TypeScript code): "for the frontend" or "in the backend" closing the clause or before its subject
# ("for the frontend we use X"), the clause's subject ("the web app uses X"), or what is moved ("we
# switched the frontend to X"). A noun phrase after "the" or "our", of one to three words.
_PART_NP = r"(?:the|our)\s+(?P<np>[A-Za-z][\w.+#-]*(?:\s+[A-Za-z][\w.+#-]*){0,2}?)"
_PART_AFTER = re.compile(rf"\b(?:for|in)\s+{_PART_NP}\s*(?=$|[,.;]|\s+(?:we|i|you|they|and|it(?:'s|’s|\s+is))\b)", _I)
# The clause's subject before a verb of using, running or hosting ("the billing console is hosted on X"); without
# an article only a phrase that ends in a noun of a component ("unit tests use X", ``_COMPONENT``).
_PART_SUBJECT = re.compile(
    r"^(?P<article>(?:the|our)\s+)?(?P<np>[A-Za-z][\w.+#-]*(?:\s+[A-Za-z][\w.+#-]*){0,2}?)\s+"
    r"(?:uses|use|(?:is|are)\s+using|(?:is|are)\s+(?:built|managed)\s+with|runs?\s+on|rel(?:y|ies)\s+on|(?:is|are)\s+on|"
    r"(?:is|are)\s+(?:now\s+)?(?:deployed|hosted|served|run)\s+(?:to|on|from|at|by|with)|(?:deploys|builds)\s+go\s+to|"
    r"lives?\s+on|has\s+switched|switched|moved|migrated|(?:is|are)\s+now\s+on|now\s+uses?)\b", _I)
_PART_MOVED = re.compile(rf"\b(?:switch|mov|migrat|port)\w*\s+{_PART_NP}\s+(?:(?:over|back)\s+)?(?:from\s+\S+\s+)?(?:to|onto)\b", _I)
_PART_HOSTED = re.compile(rf"\b(?:host|serv)\w*\s+{_PART_NP}\s+(?:on|at|from)\b", _I)  # "we host the docs on X"
# Nouns of a component of a project, which name a part without an article ("mobile app", "unit tests", "admin site");
# "deploy the fix to X" deploys a change, so only hosting and serving name a part that way.
_COMPONENT = frozenset("frontend backend api apis app apps site website service services worker workers dashboard docs "
                       "cli client clients server servers portal panel bot tests suite functions lambdas microservices "
                       "monolith storefront".split())
# Words that name the whole project, not a part of it ("in the project", "for the whole team"), and nouns
# of time or discourse after "in the" / "for the" ("in the meantime", "for the moment"): no part either.
_WHOLE = frozenset("project projects repo repository monorepo codebase team company stack code app thing things "
                   "everything whole entire all".split())
_NOT_PARTS = frozenset("meantime moment end future past time times place record sake way start beginning rest "
                       "long short term run now today week month year "
                       # people, not parts of the project: "everyone uses pnpm"
                       "everyone everybody nobody someone somebody anyone anybody people folks".split())


# What a category of tool works on, named after a part without being a part: "the backend deps" are the backend's.
_CATEGORY_OBJECTS = {"package manager": frozenset("deps dependencies dependency packages installs".split()),
                     "linter": frozenset("lint linting".split())}


def _part_of_project(text: str, chosen: re.Match[str], key: str, project: str = "") -> tuple[str, str]:
    """The part of the project a choice is for, as said and without the category's own words ("e2e tests"
    and "e2e" for a test framework; "frontend" and "frontend"), or ("", ""). The project's own name
    (``project``, as said with spaces, hyphens or underscores) is the whole project."""
    for m in (*_PART_AFTER.finditer(text), *_PART_SUBJECT.finditer(text), *_PART_MOVED.finditer(text),
              *_PART_HOSTED.finditer(text)):
        words = m.group("np").lower().split()
        if m.start("np") <= chosen.start() < m.end("np") or TECH_PATTERN.search(m.group("np")):
            continue  # the tool itself ("for the Vite build"), not a part
        if words[0] in _WHOLE or any(w in STOPWORDS | _NOT_PARTS for w in words):
            continue  # the whole project, a time ("in the meantime")
        own = [w for w in without_project_name(m.group("np").split(), project)
               if not any(same_word(w.lower(), k) for k in key.split()) and w.lower() not in _CATEGORY_OBJECTS.get(key, ())]
        if not own:
            continue  # the project's name, or the category's own words ("for the packages", "tests run on X"): no part
        said = m.group("np")
        if words[-1] in _CATEGORY_OBJECTS.get(key, ()) and len(words) > 1:
            said = said.rsplit(" ", 1)[0]  # "the backend deps use X": the backend's package manager
        if m.re is _PART_SUBJECT and not m.group("article") and (
                words[-1] not in _COMPONENT or (len(words) == 1 and words[0] in {"tests", "services", "apps"})):
            continue  # "Developers use pnpm", "Main still uses yarn", "Tests run on CircleCI": no part named
        if m.start("np") == 0 and said[1:2].islower():
            said = said[0].lower() + said[1:]  # capitalised only as the sentence's first word
        return said, " ".join(own)
    return "", ""


# A choice kept, its object after the verb: "we're staying on npm", "sticking with jest".
_KEPT = re.compile(rf"\b(?:{_KEEPING})\s", _I)
# A thing given up for another: "swap X for Y", "ditching X for Y", "traded X for Y", "ripping out X for Y" (Y is chosen).
_SWAP_FOR = re.compile(r"\b(?:swap|swapp|ditch|trad|exchang|rip|ripp|dump|drop|dropp)\w*\s+(?:out\s+)?(?:the\s+|our\s+)?"
                       r"[\w.@/+-]+(?:\s(?!out\b)[\w.@/+-]+)?(?:\s+out)?\s+for\s+", _I)
_CATEGORY_LABEL = {"ci provider": "CI provider", "http client": "HTTP client", "orm": "ORM",
                   "api style": "API style", "css framework": "CSS framework"}


_ASIDE = re.compile(r"\s*\([^()]*\)")
# A value of a switch: one or two words or a code span; never a preposition, an auxiliary or a pronoun
# ("Jest was replaced by Vitest" is no value "jest was"; "it replaced Jest" names no new thing).
_NOT_VALUE = (r"(?:out|for|with|to|by|from|in|was|were|got|has|have|had|been|is|are|we|i|it|this|that|they|you|he|she|"
              r"now|today|anymore|again|too)")
_V = (r"(?!" + _NOT_VALUE + r"\b)`?(?P<{}>[\w.@/+-]+(?:\s(?!" + _NOT_VALUE + r"\b)[\w.@/+-]+)?)`?")
# What a replacement led to, after a comma ("..., so please update the docs"): the replacement still closes
# on its value.
_THEN = r"(?:,\s.*)?"
# "ditch X for good", "swap it for now": for how long, not for what
_FOR_A_TIME = r"(?!(?:good|now|later|real|a\s+while|the\s+time\s+being)\b)"
_SWITCH = re.compile(
    r"\b(?:switch|mov|migrat|chang|go|went)\w*\s+(?:(?:the|our)\s+(?P<what>[\w\s-]{1,30}?)\s+)?from\s+"
    + _V.format("old") + r"\s+to\s+" + _V.format("new") + WHEN_SAID + "$"
    # "we use X instead of Y", "the worker sits on X instead of Y", "we ship to X rather than Y": the thing
    # before the contrast is the choice, after a verb and its preposition
    + r"|\b(?:use|uses|using|(?P<verb2>(?:\w+(?:s|ed)|run|live|sit|deploy|host|ship|build|point)\s+"
    r"(?:on|to|in|at|with|through|via|onto|into)))\s+(?:the\s+|our\s+)?"
    + _V.format("new2") + r"\s+(?:instead of|rather than|in place of)\s+(?:the\s+|our\s+)?" + _V.format("old2")
    + WHEN_SAID + "$"
    + r"|\breplac\w*\s+(?:the\s+|our\s+)?" + _V.format("old3") + r"\s+with\s+" + _V.format("new3") + WHEN_SAID
    + _THEN + "$"
    # an arrow: "jest -> vitest", "linter: eslint → biome"
    + r"|^(?:(?P<what4>[\w\s-]{1,30}?)\s*:\s*)?`?(?P<old4>[\w.@/+-]+)`?\s*(?:->|→|=>)\s*`?(?P<new4>[\w.@/+-]+)`?$"
    # a thing given up for another: "we swapped X out for Y", "ditched X for Y", "swapped out X for Y"
    + r"|\b(?:swap|swapp|ditch|trad|exchang)\w*\s+(?:out\s+)?(?:the\s+|our\s+)?" + _V.format("old5")
    + r"\s+(?:out\s+)?for\s+" + _FOR_A_TIME + _V.format("new5") + WHEN_SAID + _THEN + "$"
    # the old thing in the passive, or the new one as the subject: "Jest got replaced by Vitest", "Vitest replaced Jest"
    + r"|^(?:the\s+|our\s+)?" + _V.format("old7") + r"\s+(?:was|were|got|has\s+been|have\s+been)\s+replaced\s+"
    r"(?:by|with)\s+" + _V.format("new7") + WHEN_SAID + _THEN + "$"
    + r"|^(?:the\s+|our\s+)?" + _V.format("new6") + r"\s+(?:has\s+|have\s+)?replaced\s+(?:the\s+|our\s+)?"
    + _V.format("old6") + WHEN_SAID + _THEN + "$",
    _I,
)
# A value that names a thing by itself: code, a value with a digit or an identifier character, or a name
# written with a capital ("Postmark", "applovin MAX"); "clarity" or "speed" name no tool.
_NAMED = re.compile(r"^`|[\d./:_@-]|(?:^|\s)[A-Z]")


def extract_replacement(c: Clause) -> Finding | None:
    """A replacement said with a verb of replacing ("we replaced Jest with Vitest last sprint", "swapped A out
    for B", "B replaced A"), read before any other reading: the value after "with" or "for" is the choice,
    never a command or a setting of its own. "From X to Y" is left to the readings of ports, versions and
    hosts, which key the setting by what changed."""
    return extract_switch(c, replacing_only=True)


def extract_switch(c: Clause, replacing_only: bool = False) -> Finding | None:
    match = _SWITCH.search(_ASIDE.sub("", c.text).rstrip(" .!"))  # "(way better fill there)": a reason, no value
    if match is None:
        return None
    replacing = any(match.group(n) for n in ("old3", "old5", "old6", "old7"))
    if replacing_only and not replacing:
        return None
    old = next(v for n in ("old", "old2", "old3", "old4", "old5", "old6", "old7") if (v := match.group(n)))
    new = next(v for n in ("new", "new2", "new3", "new4", "new5", "new6", "new7") if (v := match.group(n)))
    what = match.group("what") or match.group("what4")
    if not what and any(MEASURE.match(v) or re.fullmatch(r"~?\d[\d.,:]*\s?[A-Za-z%]{0,3}", v) for v in (old, new)):
        return None  # "went from 2m10s to 1m20s", "from 410 MB to 95 MB": a measurement, not a replaced tool
    category = tech_category(tech_name(new)) or tech_category(tech_name(old))
    if match.group("verb2") and (not category or any(v.split()[0].lower() in STOPWORDS for v in (old, new))):
        # "she lives in Berlin instead of Paris", "we write errors to a file instead of sentry": with any verb,
        # one side is a known tool and neither is a phrase of function words
        return None
    if replacing and not category:
        if any(re.search(r"\d|\.\w", v) for v in (old, new)):
            return None  # "replaced Postgres 14 with Postgres 16", "db1.internal with db2.internal": versions and hosts
        if not (_NAMED.search(old) and _NAMED.search(new)):
            return None  # "swap the order for clarity": no named things
        if match.group("new6") and not ("`" in match.group(0)):
            return None  # "Dana replaced the API tokens": a capital subject may be a person, not a tool
    if what:
        key, text = normalize_key(what), f"The {what.strip()} is {new}."
    else:
        # a known tool keeps its category's key, so that a later choice for the same purpose replaces it
        key, text = category or normalize_key(old), f"The project uses {new}."
        if category:  # what it is used as, for a question that names the purpose ("where is it deployed?")
            text = f"The project uses {new} as its {_CATEGORY_LABEL.get(category, category)}."
    # The replaced value is named only to be retired: a memory's text never states it ("jest" is no answer
    # to "which test runner?"), and what still states it goes stale.
    return Finding(key, normalize_belief(new), Kind.DECISION, text, retires=(old,))


# ---------------------------------------------------------------- a named thing chosen for a role

# A named thing the project uses in a role the clause names, whatever the thing is (no list of tools:
# ``extract_choice`` reads the tools it knows first): "we use the K9 board for the gateway", "we picked
# Halyard-2 as the planner", "for the tile cache we went with `tilekit`", "Halyard-2 is our planner".
# The role is the key ("gateway board", "planner"), so that "the planner is Halyard-2" (``extract_kv``),
# said later with another value, replaces it. English clause structure: a subject that is the team, a
# verb of using or choosing in the present or as a decision, the thing, then "for" or "as" and the role.
_USER = r"(?i:we|i|the\s+team|the\s+project)"
_USING = (r"(?i:(?:'re|'m|\s+are|\s+am)\s+(?:now\s+)?(?:using|going\s+with)|(?:'ll|\s+will)\s+(?:use|go\s+with)|"
          r"\s+(?:now\s+)?(?:use|uses|picked|chose|went\s+with|settled\s+on|decided\s+on|standardi[sz]ed\s+on|"
          r"rely\s+on|relies\s+on|(?P<have>have)))")
# The thing: code, or a name whose shape is no plain word (a capital after the first letter, a digit, an
# inner hyphen, dot or underscore), up to three such names ("Cloud Run"). After a verb of using or choosing
# a capitalised word names one too, and a lone lowercase word ("we use nuster for the cache"); after "have"
# only a shape or code does ("we have time for the demo", "we have Monday for the release": no thing).
# Atomic groups: a long run of letters and digits is matched once, never re-split.
_SHAPED_WORD = r"(?>[A-Za-z][\w+]*[A-Z\d][\w.+-]*|[A-Za-z][\w+]*[-_.][\w+][\w.+-]*)"
_NAMED_WORD = rf"(?>{_SHAPED_WORD}|[A-Z][a-z][\w+]*)"
_THING_SAID = rf"(?:`(?P<code>[^`\s]+)`|(?P<name>{_NAMED_WORD}(?:\s+{_NAMED_WORD}){{0,2}})|(?P<plain>[a-z][\w+-]{{2,}}))"
_ROLE_WORD = r"[A-Za-z][\w-]*"
# A role ends the clause, or a word of time, reason or discourse ends it ("as the planner last sprint").
_ROLE_END = (r"(?=\s*(?:$|[,.;:!(])|\s+(?i:because|since|so|and|but|now|too|also|instead|rather|which|that|over|here|"
             r"there|then|until|again|anyway|though|initially|originally|today|tomorrow|yesterday|last|next|this|"
             r"lol|btw|for|from|in|on|at|by|with|without)\b)")
_CHOSEN = rf"{_USER}{_USING}\s+(?i:the\s+|an?\s+)?{_THING_SAID}"
_ROLE_AFTER = (rf"\s+(?i:for|as)\s+(?i:the\s+|our\s+|an?\s+|its\s+|their\s+)?"
               rf"(?P<role2>{_ROLE_WORD}(?:\s+{_ROLE_WORD})??){_ROLE_END}")
_ROLE_CHOICE = (
    # "for the tile cache we went with `tilekit`" (the role after an article: "for starters we ..." names
    # none); a role said again after the thing is the role ("for the rollout we picked X as the gate")
    re.compile(rf"^(?i:for|as)\s+(?P<article>(?i:the|our)\s+)?(?P<role1>{_ROLE_WORD}(?:\s+{_ROLE_WORD})?),?\s+{_CHOSEN}"
               rf"(?:{_ROLE_AFTER})?"),
    # "we use the K9 board for the gateway", "we picked Halyard-2 as the planner"; "decided to go with X as the proxy"
    re.compile(rf"^(?:{_USER}{_USING}|(?i:decided\s+to\s+(?:go\s+with|use)))\s+(?i:the\s+|an?\s+)?{_THING_SAID}"
               rf"(?:\s+(?P<kind>[a-z][a-z-]{{2,}}))??{_ROLE_AFTER}"),
    # "tokenizer decision: we're going with X": a lead-in that names what the decision was about
    re.compile(rf"^(?P<article>(?i:the\s+|our\s+)?)(?P<role1>{_ROLE_WORD}(?:\s+{_ROLE_WORD})?)\s+(?i:decision|choice)\s*:\s+"
               rf"{_CHOSEN}(?=\s*(?:$|[,.;:!(]))"),
)
# "Halyard-2 is our planner": the named thing first, by its shape only (a capital opening the sentence names
# nothing), and "our" ("PR-42 is the culprit" says what went wrong, not what the project uses).
_ROLE_COPULA = re.compile(
    rf"^(?:`(?P<code>[^`\s]+)`|(?P<name>{_SHAPED_WORD}))\s+(?i:is)\s+(?i:now\s+|still\s+)?(?i:our)\s+"
    rf"(?P<role2>{_ROLE_WORD}(?:\s+{_ROLE_WORD})?)\s*[.!]?$")
# Words after "for" or "as" that make an idiom of time, manner, amount or reason, not a role ("for now", "as
# well", "for a while", "as usual", "as needed", "for free"): English, whatever the project.
_NOT_ROLES = frozenset("now today tonight while time moment meantime years months weeks days ages long good well usual "
                       "expected always ever free real sure example instance reference context comparison fun "
                       "reason reasons some most all both everything anything something nothing it this that them "
                       "these those one ones us me you him her needed necessary required planned discussed agreed "
                       "mentioned said promised starters whatever legacy perf performance default".split())


def _role(words: str, kind: str) -> str:
    """The key of a role as said ("the tile cache" -> "tile cache"; with the thing's kind noun, "we use
    the K9 board for the gateway" -> "gateway board"), or "" for an idiom ("for now"). The role's own words
    (and the kind's noun, made singular) are the key: a role that sounds like a tool's category ("for the tests") may be filled by no tool at
    all ("we use mocks for the tests"), so it never takes the key of the tools that fill it."""
    said = [w.lower() for w in words.split()]
    if not said or said[0] in _NOT_ROLES or any(w in STOPWORDS | _NOT_ROLES for w in said) or said[0] in NOT_SUBJECTS:
        return ""
    if kind and not any(same_word(kind, w) for w in said):
        said.append(kind)
    return " ".join(said)


# A thing the team keeps, by name, when no reading above knows what kind of tool it is: "no, we're staying on
# Bugsnap", "we stick with tilekit for now". The name ends the clause (a time word may follow); idioms of
# keeping that name no thing ("stay on track", "stick to the plan") and words of function are no names.
_KEPT_NAME = re.compile(rf"^(?:[^,;:]{{0,40}}[,;:]\s+)?(?i:(?:no|ok|okay|so|then|yeah|nah)[,.]?\s+)*(?P<who>(?i:we|i|the\s+team))(?i:'re|'m|\s+are|\s+am|\s+will|'ll)?\s+"
                        rf"(?i:{_KEEPING})\s+(?:`(?P<code>[^`\s]+)`|(?P<name>{_NAMED_WORD}|[a-z][\w+-]{{2,}})|"
                        rf"the\s+(?P<named>{_NAMED_WORD}))"  # "the Nats2": a name (not "the Monday standup")
                        r"(?:\s+(?:for\s+now|then|anyway|after\s+all|as\s+is))?\s*[.!]?$")
_NOT_KEPT = frozenset("track schedule course top topic plan plans budget call line point time it this that them course "
                      "script task target".split())


def extract_kept(c: Clause) -> Finding | None:
    """A named thing the team keeps, said with a verb of keeping ("we're staying on X"): the clause as said,
    keyed by nothing (what kind of thing X is is not said), so that only its value can be retired later."""
    if c.speaker != "user":
        return None
    m = _KEPT_NAME.match(c.text)
    if m is None:
        return None
    name = m.group("code") or m.group("name") or m.group("named")
    if name.lower() in STOPWORDS | _NOT_KEPT | NOT_SUBJECTS:
        return None
    said = c.text[m.start("who"):].rstrip(" .!")  # without what led up to it ("talked to Ines, no, ")
    return Finding("", normalize_belief(name), Kind.DECISION, cap(said) + ".")


def extract_role(c: Clause) -> Finding | None:
    """A named thing chosen for a role (see ``_ROLE_CHOICE``): keyed by the role, the clause as said."""
    m = next((m for p in (*_ROLE_CHOICE, _ROLE_COPULA) if (m := p.match(c.text))), None)
    if m is None:
        return None
    groups = m.groupdict()
    thing = groups.get("code") or groups.get("name") or groups.get("plain") or ""
    if groups.get("have") and not (groups.get("code") or re.fullmatch(_SHAPED_WORD, thing)):
        return None  # "we have time for the demo", "we have Bob for the backend": no thing by its shape
    if groups.get("plain") and thing.lower() in STOPWORDS | NOT_SUBJECTS | EVALUATIVE:
        return None
    if not re.search(r"[A-Za-z]", thing) or TECH_PATTERN.fullmatch(thing):
        return None  # a number is a quantity; a known tool is ``extract_choice``'s
    words = groups.get("role2") or groups.get("role1") or ""
    kind = groups.get("kind") or ""
    if groups.get("role1") and not groups.get("role2") and groups.get("article") is None:
        return None  # "for starters we use X", "as discussed, we went with X": a fronted phrase without an article
    if kind:
        kind = _singular(kind.lower())
    if kind and (groups.get("plain") or kind.lower() in STOPWORDS | _NOT_ROLES):
        kind = ""  # "we use feature flags for ..." is no thing and its kind; "we use X now for ..."
    if groups.get("kind") and not kind:
        return None
    key = _role(words, kind)
    if not key:
        return None
    text = cap(c.text[: m.end()].rstrip(" ,;:.!")) + "."
    kind_of = Kind.DECISION if (c.changed or DECISION.search(c.low)) else Kind.FACT
    return Finding(key, normalize_belief(thing), kind_of, text)


# A part of the project and the named thing it uses, which no vocabulary knows: "the feed uses `img_cache`",
# "our scheduler is using Quartz.NET for the nightly runs". The subject after "the" or "our" (one to three words),
# the name in code or with the shape of an identifier (``_SHAPED_WORD``), then at most what it is used for. The name closes the clause, or a comma follows it.
_USES_NAME = re.compile(
    rf"^(?:[Tt]he|[Oo]ur)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,2}}?)\s+(?:now\s+)?(?:uses|use|(?:is|are)\s+(?:now\s+)?using)\s+"
    rf"(?P<name>`[^`(]+`|{_SHAPED_WORD})"
    r"(?:\s+(?:for|as)\s+(?:the\s+|its\s+|their\s+)?(?P<purpose>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?))?"
    r"\s*(?=$|[,.;]|\s+(?:but|and|so|which)\b)")  # case-sensitive: the name's shape is in its case
# What code is made of, described in a reply ("the handler uses `ctx`", "this test uses `tmp_path`"): no
# part of the project that a later session asks about.
_CODE_PARTS = frozenset("function functions method methods handler handlers test tests loop class classes query queries "
                        "call calls request requests line lines code snippet snippets patch script version fixture "
                        "fixtures helper helpers mock mocks example examples variable variables file files".split())
# Subjects that are someone else's or not (yet) the project's: a proposal, a vendor's or an upstream thing, a client.
_NOT_OURS = frozenset("proposal proposals vendor upstream client clients customer customers competitor competitors demo "
                      "sample tutorial library libraries plugin sdk old legacy previous former draft".split())


def extract_uses_name(c: Clause) -> Finding | None:
    """A part of the project using a named thing that no vocabulary holds (``_USES_NAME``), keyed by the part and
    what the thing is for when the clause says it."""
    m = _USES_NAME.match(c.text)
    if m is None:
        return None
    words = m.group("np").lower().split()
    purpose = (m.group("purpose") or "").lower().split()
    if words[0] in NOT_SUBJECTS or words[-1] in _CODE_PARTS or any(w in STOPWORDS or w in _NOT_OURS for w in words + purpose):
        return None
    name = m.group("name").strip("`")
    if STARTS_EXE.match(name) or TECH_PATTERN.fullmatch(name):
        return None  # a command, or a tool ``extract_choice`` reads with its category
    said = c.text[: m.end()].rstrip(" ,;.")
    # Without a purpose the part may use many things ("the app uses go_router", later "the app uses riverpod"):
    # no key, so that one never replaces the other; the recall's pair rule still tells two versions apart.
    key = normalize_key(" ".join(words + purpose)) if purpose else ""
    return Finding(key, normalize_belief(name), Kind.FACT, cap(said) + ".")
