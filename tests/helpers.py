"""Small tools for the tests: permutation matrices and float32 error bounds."""

from __future__ import annotations

import torch

FLOAT32_EPS = 2.0**-24  # unit roundoff of float32
FLOAT16_EPS = 2.0**-11


def random_permutation_matrix(n: int, generator: torch.Generator) -> torch.Tensor:
    order = torch.randperm(n, generator=generator)
    while n > 1 and torch.equal(order, torch.arange(n)):
        order = torch.randperm(n, generator=generator)
    return torch.eye(n)[order]
