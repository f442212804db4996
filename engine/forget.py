"""Retire memories on purpose: retract, purge and TTL expiry (DESIGN §4, §9)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from engine.effects import Effects
from engine.models import AuditEvent, Memory, Origin, TrustState


def retract(m: Memory, *, actor: Origin, reason: str, now_ms: int, request_id: str = "") -> Effects:
    """Never serve ``m`` again; its fingerprint stays as a tombstone."""
    if m.state == TrustState.RETRACTED:
        return Effects()
    gone = m.model_copy(update={"state": TrustState.RETRACTED, "retired_at_ms": now_ms,
                                "valid_to_ms": m.valid_to_ms if m.valid_to_ms is not None else now_ms})
    ev = AuditEvent(memory_id=m.id, action="retract", actor=actor, reason=reason, evidence=m.source_unit_ids,
                    request_id=request_id, at_ms=now_ms, from_state=m.state.value, to_state=gone.state.value)
    return Effects(memories=(gone,), audit=(ev,), index_remove=(m.id,))


def purged_text(text: str) -> str:
    return "[purged sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16] + "]"


def purge(m: Memory, *, actor: Origin, reason: str, now_ms: int, request_id: str = "") -> Effects:
    """Retract and erase the text, keeping only hashes (fingerprint) and the audit of the purge."""
    base = retract(m, actor=actor, reason=reason, now_ms=now_ms, request_id=request_id)
    current = base.memories[0] if base.memories else m
    erased = current.model_copy(update={"text": purged_text(m.text), "key": "", "belief": "", "purged": True})
    ev = AuditEvent(memory_id=m.id, action="purge", actor=actor, reason=reason, evidence=m.source_unit_ids,
                    request_id=request_id, at_ms=now_ms, from_state=m.state.value, to_state=erased.state.value,
                    detail="text erased; fingerprint kept as tombstone")
    return Effects(memories=(erased,), audit=base.audit + (ev,), index_remove=(m.id,))


def expire_due(memories: Iterable[Memory], now_ms: int) -> Effects:
    """Expire servable memories whose TTL has passed."""
    out = Effects()
    for m in memories:
        if m.servable and m.expires_at_ms is not None and m.expires_at_ms <= now_ms:
            gone = m.model_copy(update={"state": TrustState.EXPIRED, "retired_at_ms": now_ms,
                                        "valid_to_ms": m.expires_at_ms})
            ev = AuditEvent(memory_id=m.id, action="expire", actor=Origin.SYSTEM, reason="time to live passed",
                            at_ms=now_ms, from_state=m.state.value, to_state=gone.state.value)
            out = out + Effects(memories=(gone,), audit=(ev,), index_remove=(m.id,))
    return out
