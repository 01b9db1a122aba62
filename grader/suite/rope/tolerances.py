"""The rope exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import torch

from grader.suite.tolerances import (
    SAFETY,
    U32,
    angle_error,
    join_pairs,
    pair_halves,
    underflow,
    unit_roundoff,
    work_roundoff,
)


def rope_tolerance(x: torch.Tensor, positions, base: float, pairing: str) -> torch.Tensor:
    """Per entry of x: the angle's error times the pair's size (|a| + |b|), plus cos and sin rounded
    to float32 or to x's dtype (Hugging Face casts them to x's dtype), four roundings of the
    products and the sum in float32 or x's dtype, and the result in x's dtype."""
    head_dim = x.shape[-1]
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    u_x = unit_roundoff(x.dtype)
    u_work = work_roundoff(x.dtype)
    per_unit = angle_error(positions, theta) + 2 * (u_work + U32) + 4 * u_work + u_x  # [..., T, D/2]
    a, b = pair_halves(x.double().abs(), pairing)
    size = a + b
    tolerance = SAFETY * size * per_unit + underflow(x.dtype)
    return join_pairs(tolerance, tolerance, pairing)


def norm_relative_tolerance(dtype: torch.dtype) -> float:
    """A rotation keeps |x| up to cos and sin's roundings (a wrong angle still rotates), the
    products and sum (float32 or the dtype) and the result's rounding."""
    u_x, u_work = unit_roundoff(dtype), work_roundoff(dtype)
    return SAFETY * (2 * (u_work + U32) + 4 * u_work + u_x)


def dot_tolerance(a: torch.Tensor, a_tol: torch.Tensor, b: torch.Tensor, b_tol: torch.Tensor) -> torch.Tensor:
    """<a, b> over the last axis when each entry of a and b may be off by a_tol and b_tol (the
    products are taken in float64: their own rounding is negligible)."""
    return (a_tol * b.double().abs() + a.double().abs() * b_tol + a_tol * b_tol).sum(-1)
