"""Permutations as the lessons use them: an order of token indices and its matrix.

An order ``(2, 0, 3, 1)`` means "new row r is old row order[r]", so ``P @ X`` with
``P = permutation_matrix(order)`` equals ``X[order]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def check_order(order: Sequence[int], n: int) -> tuple[int, ...]:
    """Return ``order`` as a tuple, or raise ``ValueError`` saying why it is not a permutation of 0..n-1."""
    order = tuple(int(i) for i in order)
    if len(order) != n:
        raise ValueError(f"a permutation of {n} tokens needs {n} positions, got {len(order)}")
    if sorted(order) != list(range(n)):
        missing = sorted(set(range(n)) - set(order))
        raise ValueError(
            f"each of 0..{n - 1} must appear exactly once; missing: {missing or 'none'}, "
            f"repeated: {sorted({i for i in order if order.count(i) > 1})}"
        )
    return order


def permutation_matrix(order: Sequence[int]) -> torch.Tensor:
    """The ``[n, n]`` float32 matrix P with ``P @ X == X[order]``."""
    order = check_order(order, len(order))
    return torch.eye(len(order))[list(order)]
