"""The sinusoidal exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import torch


def sinusoid_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """omega_i = base^(-2i/d), i = 0 .. d/2 - 1 (Vaswani et al. 2017, section 3.5)."""
    return torch.tensor([base ** (-2.0 * i / d_model) for i in range(d_model // 2)], dtype=torch.float64)


SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")


def oracle_sinusoidal(
    positions, d_model: int, base: float = 10000.0, layout: str = "interleaved", frequencies: torch.Tensor | None = None
) -> torch.Tensor:
    """Rows of the table at ``positions``, float64.

    ``interleaved``: columns sin w0, cos w0, sin w1, cos w1, ...; ``concatenated``: all sin, then all cos.
    """
    omega = sinusoid_frequencies(d_model, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega[None, :]
    sin, cos = angles.sin(), angles.cos()
    if layout == "interleaved":
        return torch.stack([sin, cos], dim=-1).reshape(len(angles), -1)
    return torch.cat([sin, cos], dim=-1)
