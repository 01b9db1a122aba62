# attention bug: subtracts the global max of the whole tensor instead of each row's max (base: b8ac05_inplace_on_clones.py; one line changed)
from __future__ import annotations

import math

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    qs = q.clone()
    qs.mul_(1.0 / math.sqrt(q.shape[-1]))  # scale the query copy, never the caller's q
    scores = qs @ k.transpose(-1, -2)  # a fresh tensor: safe to modify in place
    if bias is not None:
        scores.add_(bias.to(scores.dtype))
    scores.sub_(scores.max().detach())  # the shift has zero gradient
    scores.exp_()
    weights = scores / scores.sum(dim=-1, keepdim=True)  # out of place: exp_'s result is saved for autograd
    out = weights @ v
    return out, weights
