"""The learned durable-clause classifier (actors/llm/durable.py) and its shipped weights."""

from __future__ import annotations

import pytest

from actors.llm import durable
from eval.durable import train as trainer

# Written for this test by the lead, not taken from the training corpus.
DURABLE = [
    "the billing worker reads its queue from `invoices-v3`",
    "we deploy the docs with netlify",
    "staging lives on stg.harbor.example.net",
    "Done - the exporter now listens on 9464.",
    "- python 3.12, poetry for deps",
    "all timestamps in the warehouse are UTC",
    "backups run every night at 02:30 UTC",
    "the mobile app talks to api.harbor.example.net",
]
NOT_DURABLE = [
    "can you add a test for the csv parser?",
    "ugh the build is red again",
    "maybe we should try bun at some point",
    "lol the deploy took 14 minutes today",
    "is the api still on 3000?",
    "thanks, that worked",
    "the p95 went from 180ms to 240ms after the change",
    "Want me to add a health check as well?",
]


def test_the_shipped_weights_are_what_the_corpus_trains() -> None:
    assert trainer.main(["--check"]) == 0


def test_training_is_deterministic() -> None:
    rows = [durable.Example(t, "user", 1) for t in DURABLE] + [durable.Example(t, "user", 0) for t in NOT_DURABLE]
    assert (durable.train(rows, epochs=50) == durable.train(rows, epochs=50)).all()


def test_the_classifier_separates_our_own_wording() -> None:
    right = sum(durable.is_durable(t, "user") for t in DURABLE) + sum(not durable.is_durable(t, "user") for t in NOT_DURABLE)
    assert right >= 13, right  # 16 sentences it never saw; a learned model may miss a few


@pytest.mark.parametrize("text", NOT_DURABLE[:5])
def test_questions_complaints_plans_and_reports_score_low(text: str) -> None:
    assert durable.score(text, "user") < 0.5


def test_training_without_examples_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        durable.train([])


def test_the_held_out_writers_are_never_trained_on() -> None:
    """The clauses of ``eval/durable/heldout.jsonl`` measure the model on writers it never saw: none of
    them may be in the training corpus, and they come from other writers (parts) than it."""
    train = trainer.load_corpus()
    held = trainer.load_corpus(trainer.HELDOUT)
    assert len(held) > 2000 and {r.part for r in held}.isdisjoint({r.part for r in train})
    seen = {r.example.text.strip().lower() for r in train}
    assert not [r.example.text for r in held if r.example.text.strip().lower() in seen]
    assert {r.example.label for r in held} == {0, 1}  # positive control: both labels, so precision and recall mean something


def test_the_report_scores_each_writer_left_out() -> None:
    rows = trainer.load_corpus()
    authors = trainer.cross_author([r for r in rows if r.part == 1][:300] + [r for r in rows if r.part == 2][:300])
    assert {s.part for s in authors} == {1, 2} and len(authors) == 600
    text = trainer.report(authors, 0.68, authors, [])
    assert "| 1 | 300 |" in text and "| 2 | 300 |" in text
