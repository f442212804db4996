"""An embedder over the ``/v1/embeddings`` route of the configured OpenAI-compatible endpoint.

Selected with ``[embedder] name = "openai"`` (``DYNMEM_EMBEDDER=openai``); it uses the
``[model]`` endpoint (URL, key, timeouts, retries, circuit breaker) and
``[embedder] openai_model``. Texts are redacted before they are sent. The vector width is
``[embedder] dim``: it is asked for with ``dimensions`` and checked on every reply, since
the index is built at that width. An unreachable endpoint raises ``ModelUnavailable`` /
``ModelTimeout`` (the pipeline defers the work); a reply of the wrong width raises
``IndexError_``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actors.llm.endpoint import Endpoint
from engine.errors import IndexError_, InvalidInput
from engine.redact import redact
from engine.settings import EmbedderSettings, ModelSettings


class OpenAIEmbedder:
    """``Embedder`` calling an OpenAI-compatible embeddings endpoint in batches."""

    name = "openai"

    def __init__(self, embedder: EmbedderSettings, model: ModelSettings, endpoint: Endpoint | None = None) -> None:
        if not embedder.openai_model:
            raise InvalidInput("the openai embedder needs [embedder] openai_model (DYNMEM_EMBEDDER_OPENAI_MODEL)")
        self.model = embedder.openai_model
        self.dim = embedder.dim
        self.batch_size = max(1, embedder.batch_size)
        self.endpoint = endpoint or Endpoint(model)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``len(texts) x dim`` float32 array of L2-normalised rows."""
        if isinstance(texts, str) or any(not isinstance(t, str) for t in texts):
            raise InvalidInput("embed takes a list of strings")
        rows: list[list[float]] = []
        clean = [redact(t) if t.strip() else " " for t in texts]  # some servers refuse empty input
        for start in range(0, len(clean), self.batch_size):
            rows.extend(self.endpoint.embeddings(self.model, clean[start:start + self.batch_size], self.dim))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        widths = {len(r) for r in rows}
        if widths != {self.dim}:
            raise IndexError_(f"the embedding model {self.model} returned vectors of width {sorted(widths)}, "
                              f"not {self.dim}; set [embedder] dim to match")
        out = np.asarray(rows, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normed: np.ndarray = out / norms
        return normed
