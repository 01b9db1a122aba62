"""The learned exercise's tolerances, from the error model (grader.suite.tolerances)."""

from __future__ import annotations

import torch

from grader.suite.tolerances import SAFETY, underflow, unit_roundoff


def sum_tolerance(x: torch.Tensor, y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x + y computed in ``dtype``: one rounding of the sum."""
    return SAFETY * unit_roundoff(dtype) * (x.double().abs() + y.double().abs()) + underflow(dtype)
