from __future__ import annotations

from engine.models import TrustState
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
