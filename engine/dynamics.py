"""Value dynamics and pools (DESIGN §4).

``V <- V * exp(-lambda) + eta * hit + eta_s * shadow`` at each engine step. Decay is
applied lazily: a memory stores ``value`` as of ``value_step`` and the current value is
computed on demand, so a step costs nothing for memories that nothing touched.
Pools (C candidate, M main, A archive) are a ranking prior, never an eligibility rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from engine.models import AuditEvent, Memory, Origin, Pool, Tier
from engine.settings import DynamicsSettings


def value_at(memory: Memory, step: int, s: DynamicsSettings) -> float:
    """The memory's value V at engine step ``step`` (pinned memories do not decay)."""
    if memory.tier == Tier.PINNED or step <= memory.value_step:
        return memory.value
    return memory.value * math.exp(-s.lam * (step - memory.value_step))


def _decay_confidence(count: float, steps: int, half_life: int) -> float:
    # Beta counts relax toward the uniform prior (1.0) with a half-life in steps.
    if steps <= 0 or half_life <= 0:
        return count
    return 1.0 + (count - 1.0) * float(0.5 ** (steps / half_life))


def credit(memory: Memory, step: int, s: DynamicsSettings, *, hit: float = 0.0, shadow: float = 0.0,
           confirm: float = 0.0, against: float = 0.0) -> Memory:
    """Apply decay up to ``step`` and add hit/shadow credit and confidence evidence."""
    gap = max(0, step - memory.value_step)
    value = value_at(memory, step, s) + s.eta * hit + s.eta_s * shadow
    update: dict[str, object] = {
        "value": value,
        "value_step": max(step, memory.value_step),
        "conf_for": _decay_confidence(memory.conf_for, gap, s.conf_half_life_steps) + confirm + hit,
        "conf_against": _decay_confidence(memory.conf_against, gap, s.conf_half_life_steps) + against,
    }
    if hit > 0 or shadow > 0 or confirm > 0:
        update["last_hit_step"] = max(step, memory.last_hit_step)
    return memory.model_copy(update=update)


def _move(memory: Memory, pool: Pool, step: int, now_ms: int, action: str, why: str) -> tuple[Memory, AuditEvent]:
    moved = memory.model_copy(update={"pool": pool})
    event = AuditEvent(memory_id=memory.id, action=action, actor=Origin.SYSTEM, reason=why, at_ms=now_ms,
                       from_state=f"pool:{memory.pool}", to_state=f"pool:{pool}", detail=f"step {step}")
    return moved, event


def rebalance(memories: Iterable[Memory], step: int, now_ms: int, s: DynamicsSettings) -> tuple[list[Memory], list[AuditEvent]]:
    """Promote, demote and archive servable memories by value; return the moved ones.

    C above ``theta_p`` goes to M (the weakest M is demoted when M is full); M below
    ``theta_d`` goes back to C; C idle for ``idle_archive`` steps goes to A; an A memory
    that was hit recently comes back to C; C above its cap archives its weakest.
    """
    live = [m for m in memories if m.servable]
    values = {m.id: value_at(m, step, s) for m in live}
    pools = {m.id: m.pool for m in live}
    reasons: dict[str, tuple[str, str]] = {}

    def set_pool(mid: str, pool: Pool, action: str, why: str) -> None:
        pools[mid] = pool
        reasons[mid] = (action, why)

    for m in live:
        v = values[m.id]
        if pools[m.id] == Pool.M and v < s.theta_d:
            set_pool(m.id, Pool.C, "demote", f"value {v:.2f} < theta_d {s.theta_d}")
        elif pools[m.id] == Pool.A and m.last_hit_step > m.created_step and step - m.last_hit_step < s.idle_archive:
            set_pool(m.id, Pool.C, "restore", "hit while archived")
    for m in sorted(live, key=lambda x: (-values[x.id], x.id)):
        if pools[m.id] == Pool.C and values[m.id] > s.theta_p:
            in_m = sorted((i for i, p in pools.items() if p == Pool.M), key=lambda i: (values[i], i))
            if len(in_m) >= s.m_cap:
                weakest = in_m[0]
                if values[weakest] >= values[m.id]:
                    continue
                set_pool(weakest, Pool.C, "demote", "main pool full; weakest demoted")
            set_pool(m.id, Pool.M, "promote", f"value {values[m.id]:.2f} > theta_p {s.theta_p}")
    for m in live:
        idle = step - max(m.last_hit_step, m.created_step)
        if pools[m.id] == Pool.C and idle >= s.idle_archive and m.tier not in (Tier.CORE, Tier.PINNED):
            set_pool(m.id, Pool.A, "archive", f"idle for {idle} steps")
    in_c = sorted((i for i, p in pools.items() if p == Pool.C), key=lambda i: (values[i], i))
    for mid in in_c[: max(0, len(in_c) - s.c_cap)]:
        set_pool(mid, Pool.A, "archive", f"candidate pool above cap {s.c_cap}")

    moved: list[Memory] = []
    events: list[AuditEvent] = []
    by_id = {m.id: m for m in live}
    for mid, pool in pools.items():
        if pool != by_id[mid].pool:
            action, why = reasons[mid]
            m2, ev = _move(by_id[mid], pool, step, now_ms, action, why)
            moved.append(m2)
            events.append(ev)
    return moved, events
