"""RoPE lesson: shift invariance, the RoFormer decay bound, the pairing conventions, the page."""

import cmath
import math

import numpy as np
import pytest
import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz import rope as lesson
from poslab.viz import rope_pairing
from poslab.viz.common import convention_problems


def score_by_hand(q: torch.Tensor, k: torch.Tensor, m: int, n: int, base: float = 10000.0) -> float:
    """Pairs as complex numbers: Re sum_i q_i e^{i m theta_i} conj(k_i e^{i n theta_i}).

    theta_i is rounded to float32 as the library stores it (its angles are then float64)."""
    total = 0.0
    for i in range(len(q) // 2):
        theta = float(np.float32(base ** (-2 * i / len(q))))
        zq = complex(q[2 * i], q[2 * i + 1]) * cmath.exp(1j * m * theta)
        zk = complex(k[2 * i], k[2 * i + 1]) * cmath.exp(1j * n * theta)
        total += (zq * zk.conjugate()).real
    return total


# ---------------------------------------------------------------- scores and shifts


def test_rope_score_matches_the_complex_number_form():
    q, k = lesson.random_query_key(8, seed=3)
    assert lesson.rope_score(q, k, 4, 11) == pytest.approx(score_by_hand(q, k, 4, 11), abs=1e-10)


def test_shifting_both_positions_keeps_the_score_and_moving_one_does_not():
    view = lesson.shift_view(16, 10000.0, m=3, n=10, shift=500)
    q, k = lesson.random_query_key(16, seed=0)
    assert view.score == pytest.approx(score_by_hand(q, k, 3, 10), abs=1e-9)
    assert view.shifted_score == pytest.approx(view.score, abs=1e-9)
    assert view.key_only_score == pytest.approx(score_by_hand(q, k, 3, 510), abs=1e-9)
    assert abs(view.key_only_score - view.score) > 1e-3


def test_vectorised_scores_equal_one_at_a_time():
    q, k = lesson.random_query_key(8, seed=1)
    m, n = torch.tensor([0, 5, 9]), torch.tensor([2, 2, 40])
    batch = lesson.rope_scores(q, k, m, n)
    assert [round(float(s), 9) for s in batch] == [round(score_by_hand(q, k, int(a), int(b)), 9) for a, b in zip(m, n)]


# ---------------------------------------------------------------- the decay bound


def test_decay_bound_starts_at_the_mean_of_1_to_half_d():
    frame = lesson.decay_bound(128, 10000.0, 10)
    assert frame["bound"].iloc[0] == pytest.approx((64 + 1) / 2)  # |S_j| = j at distance 0


def test_decay_bound_for_four_dimensions_by_hand():
    # D = 4: theta = (1, 0.01); |S_1| = 1, |S_2| = |e^{i r} + e^{0.01 i r}| = |1 + e^{0.99 i r}|
    frame = lesson.decay_bound(4, 10000.0, 300)
    for r in (1, 37, 300):
        theta_1 = float(np.float32(0.01))
        assert frame["bound"].iloc[r] == pytest.approx((1 + abs(1 + cmath.exp(1j * r * (1 - theta_1)))) / 2)


def test_decay_bound_trends_down_with_distance():
    bound = lesson.decay_bound(128, 10000.0, 1000)["bound"]
    windows = [bound.iloc[start : start + 100].mean() for start in (0, 200, 400, 800)]
    assert windows == sorted(windows, reverse=True)
    assert windows[-1] < windows[0] / 2


# ---------------------------------------------------------------- pairings


def test_interleaved_to_half_order_by_hand():
    assert rope_pairing.interleaved_to_half_order(8) == (0, 2, 4, 6, 1, 3, 5, 7)


def test_permuting_the_coordinates_maps_one_convention_onto_the_other():
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    freqs = rope_inverse_frequencies(8)
    order = list(rope_pairing.interleaved_to_half_order(8))
    interleaved = apply_rotary(x, freqs, pairing="interleaved")
    half = apply_rotary(x[:, order], freqs, pairing="half")
    assert torch.allclose(half, interleaved[:, order], atol=1e-12)


def test_pairing_view_numbers():
    view = rope_pairing.pairing_view(16, 32, 8)
    assert view.vector_difference > 0.1  # different vectors for the same weights
    assert view.shift_error_interleaved < 1e-9 and view.shift_error_half < 1e-9
    assert view.swapped_score_error > 0.1  # wrong convention: different scores
    assert view.permuted_score_error < 1e-9  # permuted rows: the same scores
    assert list(view.pairs.iloc[1, 1:]) == ["(2, 3)", "(1, 9)"]


# ---------------------------------------------------------------- clocks and charts


def test_shown_pairs_run_from_fastest_to_slowest():
    assert lesson.shown_pairs(64) == (0, 4, 9, 13, 18, 22, 27, 31)
    assert lesson.shown_pairs(8) == (0, 1, 2, 3)


def test_clock_hands_point_at_position_times_theta():
    frame = lesson.clock_frame(8, 10000.0, m=3, n=10)
    pair0 = frame[frame["pair"] == "pair 0"].set_index("hand")
    assert pair0.loc["query at m", "angle"] == pytest.approx(math.degrees(3.0) % 360)
    assert pair0.loc["key at n", "x"] == pytest.approx(math.cos(10.0))
    assert pair0.loc["key at n", "relative"] == pytest.approx(math.degrees(-7.0) % 360)


def test_charts_follow_the_conventions():
    charts = [
        lesson.clock_chart(16, 10000.0, 2, 5),
        lesson.shift_view(16, 10000.0, 2, 5, 100).chart,
        lesson.decay_chart(16, 10000.0, 100),
    ]
    assert all(convention_problems(chart) == [] for chart in charts)


# ---------------------------------------------------------------- the page


def _metrics(at):
    return {metric.label: metric.value for metric in at.metric}


def test_page_scores_stay_with_both_shifted_and_widgets_change_them(lesson_page):
    at = lesson_page("rope")
    values = list(_metrics(at).values())
    assert values[0] == values[1] and values[2] != values[0]  # both moved: same; key only: not
    at.slider(key="rope-m").set_value(40).run()
    assert not at.exception and list(_metrics(at).values())[0] != values[0]
    at.slider(key="rope-shift").set_value(2000).run()
    assert not at.exception and any("2040" in label for label in _metrics(at))


def test_page_head_dimension_changes_the_pairing_numbers(lesson_page):
    at = lesson_page("rope")
    before = _metrics(at)["max |rope_interleaved(q) − rope_half(q)|"]
    at.select_slider(key="rope-d").set_value(16).run()
    assert not at.exception and _metrics(at)["max |rope_interleaved(q) − rope_half(q)|"] != before
    at.select_slider(key="rope-reach").set_value(4000).run()
    assert not at.exception
