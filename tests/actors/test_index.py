from __future__ import annotations

import threading

import faiss
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import actors.index as index_module
from actors.index import VectorIndex, _faiss_errors, label_for
from engine.errors import IndexError_, InvalidInput

DIM = 16


def unit_rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_search_returns_the_nearest_ids_best_first_with_cosine_scores() -> None:
    vecs = unit_rows(30)
    index = VectorIndex(dim=DIM)
    index.upsert("p", ids("m", 30), vecs)

    hits = index.search(vecs[7], ["p"], k=5)

    assert hits[0][0] == "m7"
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    expected = sorted(((f"m{i}", float(vecs[i] @ vecs[7])) for i in range(30)), key=lambda h: -h[1])[:5]
    assert [h[0] for h in hits] == [h[0] for h in expected]
    assert [h[1] for h in hits] == pytest.approx([h[1] for h in expected], abs=1e-5)


def test_vectors_are_normalised_on_add_and_on_query() -> None:
    vecs = unit_rows(5)
    index = VectorIndex(dim=DIM)
    index.upsert("p", ids("m", 5), vecs * 7.5)

    hits = index.search(vecs[2] * 0.01, ["p"], k=1)

    assert hits == [("m2", pytest.approx(1.0, abs=1e-5))]
    assert np.linalg.norm(index.vectors(["m2"])["m2"]) == pytest.approx(1.0, abs=1e-6)


def test_reupserting_an_id_replaces_its_vector() -> None:
    old, new = unit_rows(2, seed=1)
    others = unit_rows(10, seed=2)
    index = VectorIndex(dim=DIM)
    index.upsert("p", ["x", *ids("o", 10)], np.vstack([old, others]))

    index.upsert("p", ["x"], new[None, :])

    assert index.size("p") == 11
    assert index.search(new, ["p"], k=1) == [("x", pytest.approx(1.0, abs=1e-5))]
    score_for_old = dict(index.search(old, ["p"], k=11))["x"]
    assert score_for_old == pytest.approx(float(old @ new), abs=1e-5)
    np.testing.assert_allclose(index.vectors(["x"])["x"], new, atol=1e-6)


def test_repeated_id_in_one_upsert_keeps_the_last_row() -> None:
    first, last = unit_rows(2, seed=3)
    index = VectorIndex(dim=DIM)

    index.upsert("p", ["x", "x"], np.vstack([first, last]))

    assert index.size("p") == 1
    np.testing.assert_allclose(index.vectors(["x"])["x"], last, atol=1e-6)


def test_removed_id_is_never_returned_while_kept_ids_still_are() -> None:
    vecs = unit_rows(10)
    index = VectorIndex(dim=DIM)
    index.upsert("p", ids("m", 10), vecs)

    assert index.remove(["m3", "unknown"]) == 1

    hits = index.search(vecs[3], ["p"], k=10)
    returned = [h[0] for h in hits]
    assert "m3" not in returned
    assert sorted(returned) == sorted(set(ids("m", 10)) - {"m3"})
    assert index.vectors(["m3", "m4"]).keys() == {"m4"}
    assert index.size() == 9


def test_search_in_one_scope_never_returns_ids_of_another() -> None:
    a, b = unit_rows(5, seed=4), unit_rows(5, seed=5)
    index = VectorIndex(dim=DIM)
    index.upsert("A", ids("a", 5), a)
    index.upsert("B", ids("b", 5), b)

    in_a = index.search(b[0], ["A"], k=10)
    in_b = index.search(b[0], ["B"], k=10)

    assert {h[0] for h in in_a} == set(ids("a", 5))
    assert in_b[0] == ("b0", pytest.approx(1.0, abs=1e-5))
    assert index.search(b[0], ["C"], k=10) == []


def test_search_across_scopes_merges_best_first() -> None:
    vecs = unit_rows(6, seed=6)
    index = VectorIndex(dim=DIM)
    index.upsert("A", ["a0", "a1", "a2"], vecs[:3])
    index.upsert("B", ["b0", "b1", "b2"], vecs[3:])

    hits = index.search(vecs[4], ["A", "B", "A"], k=6)

    assert hits[0][0] == "b1"
    assert {h[0] for h in hits} == {"a0", "a1", "a2", "b0", "b1", "b2"}
    scores = [h[1] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_upserting_an_id_into_another_scope_moves_it() -> None:
    vecs = unit_rows(3, seed=7)
    index = VectorIndex(dim=DIM)
    index.upsert("session", ["m0", "m1"], vecs[:2])

    index.upsert("project", ["m0"], vecs[2][None, :])

    assert index.scope_of("m0") == "project"
    assert [h[0] for h in index.search(vecs[0], ["session"], k=5)] == ["m1"]
    assert index.search(vecs[2], ["project"], k=5) == [("m0", pytest.approx(1.0, abs=1e-5))]
    assert index.size("session") == 1 and index.size("project") == 1


def test_clear_drops_one_scope_and_keeps_the_others() -> None:
    vecs = unit_rows(4, seed=8)
    index = VectorIndex(dim=DIM)
    index.upsert("A", ["a0", "a1"], vecs[:2])
    index.upsert("B", ["b0", "b1"], vecs[2:])

    index.clear("A")

    assert index.size("A") == 0 and index.search(vecs[0], ["A"], k=3) == []
    assert index.vectors(["a0"]) == {}
    assert index.size("B") == 2 and index.size() == 2
    assert index.search(vecs[2], ["B"], k=1)[0][0] == "b0"


def test_bad_vectors_are_rejected_as_invalid_input() -> None:
    index = VectorIndex(dim=DIM)
    index.upsert("p", ["ok"], unit_rows(1))  # positive control
    bad = [
        (["x"], np.zeros((1, DIM), dtype=np.float32)),
        (["x"], np.full((1, DIM), np.nan, dtype=np.float32)),
        (["x"], unit_rows(1, dim=DIM + 1)),
        (["x", "y"], unit_rows(1)),
    ]
    for bad_ids, bad_vectors in bad:
        with pytest.raises(InvalidInput):
            index.upsert("p", bad_ids, bad_vectors)
    with pytest.raises(InvalidInput):
        index.search(np.zeros(DIM, dtype=np.float32), ["p"], k=1)
    assert index.size() == 1 and index.scope_of("x") is None


def test_label_collision_raises_index_error_and_indexes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    index = VectorIndex(dim=DIM)
    index.upsert("p", ["first"], unit_rows(1))  # positive control: a normal id is fine
    monkeypatch.setattr(index_module, "label_for", lambda memory_id: label_for("first"))

    with pytest.raises(IndexError_, match="same label"):
        index.upsert("p", ["second"], unit_rows(1, seed=1))

    assert index.size() == 1 and index.scope_of("second") is None


def test_labels_are_stable_non_negative_int64() -> None:
    label = label_for("mem-01J9ZK")
    assert label == label_for("mem-01J9ZK")
    assert 0 <= label < 2**63
    assert label != label_for("mem-01J9ZL")


def test_faiss_errors_are_translated_to_index_error() -> None:
    hnsw = faiss.IndexHNSWFlat(DIM, 32)
    with pytest.raises(IndexError_) as caught:
        with _faiss_errors("remove vectors"):
            hnsw.remove_ids(np.array([1], dtype=np.int64))  # HNSW cannot remove
    assert isinstance(caught.value.__cause__, RuntimeError)


# -- approximate (HNSW) scopes ------------------------------------------------


def test_scope_switches_to_hnsw_above_threshold_and_still_finds_neighbours() -> None:
    vecs = unit_rows(60, seed=9)
    index = VectorIndex(dim=DIM, approximate_above=40)
    index.upsert("p", ids("m", 40), vecs[:40])
    assert not index.is_approximate("p")

    index.upsert("p", ids("m", 60)[40:], vecs[40:])

    assert index.is_approximate("p") and index.size("p") == 60
    for i in (0, 39, 45, 59):
        assert index.search(vecs[i], ["p"], k=3)[0] == (f"m{i}", pytest.approx(1.0, abs=1e-5))


def test_hnsw_scope_never_returns_removed_ids_while_kept_ids_still_are() -> None:
    vecs = unit_rows(60, seed=10)
    index = VectorIndex(dim=DIM, approximate_above=40)
    index.upsert("p", ids("m", 60), vecs)
    assert index.is_approximate("p")

    index.remove(["m5", "m6"])  # 2 of 60: below the rebuild fraction, stays stale in the graph

    for i in (5, 6):
        returned = [h[0] for h in index.search(vecs[i], ["p"], k=60)]
        assert f"m{i}" not in returned
        assert len(returned) == 58
    assert index.search(vecs[7], ["p"], k=1)[0][0] == "m7"


def test_hnsw_reupsert_scores_against_the_new_vector() -> None:
    vecs = unit_rows(60, seed=11)
    new = unit_rows(1, seed=12)[0]
    index = VectorIndex(dim=DIM, approximate_above=40)
    index.upsert("p", ids("m", 60), vecs)

    index.upsert("p", ["m0"], new[None, :])

    assert index.is_approximate("p") and index.size("p") == 60
    assert index.search(new, ["p"], k=1) == [("m0", pytest.approx(1.0, abs=1e-5))]
    hits = index.search(vecs[0], ["p"], k=60)
    assert [h[0] for h in hits].count("m0") == 1
    assert dict(hits)["m0"] == pytest.approx(float(vecs[0] @ new), abs=1e-5)


def test_hnsw_scope_is_rebuilt_once_stale_entries_pass_the_fraction() -> None:
    vecs = unit_rows(100, seed=13)
    index = VectorIndex(dim=DIM, approximate_above=40, rebuild_stale_fraction=0.2)
    index.upsert("p", ids("m", 100), vecs)

    index.remove(ids("m", 20))  # 20 of 100 stale: not yet past 20%
    assert index._scopes["p"].stale == 20
    index.remove(["m20"])  # 21 of 100: rebuilt from the 79 live vectors
    assert index._scopes["p"].stale == 0 and index.is_approximate("p")
    assert index.search(vecs[50], ["p"], k=1)[0][0] == "m50"

    index.remove(ids("m", 60)[21:])  # 39 left, at most the threshold: back to exact search
    assert not index.is_approximate("p") and index.size("p") == 40
    assert index.search(vecs[70], ["p"], k=1)[0][0] == "m70"
    assert "m30" not in {h[0] for h in index.search(vecs[30], ["p"], k=40)}


# -- invariants ---------------------------------------------------------------

_op = st.one_of(
    st.tuples(st.just("upsert"), st.sampled_from("AB"), st.lists(st.integers(0, 24), min_size=1, max_size=8)),
    st.tuples(st.just("remove"), st.just(""), st.lists(st.integers(0, 24), max_size=6)),
)


@settings(max_examples=60, deadline=None, database=None)
@given(ops=st.lists(_op, max_size=25), seed=st.integers(0, 2**16), threshold=st.sampled_from([6, 1000]))
def test_search_returns_only_live_ids_of_the_asked_scopes_with_exact_scores(
    ops: list[tuple[str, str, list[int]]], seed: int, threshold: int
) -> None:
    rng = np.random.default_rng(seed)
    index = VectorIndex(dim=DIM, approximate_above=threshold)
    model: dict[str, tuple[str, np.ndarray]] = {}  # id -> (scope, unit vector)
    for op, scope, numbers in ops:
        names = [f"m{n}" for n in numbers]
        if op == "upsert":
            rows = unit_rows(len(names), seed=int(rng.integers(2**31)))
            index.upsert(scope, names, rows)
            for name, row in zip(names, rows, strict=True):
                model[name] = (scope, row)
        else:
            index.remove(names)
            for name in names:
                model.pop(name, None)

    query = unit_rows(1, seed=seed + 1)[0]
    for scopes in (["A"], ["B"], ["A", "B"]):
        live = {name: row for name, (scope, row) in model.items() if scope in scopes}
        hits = index.search(query, scopes, k=len(live) + 3)
        assert {h[0] for h in hits} == set(live)
        for name, score in hits:
            assert score == pytest.approx(float(live[name] @ query), abs=1e-5)
        assert [h[1] for h in hits] == sorted((h[1] for h in hits), reverse=True)
        for k in (1, 3, len(live) + 3):  # one call: the same hits and the same vectors as two
            also = ["m0", "m24", "unknown"]
            both, found = index.search_vectors(query, scopes, k, also)
            assert both == index.search(query, scopes, k)
            # the best k of the whole ranking (an HNSW rescoring's last bit depends on how many it rescores)
            assert [h[0] for h in both] == [h[0] for h in hits[:k]]
            assert [h[1] for h in both] == pytest.approx([h[1] for h in hits[:k]], abs=1e-6)
            expected = index.vectors([*(h[0] for h in both), *also])
            assert found.keys() == expected.keys() and all(np.array_equal(found[i], expected[i]) for i in found)
    assert index.size() == len(model)


def test_background_rebuild_serves_the_flat_index_until_ready_and_keeps_writes_made_meanwhile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    real_fill = VectorIndex._fill

    def held_fill(build: object, rows: np.ndarray, threads: int) -> None:
        assert gate.wait(10)
        real_fill(build, rows, threads)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "_fill", staticmethod(held_fill))
    vecs = unit_rows(62, seed=4)
    index = VectorIndex(dim=DIM, approximate_above=40, background_above=0)
    index.upsert("p", ids("m", 60), vecs[:60])

    assert index.building("p") and not index.is_approximate("p")  # still the exact index
    assert index.search(vecs[3], ["p"], k=1)[0][0] == "m3"  # ... and it answers meanwhile
    index.upsert("p", ["late"], vecs[60:61])
    index.upsert("p", ["m7"], vecs[61:62])  # replaced during the build
    index.remove(["m5"])

    gate.set()
    index.wait_for_builds(timeout_s=10)

    assert index.is_approximate("p") and not index.building("p") and index.size("p") == 60
    assert index.search(vecs[60], ["p"], k=1)[0] == ("late", pytest.approx(1.0, abs=1e-5))
    assert index.search(vecs[61], ["p"], k=1)[0] == ("m7", pytest.approx(1.0, abs=1e-5))
    assert "m5" not in dict(index.search(vecs[5], ["p"], k=60))
    assert index.search(vecs[9], ["p"], k=1)[0][0] == "m9"  # positive control: a kept id


def test_background_rebuild_back_to_flat_drops_ids_removed_during_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    vecs = unit_rows(60, seed=5)
    index = VectorIndex(dim=DIM, approximate_above=40, background_above=0, rebuild_stale_fraction=0.2)
    index.upsert("p", ids("m", 60), vecs)
    index.wait_for_builds(timeout_s=10)
    assert index.is_approximate("p")
    index.remove(ids("m", 60)[:20])  # stale share 1/3: rebuilt, now exact (40 live)
    index.remove(["m25"])  # may land while that build runs
    index.wait_for_builds(timeout_s=10)
    assert not index.is_approximate("p") and index.size("p") == 39
    found = dict(index.search(vecs[25], ["p"], k=60))
    assert "m25" not in found and len(found) == 39 and "m30" in found


def test_many_writes_during_a_background_build_start_a_fresh_build_instead_of_a_long_replay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    real_fill = VectorIndex._fill
    fills: list[int] = []

    def held_fill(build: object, rows: np.ndarray, threads: int) -> None:
        fills.append(len(rows))
        assert gate.wait(10)
        real_fill(build, rows, threads)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "_fill", staticmethod(held_fill))
    vecs = unit_rows(120, seed=6)
    index = VectorIndex(dim=DIM, approximate_above=40, background_above=30)
    index.upsert("p", ids("m", 50), vecs[:50])  # first build: a snapshot of 50
    index.upsert("p", ids("m", 120)[50:], vecs[50:])  # 70 more while it runs (>= 30: too many to replay)
    gate.set()
    index.wait_for_builds(timeout_s=10)  # the first finishes and is replaced by a build of all 120
    index.wait_for_builds(timeout_s=10)
    assert fills == [50, 120]
    assert index.is_approximate("p") and index.size("p") == 120 and not index.building("p")
    assert index.search(vecs[100], ["p"], k=1)[0][0] == "m100"


def test_wait_for_builds_also_waits_for_the_rebuild_that_a_finished_build_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()
    real_fill = VectorIndex._fill
    fills: list[int] = []

    def held_fill(build: object, rows: np.ndarray, threads: int) -> None:
        fills.append(len(rows))
        if len(fills) == 1:
            assert gate.wait(10)  # the first build waits while a store keeps sending vectors
        real_fill(build, rows, threads)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "_fill", staticmethod(held_fill))
    vecs = unit_rows(120, seed=6)
    index = VectorIndex(dim=DIM, approximate_above=40, background_above=30)
    index.upsert("p", ids("m", 60), vecs[:60])
    assert index.building("p")
    index.upsert("p", ids("n", 60), vecs[60:])  # as many writes as the build had: it is started again
    gate.set()
    index.wait_for_builds(timeout_s=30)

    assert fills == [60, 120]  # the second build had everything served at its start
    assert not index.building_any() and index.is_approximate("p") and index.size("p") == 120
    assert index.search(vecs[100], ["p"], k=1)[0] == ("n40", pytest.approx(1.0, abs=1e-5))


@pytest.mark.parametrize("approximate", [False, True])
def test_a_saved_scope_loads_back_with_the_same_answers_for_its_token_only(tmp_path, approximate: bool) -> None:
    vecs = unit_rows(60, seed=21)
    index = VectorIndex(dim=DIM, approximate_above=40 if approximate else 1000)
    index.upsert("p", ids("m", 60), vecs)
    index.upsert("q", ["other"], unit_rows(1, seed=22))
    index.remove(["m5"])  # in the HNSW graph it stays as a stale entry; it must stay unserved
    assert index.is_approximate("p") == approximate
    path = tmp_path / "vectors.faiss"
    assert index.save("p", path, "t1") and not index.save("nothing", tmp_path / "x.faiss", "t1")
    want = [index.search(vecs[i], ["p"], k=5) for i in range(0, 60, 7)]

    fresh = VectorIndex(dim=DIM, approximate_above=40 if approximate else 1000)
    assert not fresh.load("p", path, "t2") and fresh.size("p") == 0  # another content token: not used
    assert not VectorIndex(dim=DIM + 1).load("p", path, "t1")  # another width: not used
    assert fresh.load("p", path, "t1")  # positive control
    assert fresh.is_approximate("p") == approximate and fresh.size("p") == 59
    assert [fresh.search(vecs[i], ["p"], k=5) for i in range(0, 60, 7)] == want
    assert "m5" not in [h[0] for h in fresh.search(vecs[5], ["p"], k=60)]
    fresh.remove(["m6"])  # a loaded scope takes writes like any other
    fresh.upsert("p", ["new"], vecs[6:7])
    assert fresh.search(vecs[6], ["p"], k=1)[0][0] == "new"


def test_a_snapshot_naming_an_id_of_another_scope_is_not_loaded(tmp_path) -> None:
    vecs = unit_rows(10, seed=23)
    index = VectorIndex(dim=DIM)
    index.upsert("p", ids("m", 10), vecs)
    index.save("p", tmp_path / "v.faiss", "t")
    other = VectorIndex(dim=DIM)
    other.upsert("q", ["m3"], vecs[3:4])  # the same memory id now lives in another scope
    assert not other.load("p", tmp_path / "v.faiss", "t")
    assert other.scope_of("m3") == "q" and other.size("p") == 0
    (tmp_path / "v.faiss").write_bytes(b"not an index")
    assert not VectorIndex(dim=DIM).load("p", tmp_path / "v.faiss", "t")
