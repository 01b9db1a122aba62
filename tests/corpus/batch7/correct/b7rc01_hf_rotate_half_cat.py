# style: Hugging Face / GPT-NeoX "rotate_half" (half pairing), inv_freq = 1 / base**(arange(0, D, 2) / D), torch.outer + torch.cat, float32 angles (float64 for float64 x)
from __future__ import annotations

import torch


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """x [..., T, D] with every feature pair rotated by position * theta_i (see the module docstring)."""
    seq_len, dim = x.shape[-2], x.shape[-1]
    cdt = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device, dtype=torch.int64).to(cdt) / dim))
    freqs = torch.outer(positions.to(device=x.device, dtype=cdt), inv_freq)  # [T, D/2]
    emb = torch.cat((freqs, freqs), dim=-1)  # [T, D]
    cos, sin = emb.cos(), emb.sin()
    xc = x.to(cdt)
    return (xc * cos + _rotate_half(xc) * sin).to(x.dtype)
