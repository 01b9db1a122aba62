"""The sinusoidal exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import SAFETY, U32, angle_error, as_float64, join_pairs, underflow


def sinusoid_pair_tolerance(positions, frequencies: torch.Tensor) -> torch.Tensor:
    """[T, F]: sin(p w) or cos(p w) in float32 off by the angle's error plus sin/cos (two roundings,
    |value| <= 1) and the float32 result (one)."""
    return SAFETY * (angle_error(positions, frequencies) + 3 * U32) + underflow(torch.float32)


def sinusoidal_tolerance(positions, d_model: int, base: float, layout: str) -> torch.Tensor:
    """[T, d] for the rows at ``positions`` of a float32 table in ``layout`` (interleaved or concatenated)."""
    frequencies = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pair = sinusoid_pair_tolerance(positions, frequencies)
    return join_pairs(pair, pair, "interleaved" if layout == "interleaved" else "half")


def unit_circle_tolerance(positions, d_model: int, base: float) -> torch.Tensor:
    """[T]: sin^2 + cos^2 summed over the d/2 pairs of a row, when sin and cos may each be off by
    their tolerance (each pair by 2 (|sin| + |cos|) <= 2 sqrt(2) times it, first order). The pair
    tolerance is linear in |p|, so the sum is too: a |p| + b."""
    frequencies = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    slope = float(sinusoid_pair_tolerance([1.0], frequencies).sum() - sinusoid_pair_tolerance([0.0], frequencies).sum())
    offset = float(sinusoid_pair_tolerance([0.0], frequencies).sum())
    return 2 * math.sqrt(2) * (slope * as_float64(positions).abs() + offset)


def gram_tolerance(table: torch.Tensor, table_tol: torch.Tensor) -> torch.Tensor:
    """[T, T]: how far each <row_p, row_q> may be off when every entry may be off by table_tol."""
    magnitude = table.double().abs()
    return table_tol @ magnitude.T + magnitude @ table_tol.T + table_tol @ table_tol.T
