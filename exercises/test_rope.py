"""Public tests for rope.py: shape, dtype and rotations you can check by hand.

Both pairings are accepted: interleaved, (x[2i], x[2i+1]), and half, (x[i], x[i + D/2]).
"""

import math

import torch


def test_shape_and_dtype_kept(impl):
    x = torch.randn(2, 3, 5, 8)
    out = impl.apply_rope(x)
    assert out.shape == x.shape
    assert out.dtype == torch.float32
    assert impl.apply_rope(x.double()).dtype == torch.float64


def test_position_zero_changes_nothing(impl):
    x = torch.randn(2, 3, 1, 8)  # T = 1: the only token is at position 0
    assert torch.allclose(impl.apply_rope(x), x, atol=1e-6)


def test_one_pair_by_hand(impl):
    # D = 2: one pair with theta_0 = base^0 = 1, so position p turns (1, 0) by p radians.
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    out = impl.apply_rope(x)
    for p in range(3):
        assert torch.allclose(out[p], torch.tensor([math.cos(p), math.sin(p)]), atol=1e-6)


def test_lengths_are_kept(impl):
    x = torch.randn(1, 2, 10, 16)
    assert torch.allclose(impl.apply_rope(x).norm(dim=-1), x.norm(dim=-1), atol=1e-5)


def test_the_frequencies_are_base_to_the_minus_2i_over_d(impl):
    # All ones, D = 4: each pair, in either pairing, has squared length 2. The score of position 3
    # against position 0 is 2 cos(3 theta_0) + 2 cos(3 theta_1), with theta_i = 10000^(-2i/4): 1 and 0.01.
    out = impl.apply_rope(torch.ones(4, 4, dtype=torch.float64))
    expected = 2 * math.cos(3 * 1.0) + 2 * math.cos(3 * 0.01)
    assert abs(float(out[3] @ out[0]) - expected) < 1e-6, "theta_i = base ** (-2 * i / D), i = 0 .. D/2 - 1"
