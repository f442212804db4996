"""IndexService with a remote embedder: local-only texts are embedded locally, never sent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from actors.index_actor import IndexService, normalise_query
from engine.errors import InvalidInput
from engine.settings import EmbedderSettings, ModelSettings
from fakes.openai_server import FakeOpenAI

SECRET_NOTE = "The vault recovery drill happens on the first Monday with Ingrid."
NORMAL = "The release train leaves every Thursday at noon."


def split_service(base_url: str) -> IndexService:
    return IndexService(EmbedderSettings(name="openai", openai_model="fake-embed", dim=64, local_name="hash"),
                        ModelSettings(client="rules", openai_base_url=base_url, max_retries=0))


def test_local_only_texts_are_embedded_locally_and_cosines_stay_exact() -> None:
    with FakeOpenAI() as fake:
        svc = split_service(fake.base_url)
        vecs = svc.embed([NORMAL, SECRET_NOTE], [False, True])
        sent = json.dumps(fake.requests)
        assert NORMAL in sent  # positive control: the ordinary text went to the endpoint
        assert "Ingrid" not in sent and "recovery drill" not in sent
        assert vecs.shape == (2, svc.dim) and svc.dim == 64 + svc.local.dim  # type: ignore[union-attr]
        assert np.allclose(vecs[0, 64:], 0) and np.allclose(vecs[1, :64], 0)
        svc.upsert("project:p", ["n", "s"], vecs)
        qvec, hits = svc.embed_search(SECRET_NOTE, ["project:p"], 5)
        scores = dict(hits)
        # each memory is scored by the cosine in its own space, exactly (the query is not diluted)
        assert scores["s"] == pytest.approx(1.0, abs=1e-5)
        assert scores["s"] == pytest.approx(float(np.dot(qvec, vecs[1])), abs=1e-5)
        assert scores.get("n", 0.0) == pytest.approx(float(np.dot(qvec, vecs[0])), abs=1e-5)
        assert svc.ping() == "openai+hash"


def test_a_local_embedder_ignores_the_flags_and_a_remote_local_embedder_is_refused() -> None:
    svc = IndexService(EmbedderSettings(name="hash"))
    a, b = svc.embed([NORMAL, NORMAL], [False, True])
    assert np.allclose(a, b) and svc.dim == a.shape[0]  # one space: flags change nothing
    with pytest.raises(InvalidInput):
        svc.embed([NORMAL], [True, False])
    with pytest.raises(InvalidInput):
        IndexService(EmbedderSettings(name="openai", openai_model="m", local_name="openai"),
                     ModelSettings(openai_base_url="http://127.0.0.1:9/v1"))


# -- the query vector cache (issue 15) ----------------------------------------
class _Counting:
    """Wraps the real embedder and counts the texts it is asked to embed."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)  # type: ignore[attr-defined, no-any-return]


def _service(cache: int) -> tuple[IndexService, _Counting]:
    svc = IndexService(EmbedderSettings(name="hash", query_cache_size=cache))
    counting = _Counting(svc.embedder)
    svc.embedder = counting  # type: ignore[assignment]
    return svc, counting


def test_a_repeated_query_is_embedded_once_whatever_its_spacing() -> None:
    svc, counting = _service(cache=8)
    first = svc.embed_query("what port does the API use?")
    again = svc.embed_query("  what port  does the\tAPI use? ")
    assert counting.texts == ["what port does the API use?"] and svc.query_cache_hits == 1
    assert np.array_equal(first, again)
    other = svc.embed_query("which package manager?")  # positive control: a new query is embedded
    assert counting.texts[-1] == "which package manager?" and not np.array_equal(first, other)


def test_the_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    svc, counting = _service(cache=2)
    for q in ("a port", "b port", "a port", "c port"):  # "b" is the least recently used at "c"
        svc.embed_query(q)
    assert len(svc._query_cache) == 2 and set(svc._query_cache) == {"a port", "c port"}
    svc.embed_query("b port")
    assert counting.texts.count("b port") == 2 and counting.texts.count("a port") == 1


def test_cached_vectors_cannot_be_changed_by_a_caller() -> None:
    svc, _ = _service(cache=4)
    vec = svc.embed_query("where are the payment handlers?")
    assert not vec.flags.writeable
    vec2, hits = svc.embed_search("where are the payment handlers?", ["p:x"], 5)
    assert vec2 is vec and hits == []


def test_a_zero_sized_cache_embeds_every_time() -> None:
    svc, counting = _service(cache=0)
    svc.embed_query("same")
    svc.embed_query("same")
    assert counting.texts == ["same", "same"] and svc.query_cache_hits == 0


def test_the_cache_key_is_redacted_text() -> None:
    key = normalise_query("token  sk-abcdefghijklmnopqrstuvwxyz0123456789 here")
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789" not in key and key.startswith("token ")


def test_wait_for_builds_returns_once_the_switch_to_hnsw_is_in_place() -> None:
    from actors.index import VectorIndex

    svc = IndexService(EmbedderSettings(name="hash"))
    svc.index = VectorIndex(dim=svc.dim, approximate_above=40, background_above=0)  # every rebuild on a thread
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((120, svc.dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"m{i}" for i in range(120)]
    svc.upsert("project:p", ids, vecs)
    assert svc.wait_for_builds(timeout_s=120) is True
    assert svc.index.is_approximate("project:p") and not svc.index.building_any()
    assert svc.search(vecs[7], ["project:p"], 1)[0][0] == "m7"


@pytest.mark.ray
@pytest.mark.parametrize(("configured", "runs"), [("auto", "onnx"), ("numpy", "numpy")])
def test_the_configured_minilm_backend_runs_in_the_index_actor_on_ray(ray_session: None, tmp_path: Path,
                                                                      configured: str, runs: str) -> None:
    """The user's `[embedder] backend` reaches the real Ray graph, and either pass gives the pinned vectors."""
    from actors.launch import Runtime
    from engine.settings import Settings
    from tests.actors.test_embedder import _assert_same_vectors, _pinned

    base = Settings()
    settings = base.model_copy(update={"embedder": base.embedder.model_copy(update={"backend": configured})})
    rt = Runtime(tmp_path / configured, settings)
    try:
        assert rt.index.embedder_backend() == runs
        texts, want = _pinned()
        _assert_same_vectors(rt.index.embed(texts[:8]), want[:8])
    finally:
        rt.shutdown()
