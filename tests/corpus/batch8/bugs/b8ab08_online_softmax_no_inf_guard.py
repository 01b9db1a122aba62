# attention bug: online softmax drops the guard for a running max of -inf (a fully masked first key block gives NaN) (base: b8ac06_online_softmax_blocks.py; one line changed)
from __future__ import annotations

import math

import torch

_BLOCK = 4  # keys per block


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    Tq, Tk, Dv = q.shape[-2], k.shape[-2], v.shape[-1]
    scale = 1.0 / math.sqrt(q.shape[-1])
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if bias is not None:
        bias = torch.broadcast_to(bias.to(q.dtype), (*lead, Tq, Tk))
    m = torch.full((*lead, Tq, 1), -math.inf, dtype=q.dtype, device=q.device)  # running max
    l = torch.zeros((*lead, Tq, 1), dtype=q.dtype, device=q.device)  # running sum of exp
    acc = torch.zeros((*lead, Tq, Dv), dtype=q.dtype, device=q.device)  # running sum of exp * v
    blocks = []
    for start in range(0, Tk, _BLOCK):
        stop = min(start + _BLOCK, Tk)
        s = (q @ k[..., start:stop, :].transpose(-2, -1)) * scale
        if bias is not None:
            s = s + bias[..., start:stop]
        blocks.append(s)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        m_safe = m_new
        p = torch.exp(s - m_safe)
        alpha = torch.exp(m - m_safe)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v[..., start:stop, :]
        m = m_new
    s_all = torch.cat(blocks, dim=-1) if blocks else torch.zeros((*lead, Tq, 0), dtype=q.dtype)
    m_safe = torch.where(m == -math.inf, torch.zeros_like(m), m)
    weights = torch.exp(s_all - m_safe) / l
    out = acc / l
    return out, weights
