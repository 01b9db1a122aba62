# rope bug: (view instead of reshape to flatten the leading axes: raises on a transposed (non-contiguous) x); base: correct/b7rc03_einsum_rotation_matrices_f64.py
from __future__ import annotations

import math

import torch


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    shape = x.shape
    seq_len, dim, half = shape[-2], shape[-1], shape[-1] // 2
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    pos = positions.to(device=x.device, dtype=torch.float64)
    idx = torch.arange(half, device=x.device, dtype=torch.float64)
    theta = torch.exp(idx * (-2.0 * math.log(base) / dim))  # base ** (-2i / D)
    ang = pos[:, None] * theta[None, :]  # [T, D/2]
    c, s = torch.cos(ang), torch.sin(ang)
    rot = torch.stack((torch.stack((c, -s), dim=-1), torch.stack((s, c), dim=-1)), dim=-2)  # [T, D/2, 2, 2]
    pairs = x.to(torch.float64).view(math.prod(shape[:-2]), seq_len, half, 2)
    out = torch.einsum("tpij,btpj->btpi", rot, pairs)
    return out.reshape(shape).to(x.dtype)
