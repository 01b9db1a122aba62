# rope bug: (frequency table built on the default (CPU) device, not x's device); base: correct/b7rc02_meta_complex_polar.py
from __future__ import annotations

import torch


def _freqs_cis(positions: torch.Tensor, dim: int, base: float, real_dtype: torch.dtype) -> torch.Tensor:
    exponents = torch.arange(0, dim, 2, dtype=real_dtype)[: dim // 2] / dim
    freqs = 1.0 / (base**exponents)
    angles = positions.to(real_dtype)[:, None] * freqs[None, :]
    return torch.polar(torch.ones_like(angles), angles)  # [T, D/2] complex


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    *lead, seq_len, dim = x.shape
    real_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    freqs_cis = _freqs_cis(positions.to(x.device), dim, base, real_dtype)
    # a fresh contiguous buffer: view_as_complex needs stride 1 pairs AND an even storage offset
    pairs = x.to(real_dtype).clone(memory_format=torch.contiguous_format).reshape(*lead, seq_len, dim // 2, 2)
    rotated = torch.view_as_complex(pairs) * freqs_cis
    return torch.view_as_real(rotated).flatten(-2).to(x.dtype)
