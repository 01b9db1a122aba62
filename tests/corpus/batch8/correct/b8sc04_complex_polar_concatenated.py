# style: complex numbers: unit phasors e^{i p w} via torch.polar in complex128; imag parts | real parts -> concatenated layout
from __future__ import annotations

import math

import torch


def _frequencies(d_model: int, base: float) -> torch.Tensor:
    log_base = math.log(base)
    return torch.exp(torch.linspace(0.0, -log_base * (d_model - 2) / d_model, d_model // 2, dtype=torch.float64))


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    freqs = _frequencies(d_model, base)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * freqs[None, :]
    phasors = torch.polar(torch.ones_like(angles), angles)  # cos + i sin
    out = torch.empty(seq_len, d_model, dtype=torch.float32)
    out[:, : d_model // 2] = phasors.imag
    out[:, d_model // 2 :] = phasors.real
    return out
