"""IndexService with a remote embedder: local-only texts are embedded locally, never sent."""

from __future__ import annotations

import json

import numpy as np
import pytest

from actors.index_actor import IndexService
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
