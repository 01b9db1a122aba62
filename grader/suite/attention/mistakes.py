"""Known mistakes in attention's formula, as the oracle fed with a changed reading of it, and the softmax
over the queries told by its sums.

``diagnose`` (``expect``) names the first one a wrong output reproduces; each is built lazily, only for
a submission that failed.
"""

from __future__ import annotations

import math

import torch

from grader.suite.attention.oracle import oracle_attention
from grader.suite.attention.tolerances import row_sum_tolerance
from grader.suite.expect import within


def scale_mistakes(q, k, v, bias=None) -> dict:
    """Known wrong formulas, as thunks: the oracle fed with a rescaled q, or softmax over queries."""
    d, dv = q.shape[-1], v.shape[-1]

    def over_queries():
        logits = q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)
        return torch.softmax(logits if bias is None else logits + bias.double(), dim=-2) @ v.double()

    return {
        "the logits are not divided by sqrt(D)": lambda: oracle_attention(q.double() * math.sqrt(d), k, v, bias)[0],
        "the logits are divided by D instead of sqrt(D)": lambda: oracle_attention(
            q.double() / math.sqrt(d), k, v, bias
        )[0],
        "the logits are divided by the square root of v's feature size, not of q's": lambda: oracle_attention(
            q.double() * math.sqrt(d / dv), k, v, bias
        )[0],
        "the softmax runs over the queries (dim=-2) instead of the keys (dim=-1)": over_queries,
    }


def rows_sum_to_one(weights: torch.Tensor, q, k, bias=None) -> bool:
    sums = weights.double().sum(-1)
    return within(sums, torch.ones_like(sums), row_sum_tolerance(q, k, bias).expand(sums.shape))


def rows_sum_over_queries(weights: torch.Tensor, q, k, bias=None) -> bool:
    """The columns sum to 1 and the rows do not: a softmax over the queries (dim=-2)."""
    if weights.shape[-2] < 2:
        return False
    columns = weights.double().sum(-2)
    margin = float(row_sum_tolerance(q, k, bias).max()) * 2  # the same roundings, over Tq terms
    return within(columns, torch.ones_like(columns), margin) and not rows_sum_to_one(weights, q, k, bias)


OVER_THE_KEYS = (
    "Each row of weights (one query) must sum to 1: the softmax runs over the keys, dim=-1. Yours "
    "sums to 1 down each column: the softmax runs over the queries (dim=-2)."
)
