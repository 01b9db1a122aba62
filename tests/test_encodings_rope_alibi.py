"""RoPE and ALiBi: values by hand and the relative-position properties."""

import math

import pytest
import torch

from poslab.encodings import alibi_bias, alibi_slopes, apply_rope, apply_rotary, rope_inverse_frequencies
from tests.helpers import FLOAT16_EPS


def test_rope_rotates_counter_clockwise_by_hand():
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # T=3, D=2, theta_0 = 1 rad
    out = apply_rope(x)
    assert torch.allclose(out[1], torch.tensor([math.cos(1), math.sin(1)]), atol=1e-7)
    assert torch.allclose(out[2], torch.tensor([-math.sin(2), math.cos(2)]), atol=1e-7)


def test_rope_second_pair_uses_base_to_the_minus_two_over_d():
    x = torch.zeros(2, 4)
    x[:, 2] = 1.0
    out = apply_rope(x, base=100.0)
    angle = 100.0 ** (-2 / 4)
    assert torch.allclose(out[1, 2:], torch.tensor([math.cos(angle), math.sin(angle)]), atol=1e-7)


def test_rope_is_identity_at_position_zero(generator):
    x = torch.randn(2, 3, 1, 8, generator=generator)
    assert torch.equal(apply_rope(x), x)


def test_rope_keeps_norms(generator):
    x = torch.randn(2, 50, 16, generator=generator, dtype=torch.float64)
    assert torch.allclose(apply_rope(x).norm(dim=-1), x.norm(dim=-1))


def test_rope_score_depends_only_on_the_offset(generator):
    q = torch.randn(64, generator=generator, dtype=torch.float64)
    k = torch.randn(64, generator=generator, dtype=torch.float64)

    def score(m, n):
        return apply_rope(q[None], torch.tensor([m]))[0] @ apply_rope(k[None], torch.tensor([n]))[0]

    assert math.isclose(score(3, 10), score(1003, 1010), rel_tol=1e-9)
    assert math.isclose(score(3, 10), score(50_003, 50_010), rel_tol=1e-9)
    assert not math.isclose(score(3, 10), score(3, 11), rel_tol=1e-3)


def test_rope_explicit_positions(generator):
    x = torch.randn(4, 8, generator=generator)
    positions = torch.tensor([7, 7, 0, 100])
    out = apply_rope(x, positions)
    assert torch.allclose(out[2], x[2])
    assert torch.allclose(out[3], apply_rope(x[3:4].expand(101, 8))[100], atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_rope_keeps_dtype_device_and_inputs(dtype, generator):
    x = torch.randn(2, 5, 8, generator=generator).to(dtype)
    before = x.clone()
    out = apply_rope(x)
    assert out.dtype == dtype and out.shape == x.shape and torch.equal(x, before)
    assert apply_rope(torch.empty(2, 5, 8, device="meta", dtype=dtype)).device.type == "meta"


def test_rope_on_a_transposed_view(generator):
    heads_first = torch.randn(2, 5, 3, 8, generator=generator)  # (B, T, H, D)
    view = heads_first.transpose(1, 2)  # (B, H, T, D), not contiguous
    assert not view.is_contiguous()
    assert torch.allclose(apply_rope(view), apply_rope(view.contiguous()))


def test_rope_half_precision_thousands_of_positions(generator):
    x = torch.randn(4, 64, generator=generator)
    positions = torch.tensor([1000, 2500, 4095, 8000])
    exact = apply_rope(x.double(), positions)
    half = apply_rope(x.half(), positions).double()
    # Input rounding plus output rounding, each at most one float16 unit of the largest entry.
    bound = 2 * FLOAT16_EPS * x.abs().max().item() * 1.5
    assert (half - exact).abs().max() <= bound


def test_half_split_pairing_is_interleaved_up_to_a_feature_permutation(generator):
    x = torch.randn(6, 8, generator=generator)
    to_half = torch.tensor([0, 2, 4, 6, 1, 3, 5, 7])  # interleaved -> [evens | odds]
    inv_freq = rope_inverse_frequencies(8)
    interleaved = apply_rotary(x, inv_freq, pairing="interleaved")
    half = apply_rotary(x[:, to_half], inv_freq, pairing="half")
    assert torch.allclose(half, interleaved[:, to_half], atol=1e-6)


def test_rope_rejects_odd_dimension():
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.zeros(3, 5))


def test_alibi_slopes_power_of_two_by_hand():
    assert torch.allclose(alibi_slopes(8), torch.tensor([2.0 ** -(h + 1) for h in range(8)]))
    assert torch.allclose(alibi_slopes(4), torch.tensor([2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8]))


def test_alibi_slopes_twelve_heads_follow_the_reference_rule():
    expected = [2.0**-e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]
    slopes = alibi_slopes(12)
    assert slopes.dtype == torch.float32 and torch.allclose(slopes, torch.tensor(expected))


def test_alibi_bias_depends_only_on_distance_and_masks_the_future():
    bias = alibi_bias(4, 9)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 9, 9) and bias.dtype == torch.float32
    for i in range(9):
        for j in range(9):
            if j > i:
                assert torch.all(bias[:, i, j] == float("-inf"))
            else:
                assert torch.allclose(bias[:, i, j], -slopes * (i - j))
    assert torch.all(bias.diagonal(dim1=-2, dim2=-1) == 0)


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_alibi_rejects_bad_head_counts(bad):
    with pytest.raises(ValueError, match="n_heads"):
        alibi_slopes(bad)


def test_rope_float64_inputs_get_float64_accuracy():
    x = torch.zeros(1, 4, dtype=torch.float64)
    x[0, 2] = 1.0  # the second pair, theta_1 = 10000^(-1/2) = 0.01 exactly in real numbers
    position = 123_457
    out = apply_rope(x, torch.tensor([position]))
    angle = position * 0.01
    assert abs(out[0, 2].item() - math.cos(angle)) < 1e-9 and abs(out[0, 3].item() - math.sin(angle)) < 1e-9
