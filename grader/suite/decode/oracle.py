"""The decode exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import math

import torch

from grader.suite.attention.oracle import MINUS_INF
from grader.suite.rope.oracle import oracle_rope


def decode_visibility(real: torch.Tensor, window: int | None = None) -> torch.Tensor:
    """[B, T, T] bool: query t sees key s when s <= t, t - s < window (if any) and key s is real.

    ``real`` [B, T] is False for padding. This is the full causal forward's mask that incremental
    decoding must reproduce at every step (Mistral's sliding window counts the token itself).
    """
    slots = torch.arange(real.shape[-1])
    offset = slots[:, None] - slots[None, :]  # t - s
    seen = offset >= 0
    if window is not None:
        seen = seen & (offset < window)
    return seen[None] & real[:, None, :].bool()


def oracle_decode(
    q, k, v, visible, query_positions, key_positions, pairing: str = "half", base: float = 10000.0
) -> torch.Tensor:
    """The full forward of one RoPE attention layer, float64 [B, H, T, D]:
    out[b, h, t] = sum_s softmax_s(<R(p_t) q_t, R(p_s) k_s> / sqrt(D)) v_s over the visible keys s.

    visible [B, T, T] (query t, key s); query_positions [B, T]; key_positions [B, T], or [B, T, T]
    for the position key s is rotated by when query t reads it (to describe known mistakes). A query
    that sees no key gets 0.
    """
    q, k, v = q.double(), k.double(), v.double()
    batch, heads, length, head_dim = q.shape
    scores = torch.empty(batch, heads, length, length, dtype=torch.float64)
    for b in range(batch):
        rotated_q = oracle_rope(q[b], query_positions[b], base, pairing)  # [H, T, D]
        if key_positions.dim() == 2:
            scores[b] = rotated_q @ oracle_rope(k[b], key_positions[b], base, pairing).transpose(-2, -1)
            continue
        for t in range(length):  # each query reads the keys at positions of its own
            rotated_k = oracle_rope(k[b], key_positions[b, t], base, pairing)
            scores[b, :, t] = torch.einsum("hd,hsd->hs", rotated_q[:, t], rotated_k)
    seen = visible[:, None].expand_as(scores)
    scores = (scores / math.sqrt(head_dim)).masked_fill(~seen, MINUS_INF)
    top = scores.amax(-1, keepdim=True).clamp(min=-1e300)  # a row with no visible key stays finite
    weights = (scores - top).exp()
    total = weights.sum(-1, keepdim=True)
    weights = torch.where(total > 0, weights / total.clamp(min=1e-300), torch.zeros_like(weights))
    return weights @ v
