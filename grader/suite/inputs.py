"""Seeded inputs for the hidden tests: the same seed gives the same tensor in every grading run."""

from __future__ import annotations

import torch


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, generator=generator(seed), dtype=torch.float64) * scale).to(dtype)


def permutation(n: int, seed: int) -> torch.Tensor:
    """A random order of ``range(n)`` that moves at least one index (a real permutation)."""
    gen = generator(seed)
    order = torch.randperm(n, generator=gen)
    while n > 1 and torch.equal(order, torch.arange(n)):
        order = torch.randperm(n, generator=gen)
    return order


def meta(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(*shape, dtype=dtype, device="meta")
