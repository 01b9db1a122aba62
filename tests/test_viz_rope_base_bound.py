"""Men et al.'s base bound on a grid: the first crossing, the stricter value, and the fast margin's maths."""

import math

import numpy as np
import pytest
import torch

from poslab.viz import rope_base_bound as bound
from poslab.viz.common import convention_problems


def passes(base: float, context_len: int, head_dim: int = 128) -> bool:
    """B(m) >= 0 for m = 0..L, written here from the paper with one cosine per term."""
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    return bool((np.cos(np.outer(np.arange(context_len + 1), theta)).sum(axis=1) >= 0).all())


def test_the_fast_margin_is_the_plain_sum_of_cosines():
    bases = torch.tensor([3e4, 8.4e4, 2e5], dtype=torch.float64)
    theta = bases[:, None] ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    plain = torch.cos(torch.arange(3001, dtype=torch.float64)[None, :, None] * theta[:, None, :]).sum(-1)
    assert torch.allclose(bound.worst_margin(bases, 64, 3000), plain.min(-1).values, atol=1e-9)
    # a window that does not start at 0 nor end on a block boundary
    part = bound._margin_minimum(theta, 777, 2345)
    assert torch.allclose(part, plain[:, 777:2346].min(-1).values, atol=1e-9)


def test_grid_is_ten_to_the_k_over_500():
    grid = bound.base_grid(1e4, 1e5)
    assert len(grid) == 501 and grid[0] == pytest.approx(1e4) and grid[-1] == pytest.approx(1e5)
    assert float(grid[1] / grid[0]) == pytest.approx(10 ** (1 / 500))


@pytest.mark.parametrize("context_len", [4096, 8192])
def test_first_crossing_passes_and_no_grid_base_below_it_does(context_len):
    first = bound.first_crossing(context_len)
    assert passes(first, context_len)
    below = bound.base_grid(bound.SCAN_FROM, first)[:-1]
    # every 7th grid base below, and the ten just below, fail (checked with the plain formula)
    for base in [*below[::7].tolist(), *below[-10:].tolist()]:
        assert not passes(base, context_len), base


def test_8k_first_crossing_is_men_et_als_84_thousand_and_the_stricter_value_is_larger():
    result = bound.base_bound(8192)
    # Men et al. (2024), Fig. 1: about 8.4e4 at 8K
    assert 8.2e4 < result.first_crossing < 8.6e4
    assert result.every_base_above > 3 * result.first_crossing and result.failing_above_first > 10
    just_below = result.every_base_above / 10 ** (1 / bound.STEPS_PER_DECADE)
    assert not passes(just_below, 8192) and passes(result.every_base_above, 8192)
    for base in bound.base_grid(result.every_base_above, result.checked_up_to)[::25].tolist():
        assert passes(base, 8192), base
    frame = result.sweep
    assert (frame.loc[frame["passes"] == "yes", "worst B(m) up to L"] >= 0).all()
    assert (frame.loc[frame["passes"] == "no", "worst B(m) up to L"] < 0).all()


def test_a_longer_context_needs_a_larger_base_and_16k_passes_code_llamas_million():
    assert bound.first_crossing(16_384) > bound.first_crossing(8192)
    assert passes(1e6, 16_384)  # Code Llama's base: the lesson says it passes at 16K
    result = bound.base_bound(16_384)
    assert result.first_crossing < 1e6 < result.every_base_above


def test_chart_follows_the_conventions():
    chart = bound.base_bound(4096, 64).chart
    assert convention_problems(chart) == [] and "first passing base" in chart.to_dict()["description"]
    assert math.isfinite(bound.base_bound(4096, 64).first_crossing)
