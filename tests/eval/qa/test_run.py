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


@pytest.mark.parametrize(("line", "says"), [
    ('{"project": "x", "note": "n", "questions": ["q?"]', "line 1"),                  # truncated JSON
    ('{"project": "x", "questions": ["q?"]}', "note"),                                 # no note key
    ('{"project": "x", "note": "n"}', "questions"),                                    # no questions
    ('{"project": "x", "note": "n", "questions": "which port?"}', "questions"),        # a string, not a list
    ('{"project": "x", "note": "", "questions": ["q?"]}', "note"),                     # an empty note
    ('["x", "n", ["q?"]]', "line 1"),                                                  # not an object
])
def test_a_bad_line_is_refused_with_its_file_and_line(tmp_path, line: str, says: str) -> None:
    (tmp_path / "part9.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="part9.jsonl line 1") as e:
        load_part(9, tmp_path)
    assert says in str(e.value)


def test_a_project_with_only_unanswered_questions_is_refused(tmp_path) -> None:
    (tmp_path / "part9.jsonl").write_text(json.dumps({"project": "x", "note": None, "questions": ["q?"]}) + "\n",
                                          encoding="utf-8")
    with pytest.raises(ValueError, match="project 'x' has questions but no note"):
        load_part(9, tmp_path)
    # positive control: with a note it loads
    with (tmp_path / "part9.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"project": "x", "note": "The API listens on port 8080.", "questions": ["port?"]}) + "\n")
    assert [p.notes for p in load_part(9, tmp_path)] == [("The API listens on port 8080.",)]


def test_another_note_injected_is_no_hit_and_a_note_second_is_no_top_hit() -> None:
    project = Project(part=0, name="Tiny Shop", notes=(
        "The checkout service listens on port 8443.",
        "Nightly backups of the orders database go to the bucket shop-backups-eu.",
    ), questions=(
        Question(text="which port does checkout listen on?", note=1),   # answered by the other note
    ))
    row = run_project(project)[0]
    assert row["surfaced"] and not row["hit"] and not row["top"]


def test_a_note_that_lost_a_tension_still_counts_when_injected_as_the_conflicting_line() -> None:
    from collections import Counter

    project = Project(part=0, name="Lint", notes=(
        "Run the linter before every commit.", "Run the linter before each commit!",
    ), questions=(Question(text="when do we run the linter?", note=1),))  # note 1 is shown as the rival line
    stored: Counter[str] = Counter()
    rows = run_project(project, stored=stored)
    assert stored["created"] == 1 and sum(stored.values()) == 2  # the second note contests or merges with the first
    assert rows[0]["hit"]


class _Stub:
    """An embedder whose vectors are given by text."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts):
        import numpy as np

        return np.asarray([self.vectors[t] for t in texts], dtype=np.float32)


def test_separability_is_the_area_under_the_curve_of_the_best_cosine() -> None:
    from eval.qa.run import separability

    def proj(qs: dict[str, int | None]) -> Project:
        return Project(part=0, name="p", notes=("n1", "n2"),
                       questions=tuple(Question(text=t, note=n) for t, n in qs.items()))

    vec = {"n1": [1.0, 0.0], "n2": [0.0, 1.0], "hi": [0.9, 0.1], "mid": [0.5, 0.5], "lo": [0.2, 0.1], "lo2": [0.2, 0.1]}
    stub = _Stub(vec)
    assert separability([proj({"hi": 0, "lo": None})], stub) == 1.0     # every answered above every unanswered
    assert separability([proj({"lo": 0, "hi": None})], stub) == 0.0     # swapped
    assert separability([proj({"lo": 0, "lo2": None})], stub) == 0.5    # a tie counts half
    assert separability([proj({"hi": 0, "mid": 1, "lo": None, "lo2": None})], stub) == 1.0
    assert separability([proj({"hi": 0, "lo": 1, "mid": None, "lo2": None})], stub) == 0.625


def test_the_report_puts_each_share_in_its_column() -> None:
    from collections import Counter

    from eval.qa.run import render

    doc = render({1: {"answered": 10, "hit": 8, "top": 5, "unanswered": 4, "false_positive": 1},
                  4: {"answered": 0, "hit": 0, "top": 0, "unanswered": 0, "false_positive": 0}},
                 {1: 0.75, 4: float("nan")}, "dynmem bench qa --canonical", Counter(created=10))
    assert "| 1 | 10 | 80.0% | 50.0% | 4 | 25.0% | 0.750 |" in doc
    assert "| 4 (held out) | 0 | - | - | 0 | - | nan |" in doc
    assert "{'created': 10}" in doc
