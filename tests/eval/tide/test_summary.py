"""The multi-seed TIDE summary (``eval/tide/summary.py``)."""

from __future__ import annotations

from eval.tide.summary import render


def _doc(seed: int, standings: dict[str, dict[str, int]] | None) -> dict[str, object]:
    part = {"64": 0.5, "256": 0.5}
    doc: dict[str, object] = {"seed": seed, "command": f"dynmem bench tide --seed {seed}", "ntu": part,
                              "harmful_rate": part, "ci95": {"64": {"ntu": [0.4, 0.6], "harmful_rate": [0.0, 0.1]}},
                              "by_dimension": {"retention": {"n": 2, "ntu": part, "harmful_rate": part}}}
    if standings is not None:
        doc["standings"] = standings
    return doc


def test_the_standings_of_every_seed_are_summed() -> None:
    row = {"served": 3, "served at 256 only": 0, "in memory, not injected": 1, "never extracted": 2}
    text = render([_doc(0, {"retention": row}), _doc(7, {"retention": row})], level="pipeline", system="dynmem",
                  variant="heldout")
    assert "2 seeds summed" in text
    assert "| retention | 6 | 0 | 2 | 4 |" in text
    # a document written before standings existed gives no such section (and no error)
    assert "seeds summed" not in render([_doc(0, None)], level="pipeline", system="dynmem", variant="heldout")
