"""The suite's oracles and its error model (grader/suite/tolerances.py), checked independently.

* the float64 oracles agree with values worked out by hand and with poslab.encodings;
* correct float32 / float16 implementations in several styles stay inside the error model's
  tolerances, at every position the suite probes and beyond (the model is a derived bound times
  SAFETY = 2: measured errors sit below half of it);
* the smallest known bugs sit well outside them;
* every tolerance grows with the size of its inputs (a tolerance that ignores their scale is a defect).
"""

from __future__ import annotations

import math

import pytest
import torch

from grader.suite import expect
from grader.suite.alibi.oracle import oracle_alibi_bias, oracle_alibi_slopes
from grader.suite.alibi.tolerances import alibi_bias_tolerance, alibi_slope_relative_tolerance
from grader.suite.attention.oracle import oracle_attention
from grader.suite.attention.tolerances import attention_tolerances
from grader.suite.learned.tolerances import sum_tolerance
from grader.suite.rope.oracle import oracle_rope
from grader.suite.rope.tolerances import rope_tolerance
from grader.suite.sinusoidal.oracle import oracle_sinusoidal
from grader.suite.sinusoidal.tolerances import sinusoidal_tolerance
from grader.suite.t5.tolerances import t5_edge
from poslab.encodings import alibi_bias, alibi_slopes, apply_rope, attention, sinusoidal_encoding

POSITIONS = torch.tensor([0, 1, 2, 3, 5, 10, 50, 100, 500, 1000, 2047, 4097, 9999, 20_000, 65_520, 100_000])
MARGIN = 2.0  # the model's SAFETY: correct code stays within the bare first-order bound


# ---- oracles by hand


def test_sinusoidal_oracle_by_hand():
    rows = oracle_sinusoidal([0, 1], 4)  # w_0 = 1, w_1 = 10000^(-2/4) = 0.01
    expected = torch.tensor([[0.0, 1.0, 0.0, 1.0], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]])
    assert torch.allclose(rows, expected.double(), atol=1e-15)
    concatenated = oracle_sinusoidal([1], 4, layout="concatenated")
    assert torch.allclose(concatenated[0], expected[1, [0, 2, 1, 3]].double(), atol=1e-15)


def test_rope_oracle_by_hand():
    x = torch.tensor([[1.0, 0.0, 0.0, 1.0]])  # one token, D = 4: theta = (1, 0.01)
    interleaved = oracle_rope(x, [2])
    assert torch.allclose(
        interleaved[0], torch.tensor([math.cos(2), math.sin(2), -math.sin(0.02), math.cos(0.02)], dtype=torch.float64)
    )
    half = oracle_rope(x, [2], pairing="half")  # pairs (x0, x2) = (1, 0) and (x1, x3) = (0, 1)
    assert torch.allclose(
        half[0], torch.tensor([math.cos(2), -math.sin(0.02), math.sin(2), math.cos(0.02)], dtype=torch.float64)
    )
    clockwise = oracle_rope(x, [2], clockwise=True)
    assert torch.allclose(clockwise[0, :2], torch.tensor([math.cos(2), -math.sin(2)], dtype=torch.float64))


def test_alibi_oracle_by_hand():
    assert torch.equal(oracle_alibi_slopes(8), torch.tensor([2.0 ** -(h + 1) for h in range(8)], dtype=torch.float64))
    # Press et al.: 12 heads are the 8-head slopes, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5.
    twelve = [2.0 ** -(h + 1) for h in range(8)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    assert torch.allclose(oracle_alibi_slopes(12), torch.tensor(twelve, dtype=torch.float64), rtol=1e-15)
    bias = oracle_alibi_bias(2, 3)  # slopes 1/16, 1/256
    assert bias[0, 2, 0] == -2 / 16 and bias[1, 1, 0] == -1 / 256 and bias[0, 1, 1] == 0
    assert bias[0, 0, 1] == float("-inf") and bias[1, 1, 2] == float("-inf")


def test_attention_oracle_by_hand():
    q, k, v = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([[1.0], [3.0]])
    first = math.exp(1 / math.sqrt(2)) / (math.exp(1 / math.sqrt(2)) + 1)
    out, weights = oracle_attention(q, k, v)
    assert torch.allclose(weights, torch.tensor([[first, 1 - first]], dtype=torch.float64))
    assert torch.allclose(out, torch.tensor([[first + 3 * (1 - first)]], dtype=torch.float64))
    out, weights = oracle_attention(q, k, v, torch.tensor([[0.0, float("-inf")]]))
    assert weights[0, 1] == 0 and out[0, 0] == 1.0


# ---- oracles against the reference (two independent derivations must agree)


def test_oracles_agree_with_the_reference():
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    bias = torch.randn(5, 5, generator=gen, dtype=torch.float64)
    for ours, theirs in zip(oracle_attention(q, k, v, bias), attention(q, k, v, bias)):
        assert torch.allclose(ours, theirs, atol=1e-12)
    assert torch.allclose(oracle_sinusoidal(torch.arange(300), 12), sinusoidal_encoding(300, 12).double(), atol=1e-6)
    x = torch.randn(2, 7, 16, generator=gen, dtype=torch.float64)
    positions = torch.tensor([0, 3, 9, 100, 4096, 7, 50_000])
    # The reference rounds its frequencies to float32 even for float64 x: agreement to float32 accuracy.
    gap = (oracle_rope(x, positions, base=500.0) - apply_rope(x, positions, base=500.0)).abs()
    assert bool((gap <= rope_tolerance(x, positions, 500.0, "interleaved")).all())
    for n_heads in (1, 3, 6, 8, 12, 24):
        assert torch.allclose(oracle_alibi_slopes(n_heads), alibi_slopes(n_heads).double(), rtol=1e-7)
        assert torch.equal(oracle_alibi_bias(n_heads, 6).float(), alibi_bias(n_heads, 6))


# ---- correct float32 sinusoidal rows in several styles, at arbitrary positions


def rows_exp_log(positions, d_model, base=10000.0):
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(base) / d_model))
    angles = positions.float()[:, None] * frequency
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(-2)


def rows_division(positions, d_model, base=10000.0):
    angles = positions.float()[:, None] / base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(-2)


def rows_negative_power(positions, d_model, base=10000.0):
    frequency = torch.pow(torch.tensor(base), -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    angles = positions.float()[:, None] * frequency
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(-2)


def rows_reference(positions, d_model, base=10000.0):
    frequency = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.double()[:, None] * frequency
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(-2).float()


SINUSOIDAL_STYLES = [rows_exp_log, rows_division, rows_negative_power, rows_reference]


@pytest.mark.parametrize("rows", SINUSOIDAL_STYLES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("d_model", [2, 6, 16, 64, 130, 512])
def test_correct_sinusoidal_styles_stay_well_inside_the_tolerance(rows, d_model):
    error = (rows(POSITIONS, d_model).double() - oracle_sinusoidal(POSITIONS, d_model)).abs()
    assert bool((error * MARGIN <= sinusoidal_tolerance(POSITIONS, d_model, 10000.0, "interleaved")).all())


def test_small_sinusoidal_bugs_exceed_the_tolerance_where_the_suite_looks():
    positions = torch.arange(4)  # the visible test's first rows, d_model = 8
    tolerance = sinusoidal_tolerance(positions, 8, 10000.0, "interleaved")
    right = oracle_sinusoidal(positions, 8)
    half = 4
    wrong = {
        "positions from 1": oracle_sinusoidal(positions + 1, 8),
        "base 1000": oracle_sinusoidal(positions, 8, 1000.0),
        "tensor2tensor": oracle_sinusoidal(
            positions,
            8,
            frequencies=torch.tensor([10000.0 ** (-i / (half - 1)) for i in range(half)], dtype=torch.float64),
        ),
    }
    for name, table in wrong.items():
        assert not expect.within(table, right, tolerance * MARGIN), name


# ---- correct RoPE in several styles


def rope_complex(x, positions, base=10000.0):
    theta = base ** (-torch.arange(0, x.shape[-1], 2, dtype=torch.float32) / x.shape[-1])
    angles = positions.float()[:, None] * theta
    pairs = torch.view_as_complex(x.float().unflatten(-1, (-1, 2)).contiguous())
    return torch.view_as_real(pairs * torch.complex(angles.cos(), angles.sin())).flatten(-2).to(x.dtype)


def rope_rotate_half(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    inverse = 1.0 / base ** (torch.arange(0, x.shape[-1], 2).float() / x.shape[-1])
    angles = positions.float()[:, None] * inverse
    cos, sin = torch.cat([angles.cos()] * 2, -1).to(x.dtype), torch.cat([angles.sin()] * 2, -1).to(x.dtype)
    rotated_half = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated_half * sin


def rope_exp_log(x, positions, base=10000.0):
    inverse = torch.exp(torch.arange(0, x.shape[-1], 2).float() * (-math.log(base) / x.shape[-1]))
    angles = positions.float()[:, None] * inverse
    cos, sin = angles.cos(), angles.sin()
    a, b = x.float()[..., 0::2], x.float()[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2).to(x.dtype)


ROPE_STYLES = {
    rope_complex: "interleaved",
    rope_rotate_half: "half",
    rope_exp_log: "interleaved",
    (lambda x, positions: apply_rope(x, positions)): "interleaved",
}


@pytest.mark.parametrize("style", list(ROPE_STYLES), ids=["complex", "rotate_half", "exp_log", "reference"])
@pytest.mark.parametrize("head_dim", [2, 8, 16, 64, 128])
def test_correct_rope_styles_stay_well_inside_the_tolerance(style, head_dim):
    x = torch.randn(2, len(POSITIONS), head_dim, generator=torch.Generator().manual_seed(head_dim))
    pairing = ROPE_STYLES[style]
    error = (style(x, POSITIONS).double() - oracle_rope(x, POSITIONS, pairing=pairing)).abs()
    assert bool((error * MARGIN <= rope_tolerance(x, POSITIONS, 10000.0, pairing)).all())


@pytest.mark.parametrize("style", list(ROPE_STYLES), ids=["complex", "rotate_half", "exp_log", "reference"])
@pytest.mark.parametrize("head_dim", [8, 32, 128])
def test_correct_float16_rope_stays_well_inside_the_tolerance(style, head_dim):
    positions = torch.arange(1000, 4200, 50)
    x = torch.randn(3, len(positions), head_dim, generator=torch.Generator().manual_seed(head_dim)).half()
    out = style(x, positions)
    assert out.dtype == torch.float16
    pairing = ROPE_STYLES[style]
    error = (out.double() - oracle_rope(x.double(), positions, pairing=pairing)).abs()
    assert bool((error * MARGIN <= rope_tolerance(x, positions, 10000.0, pairing)).all())


def test_float16_angles_exceed_the_float16_tolerance():
    positions = torch.tensor([1000, 1500, 2048, 3000, 4095, 4100])  # the visible test's positions
    x = torch.randn(1, 6, 32, generator=torch.Generator().manual_seed(0)).half()
    theta = (10000.0 ** (-torch.arange(0, 32, 2, dtype=torch.float64) / 32)).half()
    angles = positions.half()[:, None] * theta  # what a float16 computation gets
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)
    error = (out.double() - oracle_rope(x.double(), positions)).abs()
    assert float((error / rope_tolerance(x, positions, 10000.0, "interleaved")).max()) > 10


# ---- attention and ALiBi against the model


def attention_float32_styles(q, k, v):
    """softmax in float32 three ways: torch.softmax, exp(s - max) / sum, exp(s - logsumexp)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    manual = (scores - scores.amax(-1, keepdim=True)).exp()
    return {
        "softmax": torch.softmax(scores, -1),
        "manual": manual / manual.sum(-1, keepdim=True),
        "logsumexp": (scores - scores.logsumexp(-1, keepdim=True)).exp(),
    }


@pytest.mark.parametrize("scale", [1e-3, 1.0, 10.0, 30.0])
@pytest.mark.parametrize("dim", [1, 16, 64])
def test_correct_float32_softmax_styles_stay_inside_the_attention_model(scale, dim):
    gen = torch.Generator().manual_seed(dim)
    q, k, v = (torch.randn(3, 17, dim, generator=gen) * s for s in (scale, scale, 1.0))
    expected_out, expected_weights = oracle_attention(q, k, v)
    out_tol, weights_tol = attention_tolerances(q, k, v, None, expected_weights)
    for name, weights in attention_float32_styles(q, k, v).items():
        assert bool(((weights.double() - expected_weights).abs() * MARGIN <= weights_tol).all()), name
        assert bool(((weights @ v).double() - expected_out).abs().le(out_tol / MARGIN).all()), name


def test_alibi_slopes_as_a_float32_geometric_sequence_stay_inside_the_model():
    for n_heads in (1, 8, 12, 32, 64):
        start = torch.tensor(2.0 ** (-8.0 / n_heads), dtype=torch.float32)
        slopes = torch.cumprod(start.expand(n_heads), 0)  # start^(h+1), one rounding per factor
        expected = torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)], dtype=torch.float64)
        relative = (slopes.double() - expected).abs() / expected
        assert bool((relative * MARGIN <= alibi_slope_relative_tolerance(n_heads)).all()), n_heads


def test_every_tolerance_grows_with_the_scale_of_its_inputs():
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(0))
    positions = torch.tensor([0, 1, 10, 1000, 30000])
    small = rope_tolerance(x, positions, 10000.0, "half")
    assert torch.allclose(rope_tolerance(1000 * x, positions, 10000.0, "half"), 1000 * small, rtol=1e-6)
    assert bool((rope_tolerance(x, positions * 3, 10000.0, "half")[:, 1:] > small[:, 1:]).all())
    far, near = (
        sinusoidal_tolerance([100_000], 16, 10000.0, "interleaved"),
        sinusoidal_tolerance([10], 16, 10000.0, "interleaved"),
    )
    assert bool((far > near).all())
    q, k, v = (torch.randn(4, 6, generator=torch.Generator().manual_seed(s)) for s in range(3))
    weights = oracle_attention(q, k, v)[1]
    out_tol, weights_tol = attention_tolerances(q, k, v, None, weights)
    out_big, weights_big = attention_tolerances(10 * q, 10 * k, 100 * v, None, weights)
    assert bool((out_big > 100 * out_tol).all() and (weights_big > weights_tol).all())
    slopes = torch.tensor([0.5, 0.25])
    assert bool((alibi_bias_tolerance(slopes, 300)[:, -1, 0] > alibi_bias_tolerance(slopes, 3)[:, -1, 0]).all())
    assert bool((sum_tolerance(1000 * x, x, torch.float32) > sum_tolerance(x, x, torch.float32)).all())


def test_t5_edges_cover_float32_and_float64_logarithms():
    distance = torch.arange(1, 1_000_000, 997)
    for exact, max_distance, span in ((8, 128, 8), (16, 128, 16), (1, 2, 1), (40, 41, 40)):
        ratio = math.log(max_distance / exact)
        single = (torch.log(distance.float() / exact) / ratio * span).double()
        double = (distance.double() / exact).log() / ratio * span
        difference = torch.log(distance.float()) - math.log(exact)
        assert bool(((single - double).abs() <= t5_edge(distance, exact, max_distance, span)).all())
        assert bool(
            ((difference.double() / ratio * span - double).abs() <= t5_edge(distance, exact, max_distance, span)).all()
        )
