"""Scaled dot-product attention, with an optional additive bias.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(D) + bias) V

Vaswani et al., "Attention Is All You Need", NeurIPS 2017, eq. (1). The additive ``bias`` is where
a causal mask (``-inf`` above the diagonal) or ALiBi's linear distance penalty enters.

Without positions, attention is permutation-equivariant: for a permutation matrix P,
``attention(PX, PX, PX) == P attention(X, X, X)``. That is the whole reason this course exists.
"""

from __future__ import annotations

import math

import torch

from poslab.encodings._checks import require


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether a tensor of ``shape`` broadcasts to exactly ``target``.

    Plain Python on purpose: ``torch.broadcast_shapes`` imports sympy on first use (about 2 s).
    """
    return len(shape) <= len(target) and all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)`` for q ``[..., Tq, D]``, k ``[..., Tk, D]``, v ``[..., Tk, Dv]``.

    ``bias`` broadcasts to ``[..., Tq, Tk]`` and is added to the scaled logits before the softmax
    over keys; a ``-inf`` entry gets weight exactly 0. ``out`` is ``[..., Tq, Dv]``, ``weights`` is
    ``[..., Tq, Tk]``; both keep q's dtype and device. No input is modified.
    """
    require(q.dim() >= 2 and k.dim() >= 2 and v.dim() >= 2, "q, k and v need at least two dimensions [..., T, D]")
    require(q.shape[-1] == k.shape[-1], f"q and k need the same feature size D, got {q.shape[-1]} and {k.shape[-1]}")
    require(k.shape[-2] == v.shape[-2], f"k and v need the same number of keys Tk, got {k.shape[-2]} and {v.shape[-2]}")
    # (..., Tq, D) @ (..., D, Tk) -> (..., Tq, Tk)
    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        require(
            _broadcasts_to(tuple(bias.shape), tuple(logits.shape)),
            f"bias of shape {tuple(bias.shape)} does not broadcast to the logits' shape {tuple(logits.shape)}",
        )
        # Cast so that a float32 bias cannot promote half-precision logits.
        logits = logits + bias.to(dtype=logits.dtype, device=logits.device)
    weights = torch.softmax(logits, dim=-1)
    # (..., Tq, Tk) @ (..., Tk, Dv) -> (..., Tq, Dv)
    return weights @ v, weights
