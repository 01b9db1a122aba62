"""The learned exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import torch

from grader.suite.tolerances import SAFETY, underflow, unit_roundoff


def sum_tolerance(x: torch.Tensor, y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x + y computed in ``dtype``: one rounding of the sum."""
    return SAFETY * unit_roundoff(dtype) * (x.double().abs() + y.double().abs()) + underflow(dtype)


def batch_sum_tolerance(upstream: torch.Tensor) -> torch.Tensor:
    """upstream [B, T, D] summed over the batch in its dtype, in any order: B - 1 roundings of partial sums."""
    batch = upstream.shape[0]
    return SAFETY * max(batch - 1, 1) * unit_roundoff(upstream.dtype) * upstream.double().abs().sum(0) + underflow(
        upstream.dtype
    )
