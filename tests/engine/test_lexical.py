from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.inflection import stem
from engine.lexical import BM25Index, tokenize


def test_identifiers_are_kept_whole_and_split() -> None:
    toks = tokenize("see src/payments/stripe_client.py and parseOrderId, run `pytest -x`, python 3.12")
    for t in ["src/payments/stripe_client.py", "payments", "stripe_client.py", "stripe", "client", "parseorderid", "order", "pytest", "3.12"]:
        assert t in toks


def test_a_dotted_name_adds_its_labels_and_a_version_keeps_its_dots() -> None:
    toks = tokenize("bucket `thumbs-old.objects.sa-inland-4.example.org`, on 3.12.1, see docs/api.v2/index.md")
    for t in ["thumbs-old.objects.sa-inland-4.example.org", "thumbs-old", "sa-inland-4", "3.12.1", "api.v2", "index.md"]:
        assert t in toks
    assert "12" not in toks and "3.12" not in toks  # dots between digits join: one version, not three numbers
    assert toks.count("example") == 1  # a label that is also a part is not counted twice
    # a label counts once per word that holds it, whatever the order of the words
    assert tokenize("sa-inland-4 then x.sa-inland-4.example").count("sa-inland-4") == \
        tokenize("x.sa-inland-4.example then sa-inland-4").count("sa-inland-4") == 2


def test_bm25_prefers_the_matching_document_and_forgets_removed_ones() -> None:
    idx = BM25Index()
    idx.add("a", "Payment handlers live in src/payments/.")
    idx.add("b", "The API listens on port 7070.")
    hits = idx.search("where is the payments code")
    assert list(hits) == ["a"] and 0 < hits["a"] <= 1
    idx.remove("a")
    assert "a" not in idx.search("payments")
    assert "b" in idx.search("port")  # positive control


def test_a_plural_or_past_query_finds_the_plain_word_and_the_other_way_round() -> None:
    idx = BM25Index()
    idx.add("owner", "Release owner: Mireille Duval. Only she presses the deploy button.")
    idx.add("port", "The API listens on port 7070.")
    assert list(idx.search("who handles releases now")) == ["owner"]
    idx.add("rotated", "Tokens are rotated every Monday by the ops rota.")
    assert "rotated" in idx.search("when do we rotate the token")
    assert "port" in idx.search("ports")  # positive control on a second memory


def test_identifiers_paths_and_versions_are_never_folded() -> None:
    text = "users.py v1.20 src/releases/notes.md parseOrderIds URLs MAX_RETRIES release-notes"
    assert tokenize(text, fold=True) == tokenize(text)  # nothing added: no prose word here
    assert tokenize("Releases ship", fold=True) == ["releases", "ship", "~releas", "~ship"]  # positive control
    idx = BM25Index()
    idx.add("py", "The handler is users.py, pinned to v1.20.")
    idx.add("prose", "Two users reported it.")
    assert idx.docs_with("user.py") == set() and idx.docs_with("v1.2") == set()
    assert idx.docs_with("users.py") == {"py"} and idx.docs_with("v1.20") == {"py"}
    # the part "users" of users.py is not folded either; the prose word "users" is (positive control)
    assert idx.docs_with("users") == {"py", "prose"} and idx.docs_with("~user") == {"prose"}


def test_folding_only_adds_stems_after_the_tokens_made_today() -> None:
    text = "Fixes the retries in src/api/users.py; Releases are shipped by parseOrderIds (v2.1)."
    plain, folded = tokenize(text), tokenize(text, fold=True)
    assert folded[: len(plain)] == plain
    assert folded[len(plain):] == ["~fix", "~retri", "~releas", "~ship"]


WORDS = st.sampled_from(["releases", "Release", "users.py", "v1.20", "parseOrderIds", "src/api/", "URLs",
                         "the", "running", "queries", "MAX_RETRIES", "shipped", "a-b", "x", "7070"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(WORDS, st.text(alphabet="abcXY._/-19 ", max_size=12)), max_size=12))
def test_every_token_made_without_folding_is_still_made_in_order(words: list[str]) -> None:
    text = " ".join(words)
    plain, folded = tokenize(text), tokenize(text, fold=True)
    assert folded[: len(plain)] == plain
    # what folding adds are lower-case letter stems, each of a prose word of the text
    prose = {w.lower().rstrip(".:-/") for w in re.findall(r"[A-Za-z0-9_][A-Za-z0-9_./:@+#-]*", text)}
    assert all(s[0] == "~" and any(stem(w) == s[1:] for w in prose) for s in folded[len(plain):])
    assert tokenize(text, fold=True) == folded  # the same text always gives the same tokens


DOC_WORDS = ["release", "releases", "released", "owner", "owners", "port", "ports", "users.py", "v1.20",
             "parseOrderIds", "deploy", "deploying", "the", "Rotates", "rotation", "7070"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(DOC_WORDS), min_size=1, max_size=7), min_size=1, max_size=25),
       st.lists(st.sampled_from(DOC_WORDS), min_size=1, max_size=4))
def test_folding_never_lowers_a_score_and_finds_every_document_found_without_it(
        docs: list[list[str]], query_words: list[str]) -> None:
    folded, plain = BM25Index(), BM25Index(fold=False)
    for i, words in enumerate(docs):
        folded.add(f"d{i}", " ".join(words))
        plain.add(f"d{i}", " ".join(words))
    query = " ".join(query_words)
    before, after = plain.search(query, len(docs)), folded.search(query, len(docs))
    assert all(after.get(d, 0.0) >= s for d, s in before.items())
    if not any(w != "the" and w[0].isalpha() and w.isalpha() for w in query_words):  # no prose word in the query
        assert after == before  # the very same answer


def test_without_folding_the_index_is_the_one_before_stems() -> None:
    idx, plain = BM25Index(), BM25Index(fold=False)
    for i in (idx, plain):
        i.add("owner", "Release owner: Mireille Duval.")
    assert plain.search("releases") == {} and plain.docs_with("~releas") == set()
    assert "owner" in idx.search("releases")  # positive control


def test_kept_term_frequencies_stay_within_their_budget_and_answer_the_same() -> None:
    from eval.perf.synth import memory_texts, queries

    docs = [(f"d{i}", text) for i, (text, _) in enumerate(memory_texts(600, seed=3))]
    small, unbounded = BM25Index(), BM25Index()
    small.dense_cache_bytes = 2 * 600  # two terms' arrays (a byte a slot)
    unbounded.dense_cache_bytes = 1 << 30
    small.add_many(docs)
    unbounded.add_many(docs)
    for q in queries(60, seed=4):
        assert small.search(q, 30) == unbounded.search(q, 30)
        assert small._dense_bytes == sum(a.nbytes for a in small._dense.values()) <= small.dense_cache_bytes
    assert unbounded._dense_bytes > small.dense_cache_bytes  # positive control: more would have been kept


def test_a_stem_held_by_the_same_documents_as_its_word_changes_no_score() -> None:
    same, more = BM25Index(), BM25Index()
    for idx in (same, more):
        idx.add("a", "The API listens on port 7070.")
        idx.add("b", "The worker port is 9090 and the worker restarts nightly.")
        idx.add("c", "Nothing about networking here.")
    more.add("d", "Both ports are open.")  # "~port" is now held by one document more than "port"
    assert set(same.search("port")) == {"a", "b"}
    unfolded = BM25Index(fold=False)
    for doc_id, text in [("a", "The API listens on port 7070."),
                         ("b", "The worker port is 9090 and the worker restarts nightly."),
                         ("c", "Nothing about networking here.")]:
        unfolded.add(doc_id, text)
    assert same.search("port") == unfolded.search("port")  # the stem adds nothing: the scores without it
    assert "d" in more.search("port")  # positive control: a stem with other documents still reaches them
