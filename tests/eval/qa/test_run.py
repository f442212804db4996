"""The recall-only benchmark: its data is well formed and a project runs through the real pipeline."""

from __future__ import annotations

import json

import pytest

from eval.qa.run import DATA, PARTS, Project, Question, load_part, run_project, summarise


@pytest.mark.parametrize("part", PARTS)
def test_every_part_has_projects_of_notes_with_answered_and_unanswered_questions(part: int) -> None:
    projects = load_part(part)
    assert len(projects) >= 10
    for p in projects:
        assert len(p.notes) >= 10, p.name
        answered = [q for q in p.questions if q.note is not None]
        assert {q.note for q in answered} == set(range(len(p.notes))), p.name  # every note is asked about
        assert any(q.note is None for q in p.questions), p.name
        assert len({q.text.strip().lower() for q in p.questions}) == len(p.questions), p.name


def test_a_line_without_questions_is_refused(tmp_path) -> None:
    (tmp_path / "part9.jsonl").write_text(json.dumps({"project": "x", "note": "n", "questions": []}) + "\n",
                                          encoding="utf-8")
    with pytest.raises(ValueError, match="part9.jsonl line 1"):
        load_part(9, tmp_path)


def test_a_stored_note_is_found_for_its_question_and_an_unrelated_question_finds_nothing() -> None:
    project = Project(part=0, name="Tiny Shop", notes=(
        "The checkout service listens on port 8443.",
        "Nightly backups of the orders database go to the bucket shop-backups-eu.",
    ), questions=(
        Question(text="which port does checkout listen on?", note=0),       # positive control
        Question(text="where do the nightly order backups go?", note=1),
        Question(text="what is the capital of Mongolia?", note=None),      # nothing answers it
    ))
    rows = run_project(project)
    assert [r["hit"] for r in rows[:2]] == [True, True]
    assert rows[2]["surfaced"] is False
    assert summarise(rows) == {"answered": 2, "hit": 2, "top": 2, "unanswered": 1, "false_positive": 0}


def test_the_data_folder_has_its_brief() -> None:
    assert "## The brief" in (DATA / "README.md").read_text(encoding="utf-8")
