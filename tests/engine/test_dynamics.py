from __future__ import annotations

import math

from engine.dynamics import credit, rebalance, value_at
from engine.ingest import ingest
from engine.models import Pool, Tier
from engine.state import MemoryTable
from factories import T0, cand, settings

D = settings().dynamics


def fresh(text: str = "The API listens on port 9090."):
    return ingest(cand(text, src=[text]), MemoryTable(), [], now_ms=T0, step=0, settings=settings()).effects.memories[0]


def test_value_decays_exponentially_but_pinned_does_not() -> None:
    m = fresh()
    assert math.isclose(value_at(m, 10, D), D.v_init * math.exp(-D.lam * 10))
    pinned = m.model_copy(update={"tier": Tier.PINNED})
    assert value_at(pinned, 10, D) == D.v_init


def test_hits_promote_to_main_and_idleness_demotes_then_archives() -> None:
    m = fresh()
    for step in range(1, 6):
        m = credit(m, step, D, hit=1.0)
    moved, events = rebalance([m], 5, T0, D)
    assert moved[0].pool == Pool.M and events[0].action == "promote"
    m = moved[0]
    moved, _ = rebalance([m], 5 + 60, T0, D)  # value fell below theta_d
    assert moved[0].pool in (Pool.C, Pool.A)
    moved, _ = rebalance([fresh()], 10, T0, D)  # positive control: not idle yet, nothing moves
    assert moved == []


def test_main_pool_is_capped() -> None:
    mems = []
    for i in range(D.m_cap + 3):
        m = fresh(f"fact {i}")
        for step in range(1, 8):
            m = credit(m, step, D, hit=1.0 + i / 10)
        mems.append(m)
    moved, _ = rebalance(mems, 7, T0, D)
    assert sum(1 for m in moved if m.pool == Pool.M) == D.m_cap
