"""Issue 12 in process: the elastic extraction pool's sizing, and purges reaching every worker's cache."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from actors.config import load_settings
from actors.launch import Runtime, pool_size
from actors.llm.response_cache import ResponseCache, request_key
from actors.llm.rules import RulesClient
from actors.pipeline import Pipeline
from actors.wire import ForgetRequest, RememberRequest
from engine.settings import Settings


@pytest.mark.parametrize(("backlog", "lo", "hi", "per_worker", "want"), [
    (0, 2, 8, 4, 2),      # no backlog: the minimum
    (5, 1, 8, 4, 2),      # 5 jobs, 4 requests per worker: 2 workers
    (8, 1, 8, 4, 2),
    (9, 1, 8, 4, 3),
    (1000, 2, 8, 4, 8),   # capped at the maximum
    (3, 4, 8, 1, 4),      # never under the minimum
])
def test_pool_size_follows_the_backlog_within_its_bounds(backlog: int, lo: int, hi: int, per_worker: int,
                                                        want: int) -> None:
    assert pool_size(backlog, lo, hi, per_worker) == want


def openai_settings(lo: int, hi: int, per_worker: int) -> Settings:
    base = load_settings()
    model = base.model.model_copy(update={"client": "openai", "openai_model": "m", "openai_base_url": "http://127.0.0.1:9/v1",
                                          "max_concurrency": per_worker})
    runtime = base.runtime.model_copy(update={"extraction_workers": lo, "extraction_workers_max": hi})
    emb = base.embedder.model_copy(update={"name": "hash"})
    return base.model_copy(update={"model": model, "runtime": runtime, "embedder": emb})


def test_the_pool_grows_with_the_backlog_and_returns_to_its_minimum_when_idle(tmp_path: Path) -> None:
    rt = Runtime(tmp_path, openai_settings(1, 5, 4), use_ray=False, client_factory=RulesClient)
    try:
        assert len(rt.extractors) == 1 and rt.pool_bounds() == (1, 5, 4)
        assert rt.scale_extractors(12) == 3
        assert rt.scale_extractors(7) == 3  # a smaller backlog does not stop workers mid-replay
        assert rt.scale_extractors(400) == 5
        assert rt.release_idle() == [] and len(rt.extractors) == 1  # nothing live: back to the minimum
    finally:
        rt.shutdown()


def test_the_offline_rules_client_keeps_a_fixed_pool(tmp_path: Path) -> None:
    base = load_settings()
    settings = base.model_copy(update={"runtime": base.runtime.model_copy(update={"extraction_workers": 2,
                                                                                  "extraction_workers_max": 8})})
    rt = Runtime(tmp_path, settings, use_ray=False)
    try:
        assert rt.pool_bounds() == (2, 2, 1) and rt.scale_extractors(1000) == 2
    finally:
        rt.shutdown()


def test_a_purge_erases_the_text_from_every_workers_own_cache(tmp_path: Path) -> None:
    """Each model worker keeps its cache on its own node: the purge must reach each of them."""
    folders = (tmp_path / f"node-{i}" for i in itertools.count())
    caches: list[ResponseCache] = []

    def client() -> RulesClient:
        c = RulesClient()
        c.cache = ResponseCache(next(folders), 1 << 20)  # type: ignore[attr-defined]
        caches.append(c.cache)  # type: ignore[attr-defined]
        return c

    settings = openai_settings(2, 2, 1)
    rt = Runtime(tmp_path / "data", settings, use_ray=False, client_factory=client)
    try:
        pipe = Pipeline(rt)
        mid = pipe.remember(RememberRequest(project="p", text="The staging password hint is heliotrope.")).memory_ids[0]
        secret, other = request_key("m", [{"role": "user", "content": "a"}], None), request_key("m", [], None)
        for cache in caches:
            cache.put(secret, '{"facts": ["The staging password hint is heliotrope."]}')
            cache.put(other, '{"facts": ["The API runs on port 8080."]}')
        assert len(caches) == 4  # two extraction workers, the adjudicator, the investigator
        pipe.forget(ForgetRequest(project="p", memory_id=mid, purge=True))
        assert all(c.get(secret) is None for c in caches)
        assert all(c.get(other) is not None for c in caches)  # positive control: only the purged text goes
    finally:
        rt.shutdown()


@pytest.mark.ray
def test_a_recall_query_is_embedded_while_a_bulk_batch_is_still_embedding(ray_session: None, tmp_path: Path) -> None:
    """The IndexActor's query group has its own thread: the query does not wait for the bulk batch."""
    import ray

    from actors.index_actor import IndexService
    from actors.launch import Ref

    base = load_settings()
    rt = Runtime(tmp_path, base.model_copy(update={"embedder": base.embedder.model_copy(update={"name": "hash"})}))
    try:
        texts = [f"bulk text number {i} about the deploy pipeline and its ports" for i in range(200_000)]
        bulk = rt.index.ref.submit_in("bulk", IndexService.embed, texts, None)
        vec = rt.index.ref.call_in("query", IndexService.embed_query, "which port does the API use?")
        ready, _ = ray.wait([bulk.object_ref], timeout=0)
        assert vec.ndim == 1
        assert not ready  # the query came back while the bulk batch was still running
        assert Ref.result(bulk).shape == (len(texts), vec.shape[0])  # and the batch completes
    finally:
        rt.shutdown()
