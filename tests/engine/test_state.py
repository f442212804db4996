from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st
from pydantic import ValidationError

from engine.models import Tension, TrustState
from engine.state import MemoryTable
from eval.perf.synth import make_memories


def test_a_memory_put_again_with_the_same_text_keeps_one_lexical_entry_and_a_new_text_replaces_it() -> None:
    m = make_memories("p", 3)[0]
    table = MemoryTable([m])
    slots_before = len(table.lexical._ids)
    table.put(m.model_copy(update={"value": m.value + 1.0}))  # a credit: same text
    assert len(table.lexical._ids) == slots_before and m.id in table.lexical.search(m.text, 5)
    table.put(m.model_copy(update={"text": "The billing API now listens on port 9911."}))
    assert m.id in table.lexical.search("port 9911", 5)
    assert len(table.lexical) == 1 and table.lexical.docs_with("9911") == {m.id}


def test_a_retired_memory_leaves_the_lexical_index_and_a_servable_one_stays() -> None:
    a, b = make_memories("p", 2)
    table = MemoryTable([a, b])
    table.put(a.model_copy(update={"state": TrustState.SUPERSEDED}))
    assert a.id not in table.lexical and a.id not in table.lexical.search(a.text, 5)
    assert b.id in table.lexical.search(b.text, 5)  # positive control


def _tokens_of(index: object) -> dict[str, tuple[list[int], list[int], int]]:
    postings = index._postings  # type: ignore[attr-defined]
    return {t: (list(p.slots), list(p.tfs), p.live) for t, p in postings.items()}


def test_a_table_built_from_records_equals_one_built_memory_by_memory() -> None:
    from engine.models import Tier
    from engine.state import from_record, record_of

    mems = make_memories("p", 300)
    mems[3] = mems[3].model_copy(update={"state": TrustState.RETRACTED})
    mems[5] = mems[5].model_copy(update={"tier": Tier.PINNED, "key": "db.port"})
    mems[7] = mems[7].model_copy(update={"expires_at_ms": mems[7].valid_from_ms + 1, "belief": "uses redis"})
    one_by_one = MemoryTable(mems)
    bulk = MemoryTable.from_records(record_of(m) for m in mems)
    assert [m.model_dump() for m in bulk] == [m.model_dump() for m in one_by_one] == [m.model_dump() for m in mems]
    assert all(from_record(record_of(m)) == m for m in mems)
    assert bulk.get(mems[4].id) == mems[4] and bulk.get("m_missing") is None
    assert [m.id for m in bulk.always_on()] == [m.id for m in one_by_one.always_on()] == [mems[5].id]
    assert [m.id for m in bulk.expiring()] == [mems[7].id]
    assert bulk.with_key("project:p", "db.port") == [mems[5]] and bulk.raw_keys("project:p") == {"db.port"}
    assert bulk.with_belief("project:p", "uses redis") == [mems[7]]
    assert bulk.with_fingerprint("project:p", mems[9].fingerprint) == [mems[9]]
    assert _tokens_of(bulk.lexical) == _tokens_of(one_by_one.lexical)
    assert mems[3].id not in bulk.lexical and mems[4].id in bulk.lexical
    assert bulk.count_by("state") == {"active": 299, "retracted": 1}
    assert bulk.count_by("pool", servable_only=True) == one_by_one.count_by("pool", servable_only=True)
    assert len(bulk.servable_ids()) == 299


def test_a_decoded_memory_behaves_like_the_model_it_came_from() -> None:
    from engine.state import DECODED_CACHE, from_record, record_of

    m = make_memories("p", 1)[0]
    d = from_record(record_of(m))
    moved = d.model_copy(update={"value": 2.5})
    assert moved.value == 2.5 and d.value == m.value  # copies with updates leave the record's memory alone
    assert d.model_dump_json() == m.model_dump_json() and d.servable and d.confidence == m.confidence
    # more memories than the decoded cache holds: every one is still found, with its own values
    many = make_memories("p", DECODED_CACHE + 50)
    table = MemoryTable(many)
    assert all(table.get(x.id) == x for x in many[:60]) and len(table._decoded) <= DECODED_CACHE


def test_decoded_memories_share_one_fields_set_that_copies_and_frozen_writes_leave_alone() -> None:
    from engine.state import FIELDS, from_record, record_of

    a, b = (from_record(record_of(m)) for m in make_memories("p", 2))
    assert a.model_fields_set is b.model_fields_set  # one set for every decode
    copied = a.model_copy(update={"superseded_by": "m_x"})
    with pytest.raises(ValidationError):
        a.value = 3.0  # type: ignore[misc]  # frozen: never reaches the fields set
    assert copied.superseded_by == "m_x" and copied.model_fields_set is not a.model_fields_set
    assert a.model_fields_set == b.model_fields_set == set(FIELDS)  # positive control: all fields, unchanged
    assert b.model_copy().model_dump() == b.model_dump()


def _scan(table: MemoryTable, memory_id: str) -> list[str]:
    """What ``open_tensions_of`` answered before it had an index: a walk over every open tension."""
    return [t.id for t in table.tensions.values() if memory_id in (t.a_id, t.b_id)]


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 5), st.integers(0, 5), st.booleans()), max_size=60))
@hsettings(max_examples=200, deadline=None)
def test_the_open_tensions_of_a_memory_are_those_a_walk_over_every_tension_finds_in_the_same_order(
        ops: list[tuple[int, int, int, bool]]) -> None:
    """Tensions opened, reopened with other sides and decided in any order: the index answers
    exactly what a scan of the open tensions does (same tensions, same order)."""
    table = MemoryTable()
    for tid, a, b, open_ in ops:
        table.put_tension(Tension(id=f"t{tid}", scope="p", a_id=f"m{a}", b_id=f"m{b}", reason="cosine",
                                  status="open" if open_ else "decided", created_at_ms=0))
        for m in range(6):
            assert [t.id for t in table.open_tensions_of(f"m{m}")] == _scan(table, f"m{m}")


def test_a_decided_tension_is_no_longer_open_for_either_side_and_a_positive_control_stays() -> None:
    table = MemoryTable()
    table.put_tension(Tension(id="t1", scope="p", a_id="a", b_id="b", reason="key", created_at_ms=0))
    table.put_tension(Tension(id="t2", scope="p", a_id="a", b_id="c", reason="key", created_at_ms=0))
    table.put_tension(Tension(id="t1", scope="p", a_id="a", b_id="b", reason="key", status="decided", created_at_ms=0))
    assert [t.id for t in table.open_tensions_of("a")] == ["t2"]  # the control: still open
    assert table.open_tensions_of("b") == []
