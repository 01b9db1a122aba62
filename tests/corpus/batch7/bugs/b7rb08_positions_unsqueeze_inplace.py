# rope bug: (unsqueeze_ (in place) on the caller's positions: their shape becomes [T, 1]); base: correct/b7rc06_half_matmul_permutation_cached_noncontig.py
from __future__ import annotations

import torch

_INV_FREQ: dict = {}


def _inv_freq(dim: int, base: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    key = (dim, float(base), dtype, str(device))
    if key not in _INV_FREQ:
        exps = torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
        _INV_FREQ[key] = torch.pow(float(base), -exps).to(dtype)
    return _INV_FREQ[key]


def _signed_permutation(dim: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """P with P @ v = cat(-v[D/2:], v[:D/2]) for a column vector v."""
    half = dim // 2
    p = torch.zeros(dim, dim, dtype=dtype, device=device)
    i = torch.arange(half, device=device)
    p[i, i + half] = -1.0
    p[i + half, i] = 1.0
    return p


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    seq_len, dim = x.shape[-2], x.shape[-1]
    cdt = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    ang = positions.unsqueeze_(-1).to(x.device, cdt) * _inv_freq(dim, base, cdt, x.device)  # [T, D/2]
    ang_t = torch.cat((ang, ang), dim=-1).transpose(0, 1)  # [D, T]
    xt = x.transpose(-1, -2).to(cdt)  # [..., D, T]
    out_t = xt * ang_t.cos() + (_signed_permutation(dim, cdt, x.device) @ xt) * ang_t.sin()
    return out_t.transpose(-1, -2).to(x.dtype)
