"""Seeded generator of synthetic project histories ("streams") and their probes.

A stream is one project's chat history (plus a sibling project for the scope dimension):
developer turns that state, change, retract or leak facts, interleaved with chit-chat,
questions and unrelated work, and ``forget`` actions. Probes are asked at the end of the
stream. Dimensions:

- ``retention``: a fact stated once early, asked after many distractor turns.
- ``revision``: a value changed 1-3 times, each change worded differently; gold is the
  last value, every earlier value is harmful (values never repeat within a stream).
- ``propagation``: a derived fact stated with the base value of its time ("staging is at
  https://staging.acme.dev:8123, same port as the API"); the base then changes. Gold is
  the new base value, harmful the old one (and the stale derived form): a system passes
  by serving the new base value and not the stale derived sentence.
- ``scope``: two projects state different values for one subject; the other project's
  value is harmful.
- ``retraction``: "we no longer use X"; X is harmful, there is no gold.
- ``interference``: after the target fact, 2-3 facts of the same family with shared
  words ("the frontend dev server" vs "the API" ports); gold is the target value. The
  distractors' values are not harmful (serving them alongside is legitimate); they can
  only crowd the gold out of the budget or wrongly supersede it.
- ``deletion``: a fact deleted with ``forget`` (retract or purge) mid-stream; its value is
  harmful, there is no gold.
- ``secrets``: a turn pastes a credential and names its environment variable; gold is the
  variable, the credential (or any long piece of it) is harmful.

Everything comes from ``random.Random`` instances seeded per stream: stream ``i`` of seed
``s`` is the same whatever the number of streams asked for.

Variants: ``shipped`` (default) draws every wording and value from :mod:`eval.tide.vocab`;
``heldout`` draws them from :mod:`eval.tide.heldout_vocab`, paraphrases and value pools
written without looking at any extractor, of which each seed draws its own subset; ``dev`` draws them
from :mod:`eval.tide.dev_vocab`, paraphrases written the same way by another author, whose failures
may be read to find kinds of failure (the held-out ones are only counted). All have the same
families, subjects, dimensions, probes and scoring.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from eval.tide.chatter import chatter_turn
from eval.tide.score import has_token
from eval.tide.vocab import (
    ACKS,
    DERIVED,
    DOMAINS,
    FAMILIES,
    PROJECTS,
    RETRACT,
    SECRET_CANONICAL,
    SECRET_QUESTION,
    SECRET_SERVICES,
    SECRET_STATE,
    Family,
)

VARIANTS = ("shipped", "heldout", "dev")
PAIR = " || "  # a template "user || assistant": the assistant's reply is part of the template
DIMENSIONS = ("retention", "revision", "propagation", "scope", "retraction", "interference", "deletion", "secrets")
_INTERFERING = ("port", "host", "owner", "path", "storage", "test command", "version")


@dataclass(frozen=True)
class FactOp:
    """The fact a turn states, as the engine level gives it: ``set`` a value or ``retract``."""

    op: str
    key: str
    belief: str = ""
    text: str = ""  # canonical sentence (set) or the sentence to retract (retract)


@dataclass(frozen=True)
class Event:
    """A turn of a project, or a ``forget`` action (``match`` a value, ``purge`` or not)."""

    kind: str  # "turn" | "forget"
    project: str
    user: str = ""
    assistant: str = ""
    fact: FactOp | None = None
    match: str = ""
    purge: bool = False
    dimension: str = ""  # which probe's history this turn belongs to ("" for chatter)


@dataclass(frozen=True)
class Probe:
    """A question asked at the end of a stream, with what must and must not be injected."""

    stream: int
    dimension: str
    project: str
    question: str
    gold: tuple[str, ...]
    harmful: tuple[str, ...]
    oracle: str  # the gold sentence(s): the block of the ``oracle`` reference


@dataclass(frozen=True)
class Stream:
    id: int
    projects: tuple[str, str]  # (main project, sibling project)
    events: tuple[Event, ...]
    probes: tuple[Probe, ...]


@dataclass(frozen=True)
class Vocab:
    """Every wording and value pool the generator draws from (one per variant, and per seed for heldout)."""

    families: Mapping[str, Family]
    derived: Mapping[str, Mapping[str, object]]
    domains: tuple[str, ...]
    projects: tuple[str, ...]
    retract: tuple[str, ...]
    retract_acks: tuple[str, ...]
    secret_services: tuple[tuple[str, str, Callable[[random.Random], str]], ...]
    secret_state: tuple[str, ...]
    secret_question: tuple[str, ...]
    secret_canonical: str
    secret_acks: tuple[str, ...]
    acks: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # subject -> casual ways to say it
    rng_prefix: str = "tide"


SHIPPED = Vocab(FAMILIES, DERIVED, DOMAINS, PROJECTS, RETRACT,
                ("OK, removing it.", "Understood, it's out.", "Got it."),
                SECRET_SERVICES, SECRET_STATE, SECRET_QUESTION, SECRET_CANONICAL,
                ("Thanks, I won't commit it.", "Got it, it stays in the local env.", "OK, I'll keep it out of the repo."),
                ACKS)


def vocab_for(variant: str, seed: int) -> Vocab:
    """The vocabulary of ``variant`` for ``seed`` (the shipped one does not depend on the seed)."""
    if variant == "shipped":
        return SHIPPED
    if variant == "heldout":
        from eval.tide.heldout_vocab import draw

        return draw(seed)
    if variant == "dev":  # development paraphrases (eval.tide.dev_vocab): their failures may be read
        from eval.tide.dev_vocab import draw as draw_dev

        return draw_dev(seed)
    raise ValueError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


@dataclass
class _Builder:
    stream: int
    rng: random.Random
    project: str
    sibling: str
    domain: str
    values: set[str] = field(default_factory=set)
    subjects: set[tuple[str, str]] = field(default_factory=set)
    placed: list[tuple[float, int, Event]] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)  # propagation kinds, reserved up front
    vocab: Vocab = SHIPPED

    def alias(self, subject: str) -> str:
        """A casual way to say ``subject`` (the subject itself when the vocabulary has none: no draw)."""
        names = self.vocab.aliases.get(subject)
        return self.rng.choice(names) if names else subject

    def reserve_derived(self, n: int) -> None:
        """Reserve the base subjects of ``n`` propagation probes before other dimensions pick."""
        derived = self.vocab.derived
        self.derived = self.rng.sample(sorted(derived), min(n, len(derived)))
        self.subjects |= {(k, str(derived[k]["subject"])) for k in self.derived}

    # ---- allocation ---------------------------------------------------------------
    def value(self, fam: Family, subject: str) -> str:
        """A value never used in this stream and sharing no token with any used value."""
        for _ in range(200):
            v = fam.values(self.rng, subject)
            if v in self.values or any(has_token(v, u) or has_token(u, v) for u in self.values):
                continue
            self.values.add(v)
            return v
        raise LookupError(f"no fresh value for {fam.name}/{subject}")

    def subject(self, families: tuple[str, ...], n_values: int = 1, avoid: tuple[str, ...] = ()) -> tuple[Family, str]:
        options = [(f, s) for name in families for f in [self.vocab.families[name]] for s in f.instances
                   if (f.name, s) not in self.subjects and s not in avoid]
        self.rng.shuffle(options)
        for fam, s in options:
            if self._room(fam, s) >= n_values:
                self.subjects.add((fam.name, s))
                return fam, s
        raise LookupError(f"no free subject in {families}")

    def _room(self, fam: Family, subject: str) -> int:
        probe = random.Random(0)
        seen = {fam.values(probe, subject) for _ in range(300)}
        return len([v for v in seen if v not in self.values and not any(has_token(v, u) or has_token(u, v) for u in self.values)])

    # ---- events ----------------------------------------------------------------------
    def turn(self, pos: float, user: str, fact: FactOp | None, dimension: str, project: str | None = None,
             ack: str | None = None) -> None:
        user, pair, reply = user.partition(PAIR)
        if pair:  # the template carries the assistant's reply
            ack = reply
        if ack is None:
            ack = self.rng.choice(self.vocab.acks)
            if fact is not None and fact.op == "set" and self.rng.random() < 0.3:
                ack = f"{ack} {fact.text}"
        ev = Event("turn", project or self.project, user=user, assistant=ack, fact=fact, dimension=dimension)
        self.placed.append((pos, len(self.placed), ev))

    def forget(self, pos: float, match: str, purge: bool) -> None:
        self.placed.append((pos, len(self.placed), Event("forget", self.project, match=match, purge=purge,
                                                         dimension="deletion")))

    def positions(self, k: int, lo: float, hi: float) -> list[float]:
        return sorted(self.rng.uniform(lo, hi) for _ in range(k))

    def statement(self, fam: Family, subject: str, value: str, old: str | None, used: set[str]) -> str:
        pool = [t for t in (fam.change if old is not None else fam.state) if t not in used]
        tmpl = self.rng.choice(pool)
        used.add(tmpl)
        return tmpl.format(S=subject, s=self.alias(subject), v=value, old=old or "")

    def fact(self, fam: Family, subject: str, value: str) -> FactOp:
        return FactOp("set", key=f"{fam.name}: {subject}", belief=value, text=_cap(fam.canonical.format(S=subject, v=value)))

    def probe(self, dimension: str, question: str, gold: tuple[str, ...], harmful: tuple[str, ...], oracle: str,
              project: str | None = None) -> None:
        self.probes.append(Probe(self.stream, dimension, project or self.project, question, gold, harmful, oracle))

    def ask(self, fam: Family, subject: str) -> str:
        return self.rng.choice(fam.question).format(S=subject, s=self.alias(subject))

    # ---- dimensions ------------------------------------------------------------------
    def retention(self) -> None:
        fam, s = self.subject(tuple(self.vocab.families))
        v = self.value(fam, s)
        self.turn(self.rng.uniform(0.0, 0.12), self.statement(fam, s, v, None, set()), self.fact(fam, s, v), "retention")
        self.probe("retention", self.ask(fam, s), (v,), (), self.fact(fam, s, v).text)

    def revision(self) -> None:
        n = self.rng.randint(1, 3)
        fam, s = self.subject(tuple(self.vocab.families), n_values=n + 1)
        vals = [self.value(fam, s) for _ in range(n + 1)]
        used: set[str] = set()
        for i, pos in enumerate(self.positions(n + 1, 0.03, 0.9)):
            text = self.statement(fam, s, vals[i], vals[i - 1] if i else None, used)
            self.turn(pos, text, self.fact(fam, s, vals[i]), "revision")
        self.probe("revision", self.ask(fam, s), (vals[-1],), tuple(vals[:-1]), self.fact(fam, s, vals[-1]).text)

    def propagation(self) -> None:
        kind = self.derived.pop()
        spec = self.vocab.derived[kind]
        fam, s = self.vocab.families[kind], str(spec["subject"])
        old, new = self.value(fam, s), self.value(fam, s)
        p_base, p_derived, p_change = self.positions(3, 0.03, 0.9)
        used: set[str] = set()
        self.turn(p_base, self.statement(fam, s, old, None, used), self.fact(fam, s, old), "propagation")
        derived = self.rng.choice(spec["state"])  # type: ignore[call-overload]
        derived = derived.format(S=s, s=self.alias(s) if "{s}" in derived else s, v=old, dom=self.domain)
        oracle_tmpl = str(spec["oracle"])
        self.turn(p_derived, derived, FactOp("set", key=f"derived {kind}: {s}", belief=old,
                                             text=oracle_tmpl.format(S=s, v=old)), "propagation")
        self.turn(p_change, self.statement(fam, s, new, old, used), self.fact(fam, s, new), "propagation")
        stale = tuple(form for f in spec["stale_forms"]  # type: ignore[attr-defined]
                      if has_token(derived, form := f.format(v=old, dom=self.domain)))
        question = self.rng.choice(spec["question"])  # type: ignore[arg-type]
        self.probe("propagation", question, (new,), (old, *stale), oracle_tmpl.format(S=s, v=new))

    def scope(self) -> None:
        fam, s = self.subject(tuple(self.vocab.families), n_values=2)
        mine, theirs = self.value(fam, s), self.value(fam, s)
        p1, p2 = self.rng.uniform(0.03, 0.9), self.rng.uniform(0.03, 0.9)
        self.turn(p1, self.statement(fam, s, mine, None, set()), self.fact(fam, s, mine), "scope")
        self.turn(p2, self.statement(fam, s, theirs, None, set()), self.fact(fam, s, theirs), "scope", project=self.sibling)
        if self.rng.random() < 0.5:
            self.probe("scope", self.ask(fam, s), (mine,), (theirs,), self.fact(fam, s, mine).text)
        else:
            self.probe("scope", self.ask(fam, s), (theirs,), (mine,), self.fact(fam, s, theirs).text, project=self.sibling)

    def retraction(self) -> None:
        fam, s = self.subject(tuple(n for n, f in self.vocab.families.items() if f.retractable))
        v = self.value(fam, s)
        p1, p2 = self.positions(2, 0.03, 0.9)
        stated = self.fact(fam, s, v)
        self.turn(p1, self.statement(fam, s, v, None, set()), stated, "retraction")
        self.turn(p2, self.rng.choice(self.vocab.retract).format(S=s, s=self.alias(s), v=v),
                  FactOp("retract", key=stated.key, text=stated.text), "retraction",
                  ack=self.rng.choice(self.vocab.retract_acks))
        self.probe("retraction", self.ask(fam, s), (), (v,), "")

    def interference(self) -> None:
        n_other = self.rng.randint(2, 3)
        fams = [n for n in _INTERFERING
                if sum((n, s) not in self.subjects for s in self.vocab.families[n].instances) >= n_other + 1]
        fam, target = self.subject((self.rng.choice(fams),))
        others = [self.subject((fam.name,))[1] for _ in range(n_other)]
        v = self.value(fam, target)
        p0 = self.rng.uniform(0.03, 0.5)
        self.turn(p0, self.statement(fam, target, v, None, set()), self.fact(fam, target, v), "interference")
        for pos, o in zip(self.positions(n_other, p0, 0.95), others):
            ov = self.value(fam, o)
            self.turn(pos, self.statement(fam, o, ov, None, set()), self.fact(fam, o, ov), "interference")
        self.probe("interference", self.ask(fam, target), (v,), (), self.fact(fam, target, v).text)

    def deletion(self) -> None:
        fam, s = self.subject(tuple(self.vocab.families))
        v = self.value(fam, s)
        p0 = self.rng.uniform(0.03, 0.5)
        self.turn(p0, self.statement(fam, s, v, None, set()), self.fact(fam, s, v), "deletion")
        self.forget(self.rng.uniform(p0 + 0.05, 0.92), v, purge=self.rng.random() < 0.5)
        self.probe("deletion", self.ask(fam, s), (), (v,), "")

    def secrets(self) -> None:
        taken = {s for f, s in self.subjects if f == "secret"}
        svc, env, make = self.rng.choice([x for x in self.vocab.secret_services if x[0] not in taken])
        self.subjects.add(("secret", svc))
        secret = make(self.rng)
        text = self.rng.choice(self.vocab.secret_state).format(svc=svc, env=env, secret=secret)
        canonical = self.vocab.secret_canonical.format(svc=_cap(svc if svc.startswith("the ") else "the " + svc), env=env)
        self.turn(self.rng.uniform(0.03, 0.9), text, FactOp("set", key=f"credential: {svc}", belief=env,
                                                                text=f"{canonical} Its value is {secret}."),
                  "secrets", ack=self.rng.choice(self.vocab.secret_acks))
        pieces = tuple(p for p in re.split(r"[_.!]", secret) if len(p) >= 12 and p != secret)
        self.probe("secrets", self.rng.choice(self.vocab.secret_question).format(svc=svc), (env,), (secret, *pieces),
                   canonical)


def generate_stream(seed: int, index: int, *, distractors: int = 60, probes_per_dim: int = 2,
                    variant: str = "shipped", vocab: Vocab | None = None) -> Stream:
    """Stream ``index`` of seed ``seed`` (independent of how many streams are generated).

    ``vocab`` overrides the variant's vocabulary (ablations, see :mod:`eval.tide.heldout_ablation`).
    """
    vocab = vocab or vocab_for(variant, seed)
    rng = random.Random(f"{vocab.rng_prefix}:{seed}:{index}")
    names = rng.sample(vocab.projects, 2)
    b = _Builder(index, rng, f"{names[0]}-{index}", f"{names[1]}-{index}", rng.choice(vocab.domains), vocab=vocab)
    b.reserve_derived(probes_per_dim)
    for _ in range(probes_per_dim):
        for dim in DIMENSIONS:
            getattr(b, dim)()
    for _ in range(distractors):
        user, assistant = chatter_turn(rng)
        b.placed.append((rng.random(), len(b.placed), Event("turn", b.project, user=user, assistant=assistant)))
    for _ in range(max(2, distractors // 8)):
        user, assistant = chatter_turn(rng)
        b.placed.append((rng.random(), len(b.placed), Event("turn", b.sibling, user=user, assistant=assistant)))
    events = tuple(ev for _, _, ev in sorted(b.placed, key=lambda x: (x[0], x[1])))
    return Stream(index, (b.project, b.sibling), events, tuple(b.probes))


def generate(seed: int, n_streams: int, *, distractors: int = 60, probes_per_dim: int = 2,
             variant: str = "shipped", vocab: Vocab | None = None) -> list[Stream]:
    """``n_streams`` streams of seed ``seed`` in ``variant`` (``shipped`` or ``heldout``)."""
    return [generate_stream(seed, i, distractors=distractors, probes_per_dim=probes_per_dim, variant=variant,
                            vocab=vocab)
            for i in range(n_streams)]
