from __future__ import annotations

import numpy as np

from actors.index_actor import IndexService, normalise_query
from engine.settings import EmbedderSettings


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
    svc = IndexService("hash", settings=EmbedderSettings(name="hash", query_cache_size=cache))
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
