"""Verdicts on tensions (DESIGN §4) and human review decisions (DESIGN §5, issue 5).

``same`` merges into the higher-valued memory; ``update`` supersedes the older by valid
time; ``contradiction`` keeps both contested and files a human review; ``unrelated``
clears the tension. Every verdict records who gave it and why.
"""

from __future__ import annotations

from engine.dynamics import value_at
from engine.effects import Effects
from engine.ingest import supersede
from engine.models import AuditEvent, Memory, Origin, Tension, TrustState, Verdict
from engine.settings import Settings
from engine.state import MemoryTable


def _settle(m: Memory, table: MemoryTable, tension_id: str) -> Memory:
    """Back to ``active`` if no other open tension keeps it contested."""
    if m.state != TrustState.CONTESTED:
        return m
    others = [t for t in table.open_tensions_of(m.id) if t.id != tension_id]
    return m if others else m.model_copy(update={"state": TrustState.ACTIVE})


def _ev(m: Memory, before: Memory, action: str, actor: Origin, reason: str, now_ms: int, request_id: str, detail: str = "") -> AuditEvent:
    return AuditEvent(memory_id=m.id, action=action, actor=actor, reason=reason, evidence=m.source_unit_ids,
                      request_id=request_id, at_ms=now_ms, from_state=before.state.value, to_state=m.state.value,
                      detail=detail)


def apply_verdict(tension: Tension, verdict: Verdict, *, table: MemoryTable, decided_by: Origin, why: str,
                  now_ms: int, step: int, settings: Settings, request_id: str = "") -> Effects:
    """Carry a verdict on an open tension into memory states, audited."""
    a, b = table.get(tension.a_id), table.get(tension.b_id)
    closed = tension.model_copy(update={"status": "decided", "verdict": verdict, "decided_by": decided_by, "why": why})
    if a is None or b is None or not (a.servable and b.servable):
        return Effects(tensions=(closed,))
    label = f"verdict {verdict.value} by {decided_by.value} on {tension.id}: {why}"
    mems: list[Memory] = []
    audit: list[AuditEvent] = []
    remove: list[str] = []
    if verdict == Verdict.SAME:
        va, vb = value_at(a, step, settings.dynamics), value_at(b, step, settings.dynamics)
        keep, drop = (a, b) if (va, a.evidence, a.id) >= (vb, b.evidence, b.id) else (b, a)
        merged = _settle(keep, table, tension.id).model_copy(update={
            "evidence": keep.evidence + drop.evidence,
            "source_unit_ids": tuple(sorted(set(keep.source_unit_ids) | set(drop.source_unit_ids))),
            "last_evidence_ms": max(keep.last_evidence_ms, drop.last_evidence_ms),
            "conf_for": keep.conf_for + drop.conf_for - 1.0,
            # One fact: it has held since the earliest of the two statements.
            "valid_from_ms": min(keep.valid_from_ms, drop.valid_from_ms),
        })
        # The dropped copy never held on its own: an empty validity interval, so that no
        # as-of recall serves it beside the merged memory.
        gone = drop.model_copy(update={"state": TrustState.SUPERSEDED, "retired_at_ms": now_ms, "superseded_by": keep.id,
                                       "valid_to_ms": drop.valid_from_ms})
        mems += [merged, gone]
        audit += [_ev(merged, keep, "merge", decided_by, label, now_ms, request_id, detail=f"absorbed {drop.id}"),
                  _ev(gone, drop, "supersede", decided_by, label, now_ms, request_id, detail=f"merged into {keep.id}")]
        remove.append(drop.id)
    elif verdict == Verdict.UPDATE:
        new, old = (a, b) if (a.valid_from_ms, a.id) > (b.valid_from_ms, b.id) else (b, a)
        current = _settle(new, table, tension.id)
        retired, ev = supersede(old, current, now_ms, decided_by, label, request_id)
        mems += [current, retired]
        if current.state != new.state:
            audit.append(_ev(current, new, "uncontest", decided_by, label, now_ms, request_id))
        audit.append(ev)
        remove.append(old.id)
    elif verdict == Verdict.CONTRADICTION:
        for m in (a, b):
            c = m.model_copy(update={"state": TrustState.CONTESTED, "conf_against": m.conf_against + 1.0})
            mems.append(c)
            audit.append(_ev(c, m, "contest", decided_by, label + "; filed for human review", now_ms, request_id))
        closed = tension.model_copy(update={"verdict": verdict, "decided_by": decided_by, "why": why})  # stays open for review
    else:  # unrelated
        for m in (a, b):
            c = _settle(m, table, tension.id)
            if c.state != m.state:
                mems.append(c)
                audit.append(_ev(c, m, "uncontest", decided_by, label, now_ms, request_id))
    return Effects(memories=tuple(mems), audit=tuple(audit), tensions=(closed,), index_remove=tuple(remove))


REVIEW_DECISIONS = ("accept_new", "keep_old", "keep_both", "retract_both")


def apply_review(tension: Tension, decision: str, *, table: MemoryTable, decided_by: Origin, note: str,
                 now_ms: int, step: int, settings: Settings, request_id: str = "") -> Effects:
    """Carry a human (or, where allowed, agent) decision on a contradiction into memory.

    ``accept_new``: the newer memory (by valid time) is current, the older superseded.
    ``keep_old``: the older stays, the newer is retracted (a tombstone keeps it retired).
    ``keep_both``: both are current; the note records the scope or condition that separates them.
    ``retract_both``: neither is served again.
    """
    from engine.forget import retract

    if decision not in REVIEW_DECISIONS:
        from engine.errors import InvalidInput

        raise InvalidInput(f"unknown decision {decision!r}; one of {', '.join(REVIEW_DECISIONS)}")
    a, b = table.get(tension.a_id), table.get(tension.b_id)
    why = f"review {decision} by {decided_by.value}" + (f": {note}" if note else "")
    closed = tension.model_copy(update={"status": "decided", "decided_by": decided_by, "why": why})
    if a is None or b is None:
        return Effects(tensions=(closed,))
    new, old = (a, b) if (a.valid_from_ms, a.id) > (b.valid_from_ms, b.id) else (b, a)
    if decision == "accept_new":
        fx = apply_verdict(tension, Verdict.UPDATE, table=table, decided_by=decided_by, why=why, now_ms=now_ms,
                           step=step, settings=settings, request_id=request_id)
        return fx + Effects(tensions=(closed.model_copy(update={"verdict": Verdict.UPDATE}),))
    if decision == "keep_both":
        fx = apply_verdict(tension, Verdict.UNRELATED, table=table, decided_by=decided_by, why=why, now_ms=now_ms,
                           step=step, settings=settings, request_id=request_id)
        return fx + Effects(tensions=(closed.model_copy(update={"verdict": Verdict.UNRELATED}),))
    out = Effects(tensions=(closed,))
    targets = [new] if decision == "keep_old" else [new, old]
    for m in targets:
        if m.servable:
            out = out + retract(m, actor=decided_by, reason=why, now_ms=now_ms, request_id=request_id)
    if decision == "keep_old" and old.state == TrustState.CONTESTED:
        others = [t for t in table.open_tensions_of(old.id) if t.id != tension.id]
        if not others:
            kept = old.model_copy(update={"state": TrustState.ACTIVE})
            out = out + Effects(memories=(kept,), audit=(_ev(kept, old, "uncontest", decided_by, why, now_ms, request_id),))
    return out
