"""Ingest: decide what a candidate does to memory, in the order of DESIGN §4.

1. exact      same fingerprint as a servable memory in scope -> evidence +1, sources merged
2. tombstone  same fingerprint as a retired memory -> absorbed if all evidence is older
              than the retirement; newer evidence is a genuine new assertion and goes on
3. key        same key (or the negation of the same belief), different value -> update at
              once: the later evidence wins (a current value counts from its latest
              confirmation), the other is superseded with ``valid_to`` set
4. cosine     above ``tau_dup`` to a servable memory with another value -> both contested,
              a tension and an ``adjudicate`` job (decided promptly, not after N turns)
5. new        a fresh ``C`` memory

Nothing here writes: the result is an ``Effects`` for the EngineActor to commit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from engine.effects import Effects, JobRequest
from engine.keys import fingerprint, normalize_belief, normalize_key
from engine.lexical import tokenize
from engine.mentions import resolve_mention
from engine.models import (
    RETIRED_STATES,
    AuditEvent,
    Candidate,
    Memory,
    Origin,
    Pool,
    Tension,
    Tier,
    TrustState,
)
from engine.settings import Settings
from engine.state import MemoryTable, memory_id_for, tension_id_for


class IngestResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    outcome: str  # duplicate | confirmed | absorbed | updated | historical | contested | created | rejected | unmatched
    memory_id: str | None
    effects: Effects


def retirement_ms(m: Memory) -> int:
    """When a retired memory stopped holding, in evidence time when known."""
    if m.state == TrustState.SUPERSEDED and m.valid_to_ms is not None:
        return m.valid_to_ms
    return m.retired_at_ms if m.retired_at_ms is not None else m.recorded_at_ms


def new_memory(c: Candidate, fp: str, now_ms: int, step: int, s: Settings) -> Memory:
    expires = None
    if c.ttl_ms is not None:
        expires = max(c.valid_from_ms, now_ms) + c.ttl_ms
    return Memory(
        id=memory_id_for(c, fp), scope=c.scope, text=c.text, key=normalize_key(c.key),
        belief=normalize_belief(c.belief), fingerprint=fp, kind=c.kind, tier=c.tier,
        sensitivity=c.sensitivity, state=TrustState.ACTIVE, pool=Pool.C, value=s.dynamics.v_init,
        value_step=step, conf_for=1.0 + max(0.0, min(1.0, c.salience)), conf_against=1.0,
        evidence=1, source_unit_ids=tuple(sorted(set(c.source_unit_ids))), valid_from_ms=c.valid_from_ms,
        last_evidence_ms=c.valid_from_ms, recorded_at_ms=now_ms, expires_at_ms=expires,
        created_step=step, last_hit_step=step, origin=c.origin, prompt_version=c.prompt_version,
        negated=c.negated,
    )


def _event(m: Memory, action: str, actor: Origin, reason: str, now_ms: int, request_id: str,
           before: Memory | None = None, evidence: Sequence[str] = (), detail: str = "") -> AuditEvent:
    return AuditEvent(
        memory_id=m.id, action=action, actor=actor, reason=reason, evidence=tuple(evidence or m.source_unit_ids),
        request_id=request_id, at_ms=now_ms, from_state=before.state.value if before else "",
        to_state=m.state.value, detail=detail,
    )


def supersede(old: Memory, by: Memory, now_ms: int, actor: Origin, reason: str, request_id: str) -> tuple[Memory, AuditEvent]:
    """Retire ``old`` in favour of ``by``: valid until ``by`` became valid."""
    retired = old.model_copy(update={
        "state": TrustState.SUPERSEDED, "valid_to_ms": max(old.valid_from_ms, by.valid_from_ms),
        "retired_at_ms": now_ms, "superseded_by": by.id,
    })
    return retired, _event(retired, "supersede", actor, reason, now_ms, request_id, before=old,
                           evidence=by.source_unit_ids, detail=f"superseded by {by.id}")


def rivals_of(c: Candidate, table: MemoryTable) -> list[Memory]:
    """Servable memories in scope that the candidate replaces by key or by negation."""
    out: dict[str, Memory] = {}
    if c.key:
        for m in table.with_key(c.scope, c.key):
            if c.negated and normalize_belief(m.belief) != normalize_belief(c.belief):
                continue  # "we stopped using make lint" retires that command only, not another one
            if m.servable and (normalize_belief(m.belief) != normalize_belief(c.belief) or m.negated != c.negated):
                out[m.id] = m
    if c.belief:
        # A removal without a subject ("we dropped X") retires every use of X (and the reverse);
        # a removal about one subject ("no more X for Y") leaves X's other keys alone.
        for m in table.with_belief(c.scope, c.belief):
            if m.servable and m.negated != c.negated and (not c.key or not m.key or m.key == normalize_key(c.key)):
                out[m.id] = m
    return sorted(out.values(), key=lambda m: m.id)


_DISTINCTIVE = re.compile(r"\d|[./:_@-]")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def _mentions(m: Memory, value: str) -> bool:
    """Whether ``m``'s text names ``value``: each of its tokens, or a part of one of its names ("8081" in
    ``localhost:8081``, "redis" in ``RedisClient``). A whole number is never the tail of a name ("2000" is not in
    "PT2000", "256" not in "sha256"), though a version may follow a tool's name in lower case ("3.11" in
    ``python3.11``)."""
    toks = tokenize(value)
    if not toks or not all(t in set(tokenize(m.text)) for t in toks):
        return False
    if "=" in value and value.lower() not in m.text.lower():
        return False  # "--jobs=3" is that option set to 3, not any "3 jobs"
    if not _NUMBER.fullmatch(value):
        return True
    # A version ("3.11") may follow a tool's name in lower case; a whole number glued to letters is part of a name.
    before = r"(?<![A-Z0-9.])" if "." in value else r"(?<![A-Za-z0-9.])"
    return re.search(rf"{before}{re.escape(value)}(?![0-9])", m.text) is not None


def _dependents(rivals: Sequence[Memory], fresh: Memory, c: Candidate, table: MemoryTable) -> list[Memory]:
    """Servable memories of the scope, stated no later than the change, that name a retired value.

    Distinctive values count alone (with a digit or an identifier character: ``8080``,
    ``staging-2.example.net``, ``3.11``); a plain word counts only in a memory that also
    names the key ("deploys from the default branch, master"), so that it never retires
    unrelated facts.
    """
    out: dict[str, Memory] = {}
    retired = {r.id for r in rivals}
    for r in rivals:
        value = r.belief
        if r.negated or len(value) < 2:
            continue
        toks = tokenize(value)
        if not toks:
            continue
        # A plain word ("master") counts only next to the words of its key ("default branch").
        if _DISTINCTIVE.search(value) and len(value) < 3:
            continue  # "a1" is too short to identify anything
        if not _DISTINCTIVE.search(value):
            key_toks = tokenize(r.key)
            if not key_toks:
                continue
            toks = toks + [t for t in key_toks if t not in toks]
        ids = set.intersection(*(table.lexical.docs_with(t) for t in toks))
        for mid in sorted(ids):
            m = table.get(mid)
            if (m is None or mid in retired or mid == fresh.id or not m.servable or m.scope != c.scope
                    or m.last_evidence_ms > c.valid_from_ms or m.tier in (Tier.CORE, Tier.PINNED)):
                continue
            if _mentions(m, value):
                out[mid] = m
    return sorted(out.values(), key=lambda m: m.id)


def _naming_removed(c: Candidate, table: MemoryTable) -> list[Memory]:
    """Servable positive memories of the scope, stated no later than a subject-less removal, that
    name the removed value. A plain word counts only when it is long enough to identify something
    (four letters or more); distinctive values (``8081``, ``third_party/eac``) always count."""
    value = c.belief
    toks = tokenize(value)
    if not toks or (not _DISTINCTIVE.search(value) and len(value) < 4):
        return []
    ids = set.intersection(*(table.lexical.docs_with(t) for t in toks))
    out = []
    for mid in sorted(ids):
        m = table.get(mid)
        if (m is not None and m.servable and not m.negated and m.scope == c.scope
                and m.last_evidence_ms <= c.valid_from_ms and m.tier not in (Tier.CORE, Tier.PINNED)
                and _mentions(m, value)):
            out.append(m)
    return out


def _versions(c: Candidate, table: MemoryTable) -> list[Memory]:
    found = {m.id: m for m in table.with_key(c.scope, c.key)} if c.key else {}
    if c.belief:
        found.update({m.id: m for m in table.with_belief(c.scope, c.belief) if m.negated != c.negated})
    return list(found.values())


def ingest(c: Candidate, table: MemoryTable, neighbours: Sequence[tuple[Memory, float]], *, now_ms: int,
           step: int, settings: Settings, request_id: str = "") -> IngestResult:
    """Decide what one candidate does to memory. Pure: returns effects, writes nothing."""
    if not c.text.strip():
        return IngestResult(outcome="rejected", memory_id=None, effects=Effects())
    if c.update_only:  # a clause naming a held setting with a new value: that setting's candidate, or nothing
        resolved = resolve_mention(c, table)
        if resolved is None:
            return IngestResult(outcome="unmatched", memory_id=None, effects=Effects())
        c = resolved
    actor = c.origin
    fp = fingerprint(c.scope, c.key, c.belief, c.text, c.negated)
    same_fp = table.with_fingerprint(c.scope, fp)

    # 0. the very same evidence again (a retried job, a replayed log): nothing changes.
    sources = set(c.source_unit_ids)
    if sources:
        for m in same_fp:
            if sources <= set(m.source_unit_ids):
                return IngestResult(outcome="duplicate", memory_id=m.id, effects=Effects())

    # 1. exact duplicate of a servable memory: more evidence, no new row.
    for m in same_fp:
        if m.servable:
            merged = tuple(sorted(set(m.source_unit_ids) | sources))
            confirmed = m.model_copy(update={
                "evidence": m.evidence + 1, "source_unit_ids": merged,
                "last_evidence_ms": max(m.last_evidence_ms, c.valid_from_ms),
                "conf_for": m.conf_for + 1.0, "last_hit_step": max(m.last_hit_step, step),
            })
            ev = _event(confirmed, "confirm", actor, "same value asserted again", now_ms, request_id,
                        before=m, evidence=c.source_unit_ids)
            return IngestResult(outcome="confirmed", memory_id=m.id,
                                effects=Effects(memories=(confirmed,), audit=(ev,), index_add=(m.id,)))

    # 2. tombstone: a retired value stays retired unless newer evidence asserts it again.
    if settings.ingest.tombstones:
        for m in same_fp:
            if m.state in RETIRED_STATES and c.valid_from_ms <= retirement_ms(m):
                # The tombstone keeps the evidence it absorbed, so the same evidence is a no-op later.
                kept = m.model_copy(update={"source_unit_ids": tuple(sorted(set(m.source_unit_ids) | sources))})
                ev = _event(kept, "absorb", actor,
                            f"re-extracted from evidence older than its retirement ({m.state.value})",
                            now_ms, request_id, before=m, evidence=c.source_unit_ids)
                return IngestResult(outcome="absorbed", memory_id=m.id, effects=Effects(memories=(kept,), audit=(ev,)))

    fresh = new_memory(c, fp, now_ms, step, settings)
    if table.get(fresh.id) is not None:  # the same candidate again (a retried job)
        return IngestResult(outcome="confirmed", memory_id=fresh.id, effects=Effects())

    # 3. same key (or negation of the same belief), different value: update by valid time.
    rivals = rivals_of(c, table)
    named = _naming_removed(c, table) if c.negated and not c.key else []
    if named and not rivals:
        # A removal with no subject ("we dropped EasyAntiCheat", "no longer 8081"): every fact
        # stated before it that names the removed value is stale with it.
        removal: list[Memory] = [fresh]
        trail = [_event(fresh, "create", actor, "removal of " + repr(fresh.belief), now_ms, request_id)]
        for stale in named:
            retired, ev = supersede(stale, fresh, now_ms, actor, f"names the removed value {fresh.belief!r}", request_id)
            removal.append(retired)
            trail.append(ev)
        return IngestResult(outcome="updated", memory_id=fresh.id, effects=Effects(
            memories=tuple(removal), audit=tuple(trail), index_add=(fresh.id,),
            index_remove=tuple(m.id for m in named)))
    if rivals:
        # A current value re-asserted later is as new as its latest evidence.
        newest = max(rivals, key=lambda m: (m.last_evidence_ms, m.id))
        if c.valid_from_ms >= newest.last_evidence_ms:
            mems: list[Memory] = [fresh]
            audit = [_event(fresh, "create", actor, "new value for key " + repr(fresh.key or fresh.belief), now_ms, request_id)]
            for old in rivals:
                retired, ev = supersede(old, fresh, now_ms, actor, "a later statement gives another value", request_id)
                mems.append(retired)
                audit.append(ev)
            # Propagation: facts that were stated with the retired value go stale with it.
            dependents = _dependents(rivals, fresh, c, table)
            for dep in dependents:
                old_value = next(r.belief for r in rivals if _mentions(dep, r.belief))
                retired, ev = supersede(dep, fresh, now_ms, Origin.SYSTEM,
                                        f"stated the retired value {old_value!r} of {fresh.key or fresh.belief!r}", request_id)
                mems.append(retired)
                audit.append(ev)
            return IngestResult(outcome="updated", memory_id=fresh.id, effects=Effects(
                memories=tuple(mems), audit=tuple(audit), index_add=(fresh.id,),
                index_remove=tuple(m.id for m in [*rivals, *dependents])))
        # Older evidence than the current value: record the history, never serve it. It held
        # until the next version (by valid time) began, which may be an older retired one.
        later = [m for m in _versions(c, table) if m.valid_from_ms > c.valid_from_ms and m.state != TrustState.RETRACTED]
        successor = min(later, key=lambda m: (m.valid_from_ms, m.id)) if later else newest
        hist = fresh.model_copy(update={"state": TrustState.SUPERSEDED, "valid_to_ms": successor.valid_from_ms,
                                        "retired_at_ms": now_ms, "superseded_by": successor.id})
        mems = [hist]
        audit = [_event(hist, "create", actor, f"older than the current value {newest.id}; kept as history",
                        now_ms, request_id, detail=f"superseded by {successor.id}")]
        # A version that arrived earlier but held before this one now ends where this one began.
        for prev in _versions(c, table):
            if (prev.state == TrustState.SUPERSEDED and prev.valid_from_ms < c.valid_from_ms
                    and (prev.valid_to_ms or 0) > c.valid_from_ms):
                cut = prev.model_copy(update={"valid_to_ms": c.valid_from_ms, "superseded_by": hist.id})
                mems.append(cut)
                audit.append(_event(cut, "supersede", actor, f"a version from later evidence ({hist.id}) came between",
                                    now_ms, request_id, before=prev, evidence=c.source_unit_ids))
        return IngestResult(outcome="historical", memory_id=hist.id,
                            effects=Effects(memories=tuple(mems), audit=tuple(audit)))

    # 4. near duplicate with another value: contested until adjudicated.
    close = [(m, cos) for m, cos in neighbours
             if m.servable and m.scope == c.scope and cos >= settings.ingest.tau_dup and m.fingerprint != fp]
    if close:
        other, cos = max(close, key=lambda mc: (mc[1], mc[0].id))
        contested = fresh.model_copy(update={"state": TrustState.CONTESTED})
        rival = other.model_copy(update={"state": TrustState.CONTESTED})
        tension = Tension(id=tension_id_for(contested.id, rival.id), scope=c.scope, a_id=rival.id,
                          b_id=contested.id, reason="cosine", cosine=round(cos, 4), created_at_ms=now_ms)
        audit = [
            _event(contested, "create", actor, f"near duplicate of {rival.id} (cosine {cos:.2f}); contested", now_ms, request_id),
            _event(rival, "contest", Origin.SYSTEM, f"tension with {contested.id} (cosine {cos:.2f})", now_ms,
                   request_id, before=other, evidence=c.source_unit_ids),
        ]
        job = JobRequest(kind="adjudicate", key=f"adjudicate:{tension.id}", payload=json.dumps({"tension_id": tension.id}))
        return IngestResult(outcome="contested", memory_id=contested.id, effects=Effects(
            memories=(contested, rival), audit=tuple(audit), tensions=(tension,), jobs=(job,),
            index_add=(contested.id,)))

    # 5. new candidate memory.
    ev = _event(fresh, "create", actor, "new memory", now_ms, request_id)
    return IngestResult(outcome="created", memory_id=fresh.id,
                        effects=Effects(memories=(fresh,), audit=(ev,), index_add=(fresh.id,)))
