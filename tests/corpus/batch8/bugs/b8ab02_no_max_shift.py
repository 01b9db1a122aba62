# attention bug: softmax without subtracting the row max (exp overflows for large logits) (base: b8ac02_einsum_float64.py; one line changed)
from __future__ import annotations

import math

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    D = q.shape[-1]
    q64, k64, v64 = q.to(torch.float64), k.to(torch.float64), v.to(torch.float64)
    s = torch.einsum("...qd,...kd->...qk", q64, k64) / math.sqrt(D)
    if bias is not None:
        s = s + bias.to(device=q.device, dtype=torch.float64)
    m = s.amax(dim=-1, keepdim=True)
    e = torch.exp(s)
    w = e / e.sum(dim=-1, keepdim=True)
    out = torch.einsum("...qk,...kd->...qd", w, v64)
    return out.to(q.dtype), w.to(q.dtype)
