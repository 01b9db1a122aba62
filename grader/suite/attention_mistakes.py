"""Known mistakes in attention's formula, as the oracle fed with a changed reading of it.

``diagnose`` (``expect``) names the first one a wrong output reproduces; each is built lazily, only for
a submission that failed.
"""

from __future__ import annotations

import math

import torch

from grader.suite.oracles import oracle_attention


def scale_mistakes(q, k, v, bias=None) -> dict:
    """Known wrong formulas, as thunks: the oracle fed with a rescaled q, or softmax over queries."""
    d, dv = q.shape[-1], v.shape[-1]

    def over_queries():
        logits = q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)
        return torch.softmax(logits if bias is None else logits + bias.double(), dim=-2) @ v.double()

    return {
        "the logits are not divided by sqrt(D)": lambda: oracle_attention(q.double() * math.sqrt(d), k, v, bias)[0],
        "the logits are divided by D instead of sqrt(D)": lambda: oracle_attention(q.double() / math.sqrt(d), k, v, bias)[0],
        "the logits are divided by the square root of v's feature size, not of q's":
            lambda: oracle_attention(q.double() * math.sqrt(d / dv), k, v, bias)[0],
        "the softmax runs over the queries (dim=-2) instead of the keys (dim=-1)": over_queries,
    }
