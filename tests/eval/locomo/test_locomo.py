"""LoCoMo loader, evidence recall, and one (truncated) conversation through the pipeline."""

from __future__ import annotations

import pytest

from actors.config import load_settings
from eval.locomo import run
from eval.locomo.data import Conversation, evidence_ids, load_conversations, parse_session_time
from eval.locomo.metrics import evidence_recall, summarize
from eval.locomo.runner import run_conversation

DATA = run.DEFAULT_FILE
needs_data = pytest.mark.skipif(not DATA.exists(), reason="locomo10.json is not available")


def test_session_dates_parse_to_utc_milliseconds() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == 1_683_554_160_000  # 2023-05-08T13:56:00Z
    assert parse_session_time("10:04 am on 19 December, 2023") < parse_session_time("1:00 pm on 19 December, 2023")


def test_malformed_evidence_is_split_and_unresolvable_ids_are_skipped() -> None:
    known = {"D8:6", "D9:17", "D1:3"}
    assert evidence_ids(["D8:6; D9:17"], known) == ("D8:6", "D9:17")
    assert evidence_ids(["D", "D:11:26", "D1:3", "D30:1"], known) == ("D1:3",)


def test_evidence_recall_at_k() -> None:
    ranking = ("D1:1", "D2:2", "D3:3")
    assert evidence_recall(ranking, ("D2:2", "D9:9"), 2) == 0.5
    assert evidence_recall(ranking, ("D3:3",), 2) == 0.0 and evidence_recall(ranking, ("D3:3",), 3) == 1.0


@needs_data
def test_loader_reads_one_conversation() -> None:
    [conv] = load_conversations(DATA, limit=1)
    assert conv.sample_id == "conv-26" and len(conv.turns) == 419 and len(conv.questions) == 199
    assert conv.turns[0].dia_id == "D1:1" and conv.turns[0].content.startswith("Caroline: ")
    assert all(a.ts_ms < b.ts_ms for a, b in zip(conv.turns, conv.turns[1:]))
    assert {q.category for q in conv.questions} == {1, 2, 3, 4, 5}


@needs_data
def test_one_truncated_conversation_runs_through_the_pipeline_and_bm25() -> None:
    [full] = load_conversations(DATA, limit=1)
    turns = full.turns[:40]
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in full.questions if q.evidence and set(q.evidence) <= ids)[:8]
    conv = Conversation(sample_id=full.sample_id, turns=turns, questions=questions)
    res = run_conversation(conv, load_settings())
    assert res.turns == 40 and len(res.questions) == len(questions) > 0
    for q in res.questions:
        assert set(q.rankings) == {"dynmem", "dynmem_nogate", "bm25"}
        for ranking in q.rankings.values():
            assert set(ranking) <= ids and len(ranking) == len(set(ranking))
        assert set(q.rankings["dynmem"]) <= set(res.cited)  # every recalled turn is cited by a memory
    doc = summarize([res])
    assert doc["overall_1_4"]["bm25_r@25"] > 0  # positive control: lexical search finds evidence
    assert set(doc["seconds"]) == {"observe", "drain", "recall", "bm25"}
