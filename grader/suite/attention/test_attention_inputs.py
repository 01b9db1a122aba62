"""The attention exercise's hidden test of inputs left untouched and views accepted."""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import VISIBLE, graded
from grader.suite.attention.domains import AttentionCase, BiasKind, attention_cases
from grader.suite.attention.oracle import MINUS_INF
from grader.suite.attention.test_attention import (
    _drawn_expected,
    _expected,
    _pair,
    test_bias_broadcasts_and_enters_before_softmax,
    test_values_for_drawn_shapes,
)
from grader.suite.attention.tolerances import attention_tolerances
from grader.suite.draw import answer, expect_inputs_left
from grader.suite.expect import (
    expect_untouched,
    within,
)
from grader.suite.inputs import randn
from grader.suite.layouts import expect_layouts_accepted, for_each_layout, laid_arguments

VIEWS = (
    "attention must accept its inputs in every layout models pass them in (q.transpose(1, 2) of a [B, T, H, D] "
    "projection, a slice of a fused qkv projection, k broadcast over the heads, a permuted tensor) and give "
    "the same result: use matmul or reshape, not view, and index rather than assume a layout."
)


@graded(points=1, family="inputs", visibility=VISIBLE)
@for_each_layout((attention_cases(bias=tuple(BiasKind)), AttentionCase.tensor_specs, ("k",)))
def test_inputs_untouched_and_views_accepted(student, laid):
    """attention leaves q, k, v and bias unchanged and accepts them in any layout: transposed, sliced, broadcast.

    Unchanged in float32 and float64 alike: a write into what ``.to(dtype)`` returned reaches a caller's tensor
    of that dtype only."""
    for dtype in (torch.float32, torch.float64):
        q, k, v = (
            randn(*shape, seed=seed, dtype=dtype)
            for shape, seed in (((1, 2, 5, 8), 91), ((1, 2, 6, 8), 92), ((1, 2, 6, 3), 93))
        )
        bias = torch.zeros(5, 6, dtype=dtype)
        bias[:, -1] = MINUS_INF
        expect_untouched(
            answer(student, ("untouched", dtype), "attention", q, k, v, bias=bias).inputs_after,
            (q, k, v, bias),
            "attention",
            ("q", "k", "v", "bias"),
        )
    for case in test_values_for_drawn_shapes.prepare():  # the drawn value tests' calls, shared: any size and dtype
        q, k, v = _drawn_expected(case)[:3]
        expect_inputs_left(student, ("values", case), "attention", (q, k, v), {"bias": None}, {"q": q, "k": k, "v": v})
    for case in test_bias_broadcasts_and_enters_before_softmax.prepare():
        q, k, v, bias = case.tensors()
        expect_inputs_left(
            student,
            ("bias", case, "bias"),
            "attention",
            (q, k, v),
            {"bias": bias},
            {"q": q, "k": k, "v": v, "bias": bias},
        )

    def call(given):
        return tuple(given[:3]), {"bias": given[3] if len(given) > 3 else None}

    def judge(output, values):
        (out, weights), (expected_out, expected_weights, out_tol, weights_tol) = _pair(output), _laid_expected(laid)
        return within(out, expected_out, out_tol) and within(weights, expected_weights, weights_tol)

    def same(output, own, values):  # the model around the submission's own weights: its values are not judged here
        (out, weights), (own_out, own_weights) = _pair(output), _pair(own)
        out_tol, weights_tol = attention_tolerances(*values, *([None] * (4 - len(values))), own_weights)
        return within(out, own_out, 2 * out_tol) and within(weights, own_weights, 2 * weights_tol)

    expect_layouts_accepted(student, laid, "attention", lambda: _laid_tensors(laid), call, judge, same, VIEWS)


def _laid_tensors(laid) -> list[torch.Tensor]:
    return [tensor for tensor in laid.case.tensors() if tensor is not None]


@lru_cache(maxsize=16)
def _laid_expected(laid) -> tuple[torch.Tensor, ...]:  # the oracle and tolerances for a laid case, once per process
    values = laid_arguments(laid, lambda: _laid_tensors(laid))[0]
    return _expected(*values, *([None] * (4 - len(values))))
