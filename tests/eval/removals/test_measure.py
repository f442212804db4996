"""The removal-reading measurement: its data is well formed and its scoring counts right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.removals.measure import DATA, Message, load, measure, render, retires


@pytest.mark.parametrize("path", sorted(DATA.glob("part*.jsonl")), ids=lambda p: p.name)
def test_each_part_has_removals_and_non_removals_whose_thing_is_in_the_text(path: Path) -> None:
    messages = load(path)
    kinds = {k: sum(m.kind == k for m in messages) for k in ("removal", "not_removal")}
    assert kinds["removal"] >= 100 and kinds["not_removal"] >= 100
    assert {m.speaker for m in messages} == {"user", "assistant"}


@pytest.mark.parametrize(("line", "says"), [
    ('{"kind": "removal", "speaker": "user", "thing": "brindle", "text": "we dropped it"}', "not in the text"),
    ('{"kind": "gone", "speaker": "user", "thing": "x", "text": "x"}', "kind"),
    ('{"kind": "removal", "speaker": "bot", "thing": "x", "text": "x"}', "speaker"),
    ('{"kind": "removal", "speaker": "user", "thing": "x"', "line 1"),
])
def test_a_bad_line_is_refused_with_its_file_and_line(tmp_path: Path, line: str, says: str) -> None:
    (tmp_path / "part9.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="part9.jsonl line 1") as e:
        load(tmp_path / "part9.jsonl")
    assert says in str(e.value)


def test_a_removal_is_read_and_a_proposal_is_not() -> None:
    gone = Message(kind="removal", speaker="user", thing="brindle", text="we dropped brindle last week")
    asked = Message(kind="not_removal", speaker="user", thing="brindle", text="should we drop brindle at some point?")
    kept = Message(kind="not_removal", speaker="user", thing="brindle", text="brindle handles the job queue")
    assert retires(gone) and not retires(asked) and not retires(kept)


def test_the_report_counts_each_kind_and_speaker(tmp_path: Path) -> None:
    rows = [{"kind": "removal", "speaker": "user", "thing": "brindle", "text": "we dropped brindle last week"},
            {"kind": "removal", "speaker": "assistant", "thing": "zeppo", "text": "Nice weather for zeppo today."},
            {"kind": "not_removal", "speaker": "user", "thing": "brindle", "text": "should we drop brindle?"}]
    (tmp_path / "part1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    doc = render(measure(tmp_path))
    assert "| default | user | 1 / 1 (100%) | 0 / 1 (0%) |" in doc
    assert "| default | assistant | 0 / 1 (0%) | 0 / 0 (0%) |" in doc
    assert "| default | all | 1 / 2 (50%) | 0 / 1 (0%) |" in doc


def test_there_are_two_writers_parts() -> None:
    assert len(sorted(DATA.glob("part*.jsonl"))) >= 2
