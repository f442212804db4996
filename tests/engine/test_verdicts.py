"""Verdicts on tensions: what each one does to memory states and validity intervals."""

from __future__ import annotations

from engine.ingest import ingest
from engine.models import Origin, Verdict
from engine.retrieval import Shortlisted, select
from engine.state import MemoryTable
from engine.verdicts import apply_verdict
from factories import DAY, T0, cand, settings

S = settings()


def test_a_same_verdict_leaves_one_copy_for_as_of_recall() -> None:
    table = MemoryTable()
    texts = ["Deploys run from the release branch.", "The release branch is what deploys run from."]
    ids = []
    for i, text in enumerate(texts):
        res = ingest(cand(text, src=[f"u{i}"], t=T0 + i * DAY), table, [(m, 0.95) for m in table if m.servable],
                     now_ms=T0 + i * DAY, step=i + 1, settings=S)
        table.apply(res.effects)
        ids.append(res.memory_id)
    tension = next(iter(table.open_tensions_of(ids[1])))
    table.apply(apply_verdict(tension, Verdict.SAME, table=table, decided_by=Origin.JUDGE, why="synonyms",
                              now_ms=T0 + 3 * DAY, step=4, settings=S))
    items = [Shortlisted(memory=m, cos=0.9, lex=0.0) for m in table]
    for as_of in (T0 + DAY + 1, T0 + 2 * DAY, T0 + 5 * DAY):
        sel = select("release branch deploys", items, project="p", settings=S, now_ms=T0 + 5 * DAY, step=5,
                     as_of_ms=as_of)
        assert len(sel.memories) == 1, (as_of, [m.text for m in sel.memories])
    live = select("release branch deploys", items, project="p", settings=S, now_ms=T0 + 5 * DAY, step=5)
    assert len(live.memories) == 1  # positive control: the merged memory is served live
