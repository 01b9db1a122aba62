"""Hidden tests of ``attention(q, k, v, bias=None) -> (out, weights)``: 20 points.

Values are compared with a float64 oracle of softmax(q k^T / sqrt(D) + bias) v; the properties
(permutation equivariance, -inf masking, broadcasting) are checked on the student's own outputs.
Every tolerance comes from the error model (``attention_tolerances``): it grows with D, Tk and the
size of the logits and of v. The hidden tests draw their inputs over the whole domain (``domains``), layouts too.
"""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.attention.domains import BiasKind, attention_cases, structured_mask_edges, token_cases
from grader.suite.attention.mistakes import OVER_THE_KEYS, rows_sum_over_queries, rows_sum_to_one, scale_mistakes
from grader.suite.attention.oracle import MINUS_INF, oracle_attention
from grader.suite.attention.tolerances import attention_tolerances, matmul_tolerance, reweighted_tolerance
from grader.suite.draw import answer, for_each
from grader.suite.expect import (
    as_info,
    as_pair,
    as_tensor,
    diagnose,
    expect,
    expect_dtype,
    expect_shape,
    on_meta_device,
    within,
)
from grader.suite.inputs import meta, permutation, randn

SPEC = "attention(q, k, v, bias) must equal softmax(q k^T / sqrt(D) + bias) v, with D the size of q's last axis."


def _pair(output, strict: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    out, weights = as_pair(output, "attention")
    return as_tensor(out, "attention's out", strict), as_tensor(weights, "attention's weights", strict)


def _outputs(student, q, k, v, bias=None, strict: bool = False, key: tuple | None = None):
    if key is None:
        return _pair(student.attention(q, k, v, bias=bias), strict)
    return _pair(answer(student, key, "attention", q, k, v, bias=bias).output, strict)


def _expected(q, k, v, bias=None) -> tuple[torch.Tensor, ...]:
    """(out, weights, out tolerance, weights tolerance) of the oracle."""
    expected_out, expected_weights = oracle_attention(q, k, v, bias)
    return (expected_out, expected_weights, *attention_tolerances(q, k, v, bias, expected_weights))


@lru_cache(maxsize=64)
def _drawn_expected(case) -> tuple[torch.Tensor, ...]:
    """A drawn case's tensors and expectations: the same for every submission graded in this process."""
    q, k, v, bias = case.tensors()
    return (q, k, v, bias, *_expected(q, k, v, bias))


def _expect_matches_formula(student, q, k, v, bias=None, key: tuple | None = None, expected=None) -> None:
    out, weights = _outputs(student, q, k, v, bias, key=key)
    expected_out, expected_weights, out_tol, weights_tol = expected or _expected(q, k, v, bias)
    expect_shape(out, expected_out.shape, "out")
    expect_shape(weights, expected_weights.shape, "weights")
    if not (within(out, expected_out, out_tol) and within(weights, expected_weights, weights_tol)):
        raise AssertionError(SPEC + diagnose(out, scale_mistakes(q, k, v, bias), out_tol))


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
    expect(
        rows_sum_to_one(weights, q, k),
        OVER_THE_KEYS
        if rows_sum_over_queries(weights, q, k)
        else "Each row of weights (one query) must sum to 1: the softmax runs over the keys, dim=-1.",
    )


@graded(points=3, family="values", visibility=HIDDEN)
@for_each(attention_cases(), count=6)
def test_values_for_drawn_shapes(student, case):
    """attention matches the formula for any leading axes, Tq != Tk, Dv != D, float32 and float64, small and large logits."""
    q, k, v, _, *expected = _drawn_expected(case)
    _expect_matches_formula(student, q, k, v, key=("values", case), expected=expected)


@graded(points=1, family="stability", visibility=VISIBLE)
def test_large_logits_stay_finite(student):
    """Large scores do not overflow: softmax(s) = softmax(s - max s)."""
    q, k, v = (
        randn(1, 2, 6, 16, seed=21, scale=30.0),
        randn(1, 2, 6, 16, seed=22, scale=30.0),
        randn(1, 2, 6, 4, seed=23),
    )
    out, weights = _outputs(student, q, k, v)
    expect(
        bool(torch.isfinite(out).all() and torch.isfinite(weights).all()),
        "With large scores (|q.k| / sqrt(D) in the hundreds) your attention returns NaN or inf: "
        "exp overflows. Use torch.softmax, or subtract each row's maximum before exp.",
    )
    expect(not rows_sum_over_queries(weights, q, k), OVER_THE_KEYS)
    expect(
        rows_sum_to_one(weights, q, k),
        "With large scores the rows of weights no longer sum to 1: is the softmax clamped or approximated?",
    )


def _self_attention(student, x, key: tuple) -> torch.Tensor:
    return _outputs(student, x, x, x, key=key)[0]


def _out_tolerance(x: torch.Tensor) -> torch.Tensor:
    return attention_tolerances(x, x, x, None, oracle_attention(x, x, x)[1])[0]


@graded(points=2, family="equivariance", visibility=VISIBLE)
def test_permutation_equivariance(student):
    """Without positions, attention is permutation-equivariant: attn(PX) = P attn(X)."""
    x = randn(2, 2, 6, 8, seed=31)  # (B, H, T, D)
    order = permutation(6, seed=32)
    moved, reference = _self_attention(student, x[..., order, :], ("x", 31)), _self_attention(student, x, ("x", 32))
    expect(
        within(moved, reference[..., order, :], 2 * _out_tolerance(x)[..., order, :]),
        "Shuffling the tokens must shuffle the outputs the same way (attn(PX) = P attn(X)). "
        "Yours mixes positions in: is there a mask, a position or an order-dependent step?",
    )


@lru_cache(maxsize=16)
def _tokens(case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = case.x()
    return x, case.orders()[..., None].expand_as(x), _out_tolerance(x)


def _moved_and_reference(student, case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    x, index, out_tol = _tokens(case)
    moved = _self_attention(student, x.gather(-2, index), ("tokens", case, "moved"))
    reference = _self_attention(student, x, ("tokens", case, "x"))
    expect_shape(moved, x.shape, "out for self-attention (q = k = v = x)")
    expect_shape(reference, x.shape, "out for self-attention (q = k = v = x)")
    return moved, reference.gather(-2, index), out_tol.gather(-2, index), out_tol


@graded(points=2, family="equivariance", visibility=HIDDEN)
@for_each(token_cases(), count=5, key="attention.tokens")
def test_permutation_equivariance_batched(student, case):
    """attn(PX) = P attn(X) and weights(PX) = P weights(X) P^T for any leading axes, each leading row with its own P."""
    moved, expected, moved_tol, _ = _moved_and_reference(student, case)
    expect(
        within(moved, expected, 2 * moved_tol),
        "With a batch (and heads), shuffling each sequence's tokens must shuffle its outputs the "
        "same way. Check that the batch and head axes stay separate (matmul over the last two axes).",
    )
    x, index, _ = _tokens(case)
    moved_weights = _outputs(student, *(x.gather(-2, index),) * 3, key=("tokens", case, "moved"))[1]
    weights = _outputs(student, x, x, x, key=("tokens", case, "x"))[1]
    order = index[..., 0]  # [..., T]: the token each position of PX holds

    def both_axes(w: torch.Tensor) -> torch.Tensor:  # P w P^T
        rows = w.gather(-2, order[..., :, None].expand_as(w))
        return rows.gather(-1, order[..., None, :].expand_as(w))

    allowed = both_axes(attention_tolerances(x, x, x, None, weights)[1])  # around the submission's own weights
    expect(
        within(moved_weights, both_axes(weights.double()), 2 * allowed),
        "Shuffling the tokens must move the weights on both axes, weights(PX) = P weights(X) P^T: each query's "
        "row moves with it, and within the row each key's weight moves with that key.",
    )


@graded(points=1, family="equivariance", visibility=HIDDEN)
@for_each(token_cases(), count=5, key="attention.tokens")
def test_mean_pooled_output_is_permutation_invariant(student, case):
    """Mean-pooling the output over tokens gives the same vector in any token order."""
    moved, expected, _, out_tol = _moved_and_reference(student, case)
    expect(
        within(moved.double().mean(-2), expected.double().mean(-2), 2 * out_tol.mean(-2)),
        "The mean over tokens of attention's output must not depend on the token order: "
        "without positions, attention sees a set, not a sequence.",
    )


def _reweighted(weights: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """softmax(s + b) = softmax(s) * exp(b), renormalised: what a bias does, whatever the logits s."""
    raw = weights.double() * bias.double().exp()
    return raw / raw.sum(-1, keepdim=True)


BIAS_BEFORE_SOFTMAX = (
    "The bias must be added to the scaled logits before the softmax, broadcasting like any "
    "tensor sum (e.g. [Tq, Tk] or [H, 1, Tk] over [B, H, Tq, Tk]): then weights with a bias "
    "b are the weights without it times exp(b), renormalised."
)


def _expect_bias_reweights(student, q, k, v, bias, key: tuple, oracle: tuple | None = None) -> None:
    """``oracle``: ``_expected(q, k, v, bias)`` when already known (a drawn case's, kept between gradings)."""
    _, plain = _outputs(student, q, k, v, key=(*key, "plain"))
    out, weights = _outputs(student, q, k, v, bias, key=(*key, "bias"))
    expect_shape(out, (*q.shape[:-1], v.shape[-1]), "out (with a bias that broadcasts)")
    expect_shape(weights, (*q.shape[:-1], k.shape[-2]), "weights (with a bias that broadcasts)")
    expect(not rows_sum_over_queries(plain, q, k), OVER_THE_KEYS)
    masked = (bias == MINUS_INF).expand(weights.shape)
    expect(
        bool((weights[masked] == 0).all()),
        "Where the bias is -inf the weight must be exactly 0: add the bias to the scaled logits "
        "before the softmax (a 0 or a large finite number does not mask).",
    )
    expect(
        rows_sum_to_one(weights, q, k, bias),
        "With a mask, each row of weights must still sum to 1: mask before the softmax, not after.",
    )
    # Where every key the bias leaves visible had an underflowed weight without it (large logits,
    # the largest ones masked), exp(b) times 0 tells nothing: those rows are judged as they are.
    raw_total = (plain.double() * bias.double().exp()).sum(-1, keepdim=True)
    expected = torch.where(raw_total > 0, _reweighted(plain, bias), weights.double())
    margin = torch.where(raw_total > 0, reweighted_tolerance(q, k, bias, plain), torch.zeros_like(expected))
    expect(within(weights, expected, margin), BIAS_BEFORE_SOFTMAX)
    # out may come from its own computation (F.scaled_dot_product_attention): each is off by its own tolerance.
    _, _, out_tol, weights_tol = oracle if oracle is not None else _expected(q, k, v, bias)
    allowed = out_tol + weights_tol @ v.double().abs() + matmul_tolerance(weights, v)
    expect(within(out, weights.double() @ v.double(), allowed), "out must be weights @ v.")


@graded(points=2, family="bias", visibility=VISIBLE)
def test_minus_infinity_bias_gets_zero_weight(student):
    """A -inf bias entry gets weight exactly 0, and each row still sums to 1."""
    q, k, v = randn(2, 1, 5, 4, seed=61), randn(2, 1, 5, 4, seed=62), randn(2, 1, 5, 3, seed=63)
    bias = torch.zeros(5, 5)
    bias[:, 3] = MINUS_INF
    bias[0, 1:] = MINUS_INF  # the first query sees only the first key
    _expect_bias_reweights(student, q, k, v, bias, (BiasKind.MASKED, 61))


@graded(points=2, family="bias", visibility=HIDDEN)
@for_each(attention_cases(bias=(BiasKind.FINITE, BiasKind.MASKED)), count=5, edges=structured_mask_edges())
def test_bias_broadcasts_and_enters_before_softmax(student, case):
    """A finite or -inf bias of any broadcasting shape is added to the scaled logits before the softmax."""
    q, k, v, bias, *oracle = _drawn_expected(case)
    _expect_bias_reweights(student, q, k, v, bias, ("bias", case), tuple(oracle))


@graded(points=1, family="dtype_device", visibility=VISIBLE)
def test_dtype_and_device_kept(student):
    """out and weights keep q's dtype (float32, float64) and device."""
    for dtype in (torch.float32, torch.float64):
        q, k, v = (randn(1, 2, 4, 8, seed=80 + j, dtype=dtype) for j in range(3))
        out, weights = _outputs(student, q, k, v)
        expect_dtype(out, dtype, f"out for {str(dtype).removeprefix('torch.')} inputs")
        expect_dtype(weights, dtype, f"weights for {str(dtype).removeprefix('torch.')} inputs")
    shapes = ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5))  # None below: the code reads values (expect.on_meta_device)
    outputs = on_meta_device(
        lambda: student.attention(*(meta(*shape) for shape in shapes)),
        lambda: student.attention(*(randn(*shape, seed=85) for shape in shapes)),
    )
    if outputs is None:
        return
    expect(isinstance(outputs, tuple) and len(outputs) == 2, "attention must return a pair (out, weights).")
    out, weights = (as_info(o, "attention on another device") for o in outputs)
    expect(
        out.device == "meta" and weights.device == "meta",
        "On another device (a GPU, say) the outputs must stay on the inputs' device: create any "
        "helper tensor with device=q.device.",
    )
    expect_shape(out, (2, 3, 4, 5), "out on another device")
