"""Hidden tests of ``attention(q, k, v, bias=None) -> (out, weights)``: 20 points.

Values are compared with a float64 oracle of softmax(q k^T / sqrt(D) + bias) v; the properties
(permutation equivariance, -inf masking, broadcasting) are checked on the student's own outputs.
float32 attention on inputs of size ~1 is accurate to ~1e-6; we allow 2e-5.
"""

from __future__ import annotations

import math

import torch

from grader.student import Transposed
from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.expect import (
    as_info,
    as_pair,
    as_tensor,
    diagnose,
    expect,
    expect_dtype,
    expect_finite,
    expect_shape,
    expect_untouched,
    within,
)
from grader.suite.inputs import meta, permutation, randn
from grader.suite.oracles import MINUS_INF, oracle_attention

ATOL = 2e-5
SPEC = "attention(q, k, v, bias) must equal softmax(q k^T / sqrt(D) + bias) v, with D the size of q's last axis."


def _outputs(student, q, k, v, bias=None, strict: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    out, weights = as_pair(student.attention(q, k, v, bias=bias), "attention")
    return as_tensor(out, "attention's out", strict), as_tensor(weights, "attention's weights", strict)


def _rows_sum_over_queries(weights: torch.Tensor) -> bool:
    """The columns sum to 1 and the rows do not: a softmax over the queries (dim=-2)."""
    ones = torch.ones(weights.shape[-1], dtype=torch.float64)
    return (weights.shape[-2] > 1 and within(weights.double().sum(-2), ones.expand(weights.sum(-2).shape), 1e-5)
            and not within(weights.double().sum(-1), torch.ones(weights.sum(-1).shape, dtype=torch.float64), 1e-5))


OVER_THE_KEYS = ("Each row of weights (one query) must sum to 1: the softmax runs over the keys, dim=-1. Yours "
                 "sums to 1 down each column: the softmax runs over the queries (dim=-2).")


def _scale_mistakes(q, k, v, bias=None) -> dict:
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


def _expect_matches_formula(student, q, k, v, bias=None, atol=ATOL) -> None:
    out, weights = _outputs(student, q, k, v, bias)
    expected_out, expected_weights = oracle_attention(q, k, v, bias)
    expect_shape(out, expected_out.shape, "out")
    expect_shape(weights, expected_weights.shape, "weights")
    if not (within(out, expected_out, atol) and within(weights, expected_weights, atol)):
        raise AssertionError(SPEC + diagnose(out, _scale_mistakes(q, k, v, bias), atol))


@graded(points=2, family="shape", visibility=VISIBLE)
def test_output_shapes(student):
    """attention returns (out [..., Tq, Dv], weights [..., Tq, Tk])."""
    q, k, v = randn(2, 3, 4, 8, seed=1), randn(2, 3, 6, 8, seed=2), randn(2, 3, 6, 5, seed=3)
    out, weights = _outputs(student, q, k, v, strict=True)  # the type test
    expect_shape(out, (2, 3, 4, 5), "out (for q [B, H, Tq, D], k [B, H, Tk, D], v [B, H, Tk, Dv])")
    expect_shape(weights, (2, 3, 4, 6), "weights (for q [B, H, Tq, D] and k [B, H, Tk, D])")
    out, weights = _outputs(student, q[0, 0], k[0, 0], v[0, 0])
    expect_shape(out, (4, 5), "out for 2-D inputs [T, D]")
    expect_shape(weights, (4, 6), "weights for 2-D inputs [T, D]")


@graded(points=3, family="values", visibility=VISIBLE)
def test_values_match_the_formula(student):
    """out and weights equal softmax(q k^T / sqrt(D)) v and its softmax."""
    q, k, v = randn(2, 3, 4, 8, seed=11), randn(2, 3, 6, 8, seed=12), randn(2, 3, 6, 5, seed=13)
    _expect_matches_formula(student, q, k, v)
    _, weights = _outputs(student, q, k, v)
    expect(within(weights.sum(-1), torch.ones(2, 3, 4), 1e-5),
           OVER_THE_KEYS if _rows_sum_over_queries(weights) else
           "Each row of weights (one query) must sum to 1: the softmax runs over the keys, dim=-1.")


@graded(points=3, family="values", visibility=HIDDEN)
def test_values_for_several_shapes(student):
    """attention matches the formula for 2-D, 3-D and 4-D inputs, with Tq != Tk and Dv != D."""
    shapes = [((7, 16), (3, 16), (3, 2)), ((3, 5, 12), (3, 9, 12), (3, 9, 7)),
              ((1, 2, 1, 4), (1, 2, 10, 4), (1, 2, 10, 3))]
    for index, (q_shape, k_shape, v_shape) in enumerate(shapes):
        q, k, v = (randn(*shape, seed=100 + 3 * index + j) for j, shape in enumerate((q_shape, k_shape, v_shape)))
        _expect_matches_formula(student, q, k, v)


@graded(points=1, family="stability", visibility=VISIBLE)
def test_large_logits_stay_finite(student):
    """Large scores do not overflow: softmax(s) = softmax(s - max s)."""
    q, k, v = randn(1, 2, 6, 16, seed=21, scale=30.0), randn(1, 2, 6, 16, seed=22, scale=30.0), randn(1, 2, 6, 4, seed=23)
    out, weights = _outputs(student, q, k, v)
    expect(bool(torch.isfinite(out).all() and torch.isfinite(weights).all()),
           "With large scores (|q.k| / sqrt(D) in the hundreds) your attention returns NaN or inf: "
           "exp overflows. Use torch.softmax, or subtract each row's maximum before exp.")
    expect(not _rows_sum_over_queries(weights), OVER_THE_KEYS)
    expect(within(weights.sum(-1), torch.ones(1, 2, 6), 1e-5),
           "With large scores the rows of weights no longer sum to 1: is the softmax clamped or approximated?")


def _self_attention(student, x, bias=None) -> torch.Tensor:
    return _outputs(student, x, x, x, bias)[0]


@graded(points=2, family="equivariance", visibility=VISIBLE)
def test_permutation_equivariance(student):
    """Without positions, attention is permutation-equivariant: attn(PX) = P attn(X)."""
    x = randn(2, 2, 6, 8, seed=31)  # (B, H, T, D)
    order = permutation(6, seed=32)
    moved, reference = _self_attention(student, x[..., order, :]), _self_attention(student, x)
    expect(within(moved, reference[..., order, :], ATOL),
           "Shuffling the tokens must shuffle the outputs the same way (attn(PX) = P attn(X)). "
           "Yours mixes positions in: is there a mask, a position or an order-dependent step?")


@graded(points=2, family="equivariance", visibility=HIDDEN)
def test_permutation_equivariance_batched(student):
    """attn(PX) = P attn(X) for batched, multi-head inputs, each batch with its own permutation."""
    for seed, shape in ((41, (3, 2, 7, 4)), (42, (2, 1, 5, 16)), (43, (1, 1, 2, 3))):
        x = randn(*shape, seed=seed)
        t = shape[-2]
        orders = torch.stack([permutation(t, seed=seed * 10 + b) for b in range(shape[0])])  # (B, T)
        index = orders.view(shape[0], 1, t, 1).expand(*shape)
        moved, reference = _self_attention(student, x.gather(-2, index)), _self_attention(student, x)
        expect(within(moved, reference.gather(-2, index), ATOL),
               "With a batch (and heads), shuffling each sequence's tokens must shuffle its outputs the "
               "same way. Check that the batch and head axes stay separate (matmul over the last two axes).")


@graded(points=1, family="equivariance", visibility=HIDDEN)
def test_mean_pooled_output_is_permutation_invariant(student):
    """Mean-pooling the output over tokens gives the same vector in any token order."""
    x = randn(2, 1, 9, 12, seed=51)
    order = permutation(9, seed=52)
    pooled = _self_attention(student, x).mean(-2)
    expect(within(_self_attention(student, x[:, :, order]).mean(-2), pooled, ATOL),
           "The mean over tokens of attention's output must not depend on the token order: "
           "without positions, attention sees a set, not a sequence.")


def _reweighted(weights: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """softmax(s + b) = softmax(s) * exp(b), renormalised: what a bias does, whatever the logits s."""
    raw = weights.double() * bias.double().exp()
    return raw / raw.sum(-1, keepdim=True)


BIAS_BEFORE_SOFTMAX = ("The bias must be added to the scaled logits before the softmax, broadcasting like any "
                       "tensor sum (e.g. [Tq, Tk] or [H, 1, Tk] over [B, H, Tq, Tk]): then weights with a bias "
                       "b are the weights without it times exp(b), renormalised.")


@graded(points=2, family="bias", visibility=VISIBLE)
def test_minus_infinity_bias_gets_zero_weight(student):
    """A -inf bias entry gets weight exactly 0, and each row still sums to 1."""
    q, k, v = randn(2, 1, 5, 4, seed=61), randn(2, 1, 5, 4, seed=62), randn(2, 1, 5, 3, seed=63)
    bias = torch.zeros(5, 5)
    bias[:, 3] = MINUS_INF
    bias[0, 1:] = MINUS_INF  # the first query sees only the first key
    _, plain = _outputs(student, q, k, v)
    out, weights = _outputs(student, q, k, v, bias)
    expect_shape(weights, (2, 1, 5, 5), "weights")
    expect(not _rows_sum_over_queries(plain), OVER_THE_KEYS)
    expect(bool((weights[..., bias == MINUS_INF] == 0).all()),
           "Where the bias is -inf the weight must be exactly 0: add the bias to the scaled logits "
           "before the softmax (a 0 or a large finite number does not mask).")
    expect(within(weights.sum(-1), torch.ones(2, 1, 5), 1e-5),
           "With a mask, each row of weights must still sum to 1: mask before the softmax, not after.")
    expect(within(weights, _reweighted(plain, bias), ATOL), BIAS_BEFORE_SOFTMAX)


@graded(points=2, family="bias", visibility=HIDDEN)
def test_bias_broadcasts_and_enters_before_softmax(student):
    """A finite bias is added to the scaled logits before the softmax and broadcasts over batch and heads."""
    q, k, v = randn(2, 3, 4, 6, seed=71), randn(2, 3, 5, 6, seed=72), randn(2, 3, 5, 2, seed=73)
    _, plain = _outputs(student, q, k, v)
    for seed, bias_shape in ((74, (4, 5)), (75, (3, 1, 5)), (76, (2, 1, 4, 5)), (77, (2, 3, 4, 5))):
        bias = randn(*bias_shape, seed=seed, scale=2.0)
        out, weights = _outputs(student, q, k, v, bias)
        expect_shape(out, (2, 3, 4, 2), "out (with a bias that broadcasts)")
        expect_shape(weights, (2, 3, 4, 5), "weights (with a bias that broadcasts)")
        expect(not _rows_sum_over_queries(plain), OVER_THE_KEYS)
        expect(within(weights, _reweighted(plain, bias), ATOL), BIAS_BEFORE_SOFTMAX)
        expect(within(out, weights.double() @ v.double(), ATOL), "out must be weights @ v.")


@graded(points=1, family="dtype_device", visibility=VISIBLE)
def test_dtype_and_device_kept(student):
    """out and weights keep q's dtype (float32, float64) and device."""
    for dtype in (torch.float32, torch.float64):
        q, k, v = (randn(1, 2, 4, 8, seed=80 + j, dtype=dtype) for j in range(3))
        out, weights = _outputs(student, q, k, v)
        expect_dtype(out, dtype, f"out for {str(dtype).removeprefix('torch.')} inputs")
        expect_dtype(weights, dtype, f"weights for {str(dtype).removeprefix('torch.')} inputs")
    outputs = student.attention(meta(2, 3, 4, 8), meta(2, 3, 6, 8), meta(2, 3, 6, 5))
    expect(isinstance(outputs, tuple) and len(outputs) == 2, "attention must return a pair (out, weights).")
    out, weights = (as_info(o, "attention on another device") for o in outputs)
    expect(out.device == "meta" and weights.device == "meta",
           "On another device (a GPU, say) the outputs must stay on the inputs' device: create any "
           "helper tensor with device=q.device.")
    expect_shape(out, (2, 3, 4, 5), "out on another device")


@graded(points=1, family="inputs", visibility=VISIBLE)
def test_inputs_untouched_and_views_accepted(student):
    """attention leaves q, k, v and bias unchanged and accepts non-contiguous (transposed) inputs."""
    q, k, v = randn(1, 2, 5, 8, seed=91), randn(1, 2, 6, 8, seed=92), randn(1, 2, 6, 3, seed=93)
    bias = torch.zeros(5, 6)
    bias[:, -1] = MINUS_INF
    result = student.call("attention", q, k, v, bias=bias)
    expect_untouched(result.inputs_after, (q, k, v, bias), "attention")
    # k arrives as a transposed view: what (B, D, T) -> (B, T, D) layouts produce in real models.
    out, _ = as_pair(student.call("attention", q, Transposed(k, -1, -2), v).output, "attention")
    expect_finite(as_tensor(out, "attention's out"), "out for a transposed k")
    expect(within(out, _outputs(student, q, k, v)[0], ATOL),
           "attention must accept non-contiguous inputs (e.g. a transposed view); use matmul or "
           "reshape, not view, on them.")
