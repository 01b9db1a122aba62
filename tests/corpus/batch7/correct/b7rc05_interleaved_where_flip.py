# style: interleaved pairing on the fly: partner by unflatten + flip, sign by torch.where on an even/odd mask, per-feature theta via exp(-(j - j % 2) * ln(base) / D), no pair reshape of the output
from __future__ import annotations

import math

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    seq_len, dim = x.shape[-2], x.shape[-1]
    cdt = torch.promote_types(x.dtype, torch.float32)
    feat = torch.arange(dim, device=x.device)
    even = feat % 2 == 0
    # feature 2i and 2i+1 both use theta_i = base ** (-2i / D) = exp(-(2i) * ln(base) / D)
    theta = torch.exp((feat - feat % 2).to(torch.float64) * (-math.log(base) / dim)).to(cdt)
    pos = torch.arange(seq_len, device=x.device, dtype=cdt) if positions is None else positions.to(x.device, cdt)
    ang = pos[:, None] * theta  # [T, D], already repeated per pair
    xc = x.to(cdt)
    partner = xc.unflatten(-1, (dim // 2, 2)).flip(-1).flatten(-2)  # (b, a) for each pair (a, b)
    sign = torch.where(even, torch.tensor(-1.0, dtype=cdt, device=x.device), torch.tensor(1.0, dtype=cdt, device=x.device))
    out = xc * torch.cos(ang) + partner * sign * torch.sin(ang)
    return out.to(x.dtype)
