from __future__ import annotations

from engine.lexical import BM25Index, tokenize


def test_identifiers_are_kept_whole_and_split() -> None:
    toks = tokenize("see src/payments/stripe_client.py and parseOrderId, run `pytest -x`, python 3.12")
    for t in ["src/payments/stripe_client.py", "payments", "stripe_client.py", "stripe", "client", "parseorderid", "order", "pytest", "3.12"]:
        assert t in toks


def test_bm25_prefers_the_matching_document_and_forgets_removed_ones() -> None:
    idx = BM25Index()
    idx.add("a", "Payment handlers live in src/payments/.")
    idx.add("b", "The API listens on port 7070.")
    hits = idx.search("where is the payments code")
    assert list(hits) == ["a"] and 0 < hits["a"] <= 1
    idx.remove("a")
    assert "a" not in idx.search("payments")
    assert "b" in idx.search("port")  # positive control
