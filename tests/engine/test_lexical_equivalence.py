"""The compact BM25 index finds the same memories, with the same scores, as the per-document loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lexical import BM25Index, tokenize
from eval.peers import run as peers_run
from eval.perf.bm25_reference import ReferenceBM25

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEV = peers_run.DEFAULT_FILE
needs_dev = pytest.mark.skipif(not DEV.exists(), reason="the opencode-memory dev set is not checked out")


def _both(docs: dict[str, str]) -> tuple[BM25Index, ReferenceBM25]:
    new, old = BM25Index(), ReferenceBM25()
    for doc_id, text in docs.items():
        new.add(doc_id, text)
        old.add(doc_id, text)
    return new, old


def _assert_same(new: BM25Index, old: ReferenceBM25, queries: list[str], limit: int = 30) -> int:
    """Every query returns the same ids in the same order with equal scores; returns how many hit."""
    found = 0
    for q in queries:
        got, want = new.search(q, limit), old.search(q, limit)
        assert list(got) == list(want), q
        assert got == pytest.approx(want, rel=0, abs=1e-12), q
        found += bool(want)
    return found


@needs_dev
def test_peers_dev_set_finds_the_same_memories_per_scenario_and_pooled() -> None:
    scenarios = json.loads(DEV.read_text())["scenarios"]
    pooled: dict[str, str] = {}
    hits = 0
    for sc in scenarios:
        docs = {f"{sc['id']}/{m['id']}": m["text"] for m in sc["memories"]}
        pooled.update(docs)
        hits += _assert_same(*_both(docs), [sc["query"]])
    assert hits > len(scenarios) // 2  # positive control: most queries do find something
    # All memories of all scenarios in one index: hundreds of documents, shortlists cut at 5 and 30.
    new, old = _both(pooled)
    queries = [sc["query"] for sc in scenarios]
    assert _assert_same(new, old, queries, limit=5) > len(scenarios) // 2
    assert _assert_same(new, old, queries, limit=30) > len(scenarios) // 2


def test_example_history_finds_the_same_turns() -> None:
    turns = [json.loads(line) for line in (EXAMPLES / "shop-api-history.jsonl").read_text().splitlines() if line.strip()]
    docs = {f"t{i}": f"{t.get('user', '')} {t.get('assistant', '')}" for i, t in enumerate(turns)}
    questions = [q["question"] for q in json.loads((EXAMPLES / "shop-api-questions.json").read_text())]
    new, old = _both(docs)
    assert _assert_same(new, old, questions, limit=10) == len(questions)
    # Retire a third of the turns and re-index some of them: still the same answers.
    for i in range(0, len(turns), 3):
        new.remove(f"t{i}")
        old.remove(f"t{i}")
    for i in range(0, len(turns), 9):
        new.add(f"t{i}", docs[f"t{i}"])
        old.add(f"t{i}", docs[f"t{i}"])
    assert len(new) == len(old)
    assert _assert_same(new, old, questions, limit=10) > 0


WORDS = ["port", "7070", "src/api/main.py", "parseOrderId", "pnpm", "redis", "the", "worker", "v1.2", "db"]
ops = st.lists(st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 12),
                         st.lists(st.sampled_from(WORDS), min_size=0, max_size=6)), max_size=60)


class _Eager(BM25Index):
    renumber_min = 2  # renumber often, so the property covers it


class _EagerSearched(_Eager):
    dense_share = 0  # every term found by binary search in its postings


class _EagerBySlot(_Eager):
    dense_share = 1 << 30  # every term read from its slot-indexed term frequencies


@settings(max_examples=150, deadline=None)
@given(ops, st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), st.integers(1, 8),
       st.sampled_from([_Eager, _EagerSearched, _EagerBySlot]))
def test_any_sequence_of_adds_and_removes_scores_like_the_reference(
        seq: list[tuple[str, int, list[str]]], query_words: list[str], limit: int, kind: type[BM25Index]) -> None:
    new, old = kind(), ReferenceBM25()
    for op, n, words in seq:
        doc = f"d{n}"
        if op == "add":
            new.add(doc, " ".join(words))
            old.add(doc, " ".join(words))
        else:
            new.remove(doc)
            old.remove(doc)
        assert len(new) == len(old) and (doc in new) == (doc in old)
    for w in WORDS:
        assert new.docs_with(w.lower()) == old.docs_with(w.lower())
    _assert_same(new, old, [" ".join(query_words)], limit)


class _EagerBySlotSmallCache(_EagerBySlot):
    dense_cache_bytes = 64  # one or two slot-indexed arrays kept at a time: dropped all the time


# Words whose stems are held by the same documents as the word ("port" alone) and by more ("ports").
FOLDING_WORDS = ["port", "ports", "release", "released", "releasing", "worker", "src/api/main.py", "the", "7070"]
folding_ops = st.lists(st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 12),
                                 st.lists(st.sampled_from(FOLDING_WORDS), min_size=0, max_size=6)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(folding_ops, st.lists(st.sampled_from(FOLDING_WORDS), min_size=1, max_size=4), st.integers(1, 8),
       st.sampled_from([_Eager, _EagerSearched, _EagerBySlot, _EagerBySlotSmallCache]))
def test_searches_between_adds_and_removes_score_like_the_reference(
        seq: list[tuple[str, int, list[str]]], query_words: list[str], limit: int, kind: type[BM25Index]) -> None:
    """What a search keeps for the next ones (slot-indexed term frequencies) follows every change."""
    new, old = kind(), ReferenceBM25()
    query = " ".join(query_words)
    for op, n, words in seq:
        doc = f"d{n}"
        if op == "add":
            new.add(doc, " ".join(words))
            old.add(doc, " ".join(words))
        else:
            new.remove(doc)
            old.remove(doc)
        _assert_same(new, old, [query, "ports released", "port release"], limit)


def test_a_removed_document_is_never_found_and_a_kept_one_is() -> None:
    idx = BM25Index()
    for i in range(40):
        idx.add(f"d{i}", f"the billing worker listens on port {8000 + i}")
    for i in range(0, 40, 2):
        idx.remove(f"d{i}")
    hits = idx.search("billing worker port", 100)
    assert not any(int(d[1:]) % 2 == 0 for d in hits)
    assert set(hits) == {f"d{i}" for i in range(1, 40, 2)}  # positive control: every kept one


def test_filling_an_index_at_once_makes_the_same_index_as_adding_one_by_one() -> None:
    from eval.perf.synth import memory_texts, queries

    docs = [(f"d{i}", text) for i, (text, _) in enumerate(memory_texts(2000, seed=5))]
    docs += [("path", "src/api/src/main.py src/api"), ("empty", "..."), ("camel", "parseHTTPRequest in api_server.py")]
    one, bulk = BM25Index(), BM25Index()
    for doc_id, text in docs:
        one.add(doc_id, text)
    bulk.add_many(docs)
    assert bulk._ids == one._ids and bulk._slot == one._slot and bulk._terms == one._terms
    assert bulk._total_len == one._total_len and list(bulk._lens[: len(docs)]) == list(one._lens[: len(docs)])
    assert {t: (list(p.slots), list(p.tfs), p.live, p.shortest) for t, p in bulk._postings.items()} == {
        t: (list(p.slots), list(p.tfs), p.live, p.shortest) for t, p in one._postings.items()}
    for q in [*queries(100, seed=2), "src/api", "parse http request"]:
        assert bulk.search(q, 30) == one.search(q, 30)
    for doc_id, _ in docs[:1500]:  # removal and renumbering work on an index filled at once
        bulk.remove(doc_id)
        one.remove(doc_id)
    for q in queries(50, seed=3):
        assert bulk.search(q, 30) == one.search(q, 30)


def test_a_store_of_common_terms_gets_the_exhaustive_top_while_scoring_fewer_documents() -> None:
    """MaxScore stops early on a store where every query term is in hundreds of documents, and
    its answers are still the reference's, also after removals and re-adds."""
    from eval.perf.synth import memory_texts, queries

    docs = {f"m{i}": text for i, (text, _) in enumerate(memory_texts(6000, seed=11))}
    new, old = BM25Index(), ReferenceBM25()
    new.add_many(list(docs.items()))
    for doc_id, text in docs.items():
        old.add(doc_id, text)
    qs = queries(80, seed=4)
    pruned = 0
    for q in qs:
        assert _assert_same(new, old, [q], limit=30) in (0, 1)
        holding = set().union(*(old.docs_with(t) for t in set(tokenize(q, fold=True))))
        assert new.last_scored <= len(holding)
        pruned += new.last_scored < len(holding)
    assert pruned > len(qs) // 2  # positive control: most queries score only part of what they touch
    for i in range(0, 6000, 4):
        new.remove(f"m{i}")
        old.remove(f"m{i}")
    for i in range(0, 6000, 12):
        new.add(f"m{i}", docs[f"m{i}"] + " again")
        old.add(f"m{i}", docs[f"m{i}"] + " again")
    assert _assert_same(new, old, qs, limit=30) > len(qs) // 2
    assert _assert_same(new, old, qs, limit=3) > len(qs) // 2


class _Underbound(BM25Index):
    """A deliberately wrong pruning: each term's bound is a third of what it can add, so the
    search stops taking documents too early (the positive control of the equivalence checks)."""

    def _bound(self, p: Any, idf: float, avg: float) -> float:
        return super()._bound(p, idf, avg) / 3


VOCAB = [f"w{i}" for i in range(12)]
corpora = st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8), min_size=0, max_size=80)


def _ranking(index: BM25Index | ReferenceBM25, query: str, limit: int) -> list[tuple[str, float]]:
    return list(index.search(query, limit).items())


@settings(max_examples=200, deadline=None)
@given(corpora, st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5), st.integers(1, 10))
def test_pruned_search_ranks_any_corpus_like_the_exhaustive_loop(
        docs: list[list[str]], query_words: list[str], limit: int) -> None:
    """Same ids, same scores to the last bit, same order (ties by id) as the per-document loop."""
    new, old = BM25Index(), ReferenceBM25()
    new.add_many([(f"d{i}", " ".join(words)) for i, words in enumerate(docs)])
    for i, words in enumerate(docs):
        old.add(f"d{i}", " ".join(words))
    query = " ".join(query_words)
    assert _ranking(new, query, limit) == _ranking(old, query, limit)


def test_an_empty_index_answers_nothing_and_a_filled_one_answers() -> None:
    empty = BM25Index()
    assert empty.search("port worker", 5) == {} and empty.last_scored == 0
    empty.add("d0", "the worker listens on port 7070")
    assert list(empty.search("port worker", 5)) == ["d0"]  # positive control


def test_the_equivalence_check_catches_a_pruning_that_stops_too_early() -> None:
    """Positive control: a search whose bounds are too small returns another top than the loop,
    on the same corpus where the real bounds give the loop's answer exactly."""
    from eval.perf.synth import memory_texts, queries

    docs = [(f"m{i}", text) for i, (text, _) in enumerate(memory_texts(3000, seed=7))]
    right, wrong, old = BM25Index(), _Underbound(), ReferenceBM25()
    right.add_many(docs)
    wrong.add_many(docs)
    for doc_id, text in docs:
        old.add(doc_id, text)
    qs = queries(60, seed=9)
    assert all(_ranking(right, q, 10) == _ranking(old, q, 10) for q in qs)
    assert sum(_ranking(wrong, q, 10) != _ranking(old, q, 10) for q in qs) > 0
