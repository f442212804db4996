"""The MiniLM forward pass before the session-5 speed work, kept as the baseline to time against.

``actors.embedder.MiniLMEmbedder`` now packs tokens and works in place; this is the pass it
replaced (pad each batch to its longest text, float32 erf GELU with fresh temporaries,
einsum pooling), on the same loaded weights, so ``eval.perf.onnx_embed`` can report both in
one run. tests/actors/test_embedder.py pins the shipped pass to the vectors this one gave.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actors.embedder import _ERFC_COEFFS, MiniLMEmbedder, _check_texts, _l2_normalise


def _erf(x: np.ndarray) -> np.ndarray:
    z = np.abs(x, dtype=np.float32)
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
    acc *= t
    np.subtract(1.0, acc, out=acc)
    signed: np.ndarray = np.copysign(acc, x, out=acc).astype(x.dtype, copy=False)
    return signed


def _gelu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * x * (1.0 + _erf(x * np.float32(1.0 / np.sqrt(2.0))))
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: np.ndarray = centred / np.sqrt(var + np.float32(eps)) * weight + bias
    return out


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


class PaddedMiniLM(MiniLMEmbedder):
    """The same model and tokenizer, through the padded numpy pass of commit 12e4d59."""

    def __init__(self, batch_size: int = 32) -> None:
        super().__init__(batch_size=batch_size, backend="numpy")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        assert self._tokenizer is not None
        ids = [np.asarray(e.ids, dtype=np.int64) for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = len(ids[chunk[-1]])
            input_ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[chunk] = self._padded_forward(input_ids, mask)
        return out

    def _padded_forward(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self._weights
        assert w is not None
        batch, seq = input_ids.shape
        hidden = w.word.shape[1]
        heads = w.heads
        head_dim = hidden // heads
        x = w.word[input_ids] + w.position[:seq] + w.token_type[0]
        x = _layer_norm(x, w.ln_w, w.ln_b, w.eps)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for layer in w.layers:
            qkv = x @ layer.qkv_w + layer.qkv_b
            qkv = qkv.reshape(batch, seq, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            ctx = _softmax(scores) @ v
            ctx = ctx.transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = _layer_norm(ctx @ layer.out_w + layer.out_b + x, layer.ln1_w, layer.ln1_b, w.eps)
            up = _gelu(x @ layer.up_w + layer.up_b)
            x = _layer_norm(up @ layer.down_w + layer.down_b + x, layer.ln2_w, layer.ln2_b, w.eps)
        summed = np.einsum("bsh,bs->bh", x, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        return _l2_normalise(pooled)
