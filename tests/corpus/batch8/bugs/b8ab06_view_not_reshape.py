# attention bug: .view instead of .reshape when flattening q's leading axes (non-contiguous q fails) (base: b8ac03_bmm_flatten_baddbmm.py; one line changed)
from __future__ import annotations

import math

import torch


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(out, weights)``: out [..., Tq, Dv], weights [..., Tq, Tk] (see the module docstring)."""
    Tq, D = q.shape[-2], q.shape[-1]
    Tk, Dv = v.shape[-2], v.shape[-1]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    N = math.prod(lead)
    scale = D ** -0.5
    q3 = q.expand(*lead, Tq, D).view(N, Tq, D)
    k3 = k.expand(*lead, Tk, D).reshape(N, Tk, D)
    v3 = v.expand(*lead, Tk, Dv).reshape(N, Tk, Dv)
    if bias is None:
        scores = torch.bmm(q3, k3.transpose(1, 2)) * scale
    else:
        bias3 = bias.to(dtype=q.dtype, device=q.device).expand(*lead, Tq, Tk).reshape(N, Tq, Tk)
        scores = torch.baddbmm(bias3, q3, k3.transpose(1, 2), alpha=scale)
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, v3)
    return out.reshape(*lead, Tq, Dv), weights.reshape(*lead, Tq, Tk)
