"""Where a mention lands: a clause that names a held setting with a new value (DESIGN §3, supersession).

The extractor keys what it can read. A change is often worded in a way no reading knows ("after the
rebuild the image cache sits on ic4.ber.example.org"); the extractor then proposes the clause as an
*update-only* candidate with its one value (``Candidate.update_only``). Here it is matched against what
memory already holds: a servable memory whose key's kind fits the value's shape and whose subject the
clause names, word for word and in order. Matched, the clause becomes a keyed candidate for that key, and
ingest supersedes the old value as for any later statement. Unmatched, it is dropped: a mention never
teaches a new setting, it only keeps a known one from going stale.

Pure: reads the table, returns a candidate or ``None``.
"""

from __future__ import annotations

import re

from engine.keys import key_kind, normalize_belief, normalize_key, same_word, value_kind
from engine.models import Candidate
from engine.state import MemoryTable

# The kinds of key a value of each shape can be the new value of (``engine.keys.value_kind``). A bare
# number only updates a port: a count, a size or a timeout says its unit, and most keys of kind
# ``number`` are such quantities. No version: versions of other parties' software are named in passing
# all the time ("the changelog mentions Python 3.12"), and a version change has readings of its own.
KINDS_OF_SHAPE: dict[str, frozenset[str]] = {
    "number": frozenset({"port"}),
    "host": frozenset({"host", "url"}),
    "location": frozenset({"location"}),
}


_WORD = re.compile(r"[a-z0-9]+(?:['’]s\b)?")

# What may stand between a setting's subject and its new value: English function words, adverbs of time, the
# nouns of a setting's kind, and verbs of being somewhere or of moving there. A closed class: any other verb
# relates the subject to something else ("the db replicates to X", "the loader sends metrics to 8126",
# "the weights are loaded by X"), and the value is that other thing's.
_VERBS = frozenset("""
    is are s be been being am was were got gets get has have had
    lives live living sits sit runs run running listens listen listening answers answer answering resolves resolve
    points point pointed repointed pointing moved move moving migrated migrate relocated relocate renamed rename
    switched switch changed change reassigned renumbered bumped went goes go served hosted located found
    exposed bound binds became become becomes ended landed shifted transferred cut updated set configured pinned
    stored kept reached reach replaced
""".split())
_BETWEEN = _VERBS | frozenset("""
    now also just finally already officially permanently today tonight yesterday since then again going forward
    it they its their this that which to at on in under into onto behind via through as of up over by
    reachable available new home address port url host hostname domain path location folder directory dir endpoint
""".split())
_ARTICLES = frozenset("the a an our this that".split())
_PREPOSITIONS = frozenset("of in on at to for with behind from by into onto under over via through about".split())
# A word before a subject that makes it someone's ("Jenny's", "my colleague's", "their"): another party's setup.
_OWNED_BY = re.compile(r"(?:['’]s|^(?:my|your|his|her|their))$")
# Words naming an environment or a copy of a setup: a subject qualified by one the key does not name is another
# instance of the setting ("for prod, the ledger db sits at X" against "the ledger db sits at Y" said without one).
_ENVIRONMENTS = frozenset("prod production staging stage qa uat dev development local locally test testing "
                          "sandbox preview demo ci cluster example sample".split())


# Shapes distinctive enough that a held value of the shape tells the key's kind (a number does not: a count, a size).
_DISTINCT_SHAPES = frozenset({"host", "location"})


def _subject_at(subject: list[str], said: list[str]) -> int:
    """Where the words of ``subject`` last stand together, in order, among the words ``said`` (give or take an
    ending or a short form, ``engine.keys.same_word``), or -1."""
    n = len(subject)
    for i in range(len(said) - n, -1, -1):
        if n and all(same_word(a, b.removesuffix("'s").removesuffix("’s")) for a, b in zip(subject, said[i:i + n])):
            return i
    return -1


def _names_setting(subject: list[str], said: list[str], labelled: bool) -> bool:
    """Whether the clause up to its value (``said``) names ``subject`` as the one whose value follows: the subject
    is nobody else's, no environment the key does not name qualifies the clause, and only words of being or of
    moving somewhere stand between the subject and the value (``_BETWEEN``). ``labelled``: the value follows a colon
    ("spare box for the ledger relay: X"), where a subject after a preposition is the label's."""
    at = _subject_at(subject, said)
    if at < 0 or (at > 0 and _OWNED_BY.search(said[at - 1])):
        return False
    if any(w in _ENVIRONMENTS and not any(same_word(w, k) for k in subject) for w in said):
        return False
    between = [w.removesuffix("'s").removesuffix("’s") for w in said[at + len(subject):]]
    before = [w for w in said[:at] if w not in _ARTICLES]
    if before and before[-1] in _PREPOSITIONS and (between or not labelled):
        return False  # "the cache beside the ledger proxy now sits at X": the object of a preposition is no subject
    # The rest of the subject's name may come first ("the ledger relay box was moved to X" for a key of "ledger
    # relay"): at most two words, then a verb of being or moving, never a preposition ("the db replicates to X",
    # where "replicates" is the verb).
    tail = next((i for i, w in enumerate(between) if w in _BETWEEN), len(between))
    if tail > 2 or (tail and (tail == len(between) or between[tail] not in _VERBS)):
        return False
    return len(between) <= 6 + tail and all(w in _BETWEEN for w in between[tail:])


def resolve_mention(c: Candidate, table: MemoryTable) -> Candidate | None:
    """The keyed candidate an update-only one stands for, or ``None`` when it names no held setting.

    A setting matches when its key's kind fits the shape of the candidate's value, the clause names its
    subject before the value as the one whose value follows (``_names_setting``), a servable memory holds it with another value,
    and the clause names none of the values held. Of several settings the most specific subject wins; two
    as specific make the mention ambiguous."""
    kinds = KINDS_OF_SHAPE.get(value_kind(c.belief), frozenset())
    if not kinds or not c.belief:
        return None
    belief = normalize_belief(c.belief)
    low = c.text.lower()
    at = low.find(belief)
    head = low[:at] if at >= 0 else low
    said = _WORD.findall(head)  # the subject is named before the value, and outside it
    labelled = head.rstrip().endswith(":")
    best: list[tuple[int, str]] = []
    shape = value_kind(c.belief)
    for key in table.keys(c.scope):
        held = [m for m in table.with_key(c.scope, key) if m.servable and not m.negated]
        words = _WORD.findall(normalize_key(key))
        if key_kind(key) in kinds:
            subject = words[:-1]  # the key without its kind
        elif shape in _DISTINCT_SHAPES and held and all(value_kind(m.belief) == shape for m in held):
            subject = words  # a key named without a kind ("backup bucket") whose value has the shape
        else:
            continue
        if not _names_setting(subject, said, labelled):
            continue
        if not held or any(normalize_belief(m.belief) == belief or normalize_belief(m.belief) in low for m in held):
            continue
        best.append((len(subject), key))
    if not best:
        return None
    best.sort(reverse=True)
    if len(best) > 1 and best[0][0] == best[1][0]:
        return None
    return c.model_copy(update={"key": best[0][1], "update_only": False})
