"""The attention exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import math

import torch

MINUS_INF = float("-inf")


def oracle_attention(q, k, v, bias=None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(D) + bias) v in float64 (Vaswani et al. 2017, eq. 1)."""
    q, k, v = q.double(), k.double(), v.double()
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.double()
    # Subtracting the row maximum keeps exp finite; masked (-inf) entries become exactly 0.
    top = scores.amax(-1, keepdim=True)
    weights = (scores - top).exp()
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights
