"""Public tests for sinusoidal.py: shape, dtype and the first rows, by hand.

Both layouts are accepted: interleaved (sin, cos, sin, cos, ...) and concatenated ([all sin | all cos]).
"""

import math

import torch


def _sin_cos_columns(table):
    """(sin columns, cos columns) for either accepted layout, told apart by row 0 (sin 0 = 0, cos 0 = 1)."""
    half = table.shape[1] // 2
    if torch.allclose(table[0, 1::2], torch.ones(half)):
        return table[:, 0::2], table[:, 1::2]
    return table[:, :half], table[:, half:]


def test_shape_and_dtype(impl):
    table = impl.sinusoidal_encoding(10, 8)
    assert table.shape == (10, 8)
    assert table.dtype == torch.float32


def test_position_zero_is_sin_0_and_cos_0(impl):
    sin, cos = _sin_cos_columns(impl.sinusoidal_encoding(3, 6))
    assert torch.allclose(sin[0], torch.zeros(3), atol=1e-7)
    assert torch.allclose(cos[0], torch.ones(3), atol=1e-7)


def test_first_pair_turns_one_radian_per_position(impl):
    sin, cos = _sin_cos_columns(impl.sinusoidal_encoding(4, 8))
    positions = torch.arange(4, dtype=torch.float64)
    assert torch.allclose(sin[:, 0].double(), positions.sin(), atol=1e-6)
    assert torch.allclose(cos[:, 0].double(), positions.cos(), atol=1e-6)


def test_second_pair_by_hand(impl):
    # d = 4: w_1 = 10000^(-2/4) = 1/100.
    sin, cos = _sin_cos_columns(impl.sinusoidal_encoding(3, 4))
    assert math.isclose(sin[2, 1].item(), math.sin(0.02), abs_tol=1e-6)
    assert math.isclose(cos[2, 1].item(), math.cos(0.02), abs_tol=1e-6)


def test_values_stay_in_minus_one_one(impl):
    table = impl.sinusoidal_encoding(50, 16)
    assert bool((table.abs() <= 1.0 + 1e-6).all())
