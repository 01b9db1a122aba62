# rope bug: (positions argument ignored: always 0..T-1); base: correct/b7rc04_neox_clone_inplace.py
from __future__ import annotations

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    seq_len, dim = x.shape[-2:]
    half = dim // 2
    cdt = torch.promote_types(x.dtype, torch.float32)
    pos = torch.arange(seq_len, device=x.device)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=x.device),
                      -torch.arange(half, dtype=torch.float64, device=x.device) * 2.0 / dim).to(cdt)
    ang = pos.to(cdt).unsqueeze(-1) * theta  # [T, D/2]
    cos, sin = ang.cos(), ang.sin()
    out = x.to(cdt, copy=True)  # our own buffer: x itself is never written
    a = out[..., :half].clone()
    b = out[..., half:].clone()
    out[..., :half].mul_(cos).addcmul_(b, sin, value=-1.0)
    out[..., half:].mul_(cos).addcmul_(a, sin)
    return out.to(x.dtype)
