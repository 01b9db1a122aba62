"""The alibi exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import SAFETY, U32


def alibi_slope_relative_tolerance(n_heads: int) -> torch.Tensor:
    """[n_heads]: 2^(-8(h+1)/n) in float32 rounds its exponent (times ln 2 |exponent| <= 8 ln 2), the
    power and the cast; the geometric sequence start^(h+1) (Press et al.'s code, BLOOM's pow or a
    cumprod) multiplies h + 1 rounded factors."""
    heads = torch.arange(n_heads, dtype=torch.float64)
    return SAFETY * (heads + 1 + 8 * math.log(2) + 3) * U32


def alibi_bias_tolerance(slopes: torch.Tensor, seq_len: int) -> torch.Tensor:
    """[H, T, T]: -m (i - j) in float32, as one product (u m |i - j|) or as m j - m i (each product
    rounded: u m (i + j)); exactly 0 on the diagonal either way. The bias may compute its slopes
    apart from ``alibi_slopes`` (both within the slopes' tolerance of the exact ones): twice that,
    times |i - j|."""
    i = torch.arange(seq_len, dtype=torch.float64)
    reach = (i[:, None] + i[None, :])[None]
    distance = (i[:, None] - i[None, :]).abs()[None]
    m = slopes.double().abs()[:, None, None]
    slope_error = 2 * alibi_slope_relative_tolerance(len(slopes))[:, None, None]
    return SAFETY * U32 * m * reach + slope_error * m * distance
