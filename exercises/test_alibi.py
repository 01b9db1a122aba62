"""Public tests for alibi.py: the slopes of 8 heads and the shape of the bias."""

import torch


def test_eight_heads_get_halving_slopes(impl):
    slopes = impl.alibi_slopes(8)
    assert slopes.dtype == torch.float32
    assert torch.allclose(slopes, torch.tensor([1 / 2 ** (h + 1) for h in range(8)]))


def test_bias_shape_diagonal_and_future(impl):
    bias = impl.alibi_bias(4, 5)
    assert bias.shape == (4, 5, 5)
    assert bool((bias.diagonal(dim1=-2, dim2=-1) == 0).all())
    assert bias[0, 1, 3].item() <= -1e4  # key 3 is in query 1's future: -inf, or a finite mask <= -1e4


def test_one_step_back_costs_one_slope(impl):
    slopes, bias = impl.alibi_slopes(4), impl.alibi_bias(4, 3)
    assert torch.allclose(bias[:, 1, 0], -slopes)
    assert torch.allclose(bias[:, 2, 0], -2 * slopes)
