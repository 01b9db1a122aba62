"""The rope exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import torch


def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base^(-2i/D) (Su et al., RoFormer, 2021)."""
    return torch.tensor([base ** (-2.0 * i / head_dim) for i in range(head_dim // 2)], dtype=torch.float64)


ROPE_PAIRINGS = ("interleaved", "half")  # the names poslab.encodings.rope uses


def oracle_rope(
    x: torch.Tensor,
    positions,
    base: float = 10000.0,
    pairing: str = "interleaved",
    frequencies: torch.Tensor | None = None,
    clockwise: bool = False,
) -> torch.Tensor:
    """x [..., T, D] rotated pair by pair, counter-clockwise by positions[t] * theta_i, float64.

    ``interleaved``: (x[2i], x[2i+1]); ``half``: (x[i], x[i + D/2]).
    """
    x = x.double()
    head_dim = x.shape[-1]
    theta = rope_frequencies(head_dim, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * theta[None, :]  # (T, D/2)
    cos, sin = angles.cos(), angles.sin()
    if clockwise:
        sin = -sin
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    new_a, new_b = a * cos - b * sin, a * sin + b * cos
    if pairing == "interleaved":
        return torch.stack([new_a, new_b], dim=-1).flatten(-2)
    return torch.cat([new_a, new_b], dim=-1)
