"""Scaled dot-product attention with an optional additive bias.

    attention(q, k, v, bias=None) -> (out, weights)

    q     [B, H, Tq, D]    queries  (any leading axes work the same: [..., Tq, D])
    k     [B, H, Tk, D]    keys
    v     [B, H, Tk, Dv]   values
    bias  None, or a tensor that broadcasts to [B, H, Tq, Tk]

    weights = softmax(q k^T / sqrt(D) + bias)    softmax over the keys (the last axis)
    out     = weights v                           [B, H, Tq, Dv];  weights is [B, H, Tq, Tk]

Rules:
- D is the size of the last axis of q (and k), not of v.
- The bias is added to the scaled logits before the softmax; an entry of -inf gets weight exactly 0.
- Large logits must not overflow: softmax(s) = softmax(s - max s).
- out and weights keep q's dtype (float32 or float64) and device. No input is modified in place;
  non-contiguous inputs (e.g. transposed views) work.
- Without a bias the outputs move with the tokens and nothing else changes (equivariance, not
  invariance): for a permutation matrix P, out(PX, PX, PX) = P out(X, X, X), and the weights move
  on both axes, weights(PX, PX, PX) = P weights(X, X, X) P^T.
- A query whose keys are all -inf (a fully masked row) gets NaN weights: the softmax of all -inf
  is 0/0. Hugging Face masks with torch.finfo(dtype).min instead, so such a row stays finite
  (uniform weights); with -inf, as here, it comes out NaN. Such a row is not graded.
"""

from __future__ import annotations

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    raise NotImplementedError("attention is not implemented yet")
