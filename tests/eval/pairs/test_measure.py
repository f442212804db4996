"""The pairs measurement: its data is well formed, and it puts each pair to the recall's pair rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.settings import Settings
from eval.pairs.measure import DATA, Measured, load, memory_of, report


def test_each_part_has_both_labels_and_three_hundred_pairs() -> None:
    pairs = load()
    parts = sorted({part for part, _ in pairs})
    assert parts == [1, 2, 3, 4, 5, 6]
    for part in parts:
        mine = [p for q, p in pairs if q == part]
        assert len(mine) == 300 and 100 <= sum(p.label for p in mine) <= 200


@pytest.mark.parametrize(("line", "says"), [
    ('{"a": "x", "b": "y", "label": 2}', "label"),
    ('{"a": "", "b": "y", "label": 1}', "a"),
    ('{"a": "x", "b": "y", "label": 1, "extra": 1}', "extra"),
])
def test_a_bad_line_is_refused_with_its_file_and_line(tmp_path: Path, line: str, says: str) -> None:
    (tmp_path / "part9.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="part9.jsonl line 1") as e:
        load(tmp_path)
    assert says in str(e.value)


def test_a_statement_no_reading_keeps_is_a_memory_of_its_own_words() -> None:
    s = Settings()
    read = memory_of("The worker listens on port 7400.", 1_000, s)
    assert read.key == "worker port" and read.valid_from_ms == 1_000
    plain = memory_of("Hmm, not sure about any of that yet.", 2_000, s)
    assert plain.key == "" and plain.text == "Hmm, not sure about any of that yet."


def test_the_report_counts_hides_and_their_precision() -> None:
    import numpy as np

    y = np.array([1, 0, 1, 0])
    m = Measured(y, np.array([1, 1, 2, 2]), np.array([False, False, False, True]),
                 {0.45: np.array([True, True, False, False])})
    text = report(m, 0.45)
    assert "| 0.45 (shipped) | 2 | 0.500 | 0.500 |" in text
    assert "1 pairs, 0 of them of one setting" in text
    assert DATA.name == "data"
