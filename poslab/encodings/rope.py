"""Rotary position embedding (RoPE).

    theta_i = base^(-2i/D),   i = 0 .. D/2 - 1
    (x[2i], x[2i+1]) at position p  ->  (a cos(p theta_i) - b sin(p theta_i),
                                         a sin(p theta_i) + b cos(p theta_i))

Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", 2021, eq. (34).
Rotations compose, so <rope(q, m), rope(k, n)> = <q, R_{n-m} k> depends only on m - n: the
relative offset enters attention without adding anything to the embeddings.

``apply_rope`` is the exercise's API (the default schedule). ``apply_rotary`` takes any inverse
frequencies, so that the context-extension schedules of ``poslab.encodings.rope_scaling`` run
through the same code.
"""

from __future__ import annotations

from typing import Literal

import torch

from poslab.encodings._checks import require, require_even

Pairing = Literal["interleaved", "half"]


def rope_inverse_frequencies(head_dim: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """``base^(-2i/D)`` as ``[D/2]``, computed in float64 and returned in ``dtype``."""
    require_even(head_dim, "head_dim")
    require(base > 1.0, f"base must be greater than 1, got {base}")
    return (base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)).to(dtype)


def _positions_for(x: torch.Tensor, positions: torch.Tensor | None) -> torch.Tensor:
    seq_len = x.shape[-2]
    if positions is None:
        return torch.arange(seq_len, device=x.device)
    require(
        positions.dim() == 1 and positions.shape[0] == seq_len,
        f"positions must be a 1-D tensor of length T={seq_len}, got shape {tuple(positions.shape)}",
    )
    return positions.to(x.device)


def apply_rotary(
    x: torch.Tensor,
    inv_freq: torch.Tensor,
    positions: torch.Tensor | None = None,
    pairing: Pairing = "interleaved",
) -> torch.Tensor:
    """Rotate the feature pairs of x ``[..., T, D]`` by ``positions[t] * inv_freq`` (``[D/2]``).

    ``pairing="interleaved"`` pairs ``(x[2i], x[2i+1])`` (RoFormer, Meta's LLaMA release);
    ``"half"`` pairs ``(x[i], x[i + D/2])`` (GPT-NeoX, Hugging Face's LLaMA). Angles and the
    rotation run in float64 when x is float64, else float32; the result has x's dtype.
    """
    require(x.dim() >= 2, f"x must be [..., T, D], got shape {tuple(x.shape)}")
    head_dim = x.shape[-1]
    require_even(head_dim, "the last dimension D of x")
    require(
        inv_freq.shape == (head_dim // 2,),
        f"inv_freq must have D/2 = {head_dim // 2} entries, got shape {tuple(inv_freq.shape)}",
    )
    require(pairing in ("interleaved", "half"), f"pairing must be 'interleaved' or 'half', got {pairing!r}")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = _positions_for(x, positions).to(torch.float64)
    # Angles in float64: p * theta loses ~p * 6e-8 rad in float32, a visible error by p ~ 1e5.
    angles = torch.outer(pos, inv_freq.to(device=x.device, dtype=torch.float64))  # (T, D/2)
    cos, sin = angles.cos().to(work), angles.sin().to(work)
    xw = x.to(work)
    if pairing == "interleaved":
        a, b = xw[..., 0::2], xw[..., 1::2]  # each (..., T, D/2)
    else:
        a, b = xw[..., : head_dim // 2], xw[..., head_dim // 2 :]
    rotated_a, rotated_b = a * cos - b * sin, a * sin + b * cos
    if pairing == "interleaved":
        out = torch.stack([rotated_a, rotated_b], dim=-1).flatten(-2)  # (..., T, D/2, 2) -> (..., T, D)
    else:
        out = torch.cat([rotated_a, rotated_b], dim=-1)  # (..., T, D)
    return out.to(x.dtype)


def apply_rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """RoPE with the paper's frequencies: x ``[..., T, D]``, positions ``[T]`` (default ``arange(T)``)."""
    require(x.dim() >= 2, f"x must be [..., T, D], got shape {tuple(x.shape)}")
    if positions is not None:
        require(
            not positions.is_floating_point() and not positions.is_complex(),
            f"positions must be an integer tensor, got {positions.dtype}",
        )
    # float64 frequencies: float64 inputs get float64 accuracy, the others lose nothing.
    return apply_rotary(x, rope_inverse_frequencies(x.shape[-1], base, torch.float64), positions)
