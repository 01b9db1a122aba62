"""The lab's toy models: deterministic word embeddings, one head of self-attention and a small RNN.

Shapes: T tokens, D features. Embeddings and weights are pure functions of (seed, word) and seed;
nothing is downloaded.
"""

from __future__ import annotations

import zlib

import torch

from poslab.encodings import attention

TOLERANCE = 1e-5  # float32 rounding is ~1e-7 here; anything above 1e-5 is a real difference
RNN_HIDDEN = 8


def word_embedding(word: str, d_model: int, seed: int) -> torch.Tensor:
    """(D,) standard normal, a pure function of (seed, word): the same word always gets the same row."""
    generator = torch.Generator().manual_seed(zlib.crc32(f"{seed}:{word}".encode()))
    return torch.randn(d_model, generator=generator)


def embed(tokens: tuple[str, ...], d_model: int, seed: int) -> torch.Tensor:
    """(T, D): one row per token."""
    return torch.stack([word_embedding(token, d_model, seed) for token in tokens])


def _projections(d_model: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """W_q, W_k, W_v, each (D, D), scaled so logits stay O(1)."""
    generator = torch.Generator().manual_seed(seed)
    weights = torch.randn(3, d_model, d_model, generator=generator) / d_model**0.5
    return weights[0], weights[1], weights[2]


def self_attention(x: torch.Tensor, seed: int, causal: bool = False) -> torch.Tensor:
    """(T, D) -> (T, D): one head of attention with fixed random projections."""
    w_q, w_k, w_v = _projections(x.shape[-1], seed)
    size = x.shape[0]
    # (T, T): -inf above the diagonal, so query i only sees keys j <= i
    mask = torch.full((size, size), float("-inf")).triu(1) if causal else None
    out, _ = attention(x @ w_q, x @ w_k, x @ w_v, bias=mask)
    return out


def rnn_final_state(x: torch.Tensor, seed: int) -> torch.Tensor:
    """(T, D) -> (RNN_HIDDEN,): h_t = tanh(W_x x_t + W_h h_{t-1}), fixed random weights."""
    generator = torch.Generator().manual_seed(seed + 1)
    w_x = torch.randn(RNN_HIDDEN, x.shape[-1], generator=generator) / x.shape[-1] ** 0.5
    w_h = torch.randn(RNN_HIDDEN, RNN_HIDDEN, generator=generator) * 0.9 / RNN_HIDDEN**0.5
    hidden = torch.zeros(RNN_HIDDEN)
    for x_t in x:  # the recurrence: step t sees only the summary of steps < t
        hidden = torch.tanh(w_x @ x_t + w_h @ hidden)
    return hidden
