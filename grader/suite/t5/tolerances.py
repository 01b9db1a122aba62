"""The t5 exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import SAFETY, U32


def t5_edge(distance: torch.Tensor, exact: int, max_distance: int, span: int) -> torch.Tensor:
    """How close to a bucket edge ``E + ln(n / E) / ln(M / E) * (N - E)`` may land for float32 and
    float64 (or ln(n) - ln(E)) to disagree: the log's absolute error, u (|ln n| + |ln E| + 3), scaled
    by (N - E) / ln(M / E), and three roundings of the result."""
    distance = distance.double()
    ratio = math.log(max_distance / exact)
    position = (distance / exact).log() / ratio * span
    log_error = (distance.log().abs() + abs(math.log(exact)) + 3) * U32
    return SAFETY * (log_error * span / abs(ratio) + 3 * U32 * position.abs())
