# attention bug: scales the logits by 1/sqrt(Dv) (value width) instead of 1/sqrt(D) (base: b8ac01_matmul_softmax.py; one line changed)
from __future__ import annotations

import math

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    D = v.shape[-1]
    scale = 1.0 / math.sqrt(D)
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if bias is not None:
        scores = scores + bias.to(dtype=q.dtype, device=q.device)
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
