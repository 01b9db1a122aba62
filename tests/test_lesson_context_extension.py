"""Context-extension lesson: flagged RoPE pairs by hand for each schedule, the charts, the page."""

import math

import pytest
import torch

from poslab.viz import context_extension as lesson
from poslab.viz.common import convention_problems

D, BASE, L = 128, 10000.0, 4096


def slow_pairs_by_hand(d: int = D, base: float = BASE, length: int = L) -> list[int]:
    """Pairs whose wavelength 2 pi base^(2i/d) exceeds the training length."""
    return [i for i in range(d // 2) if 2 * math.pi * base ** (2 * i / d) > length]


def flagged(view: lesson.ExtensionView, schedule: str) -> tuple[int, str]:
    row = view.flags.set_index("schedule").loc[schedule]
    return int(row["flagged pairs"]), row["which"]


def test_hand_count_of_slow_pairs():
    # i > 64 ln(4096 / 2 pi) / ln(10000) = 45.04, so pairs 46..63
    assert slow_pairs_by_hand() == list(range(46, 64))
    view = lesson.extension_view(D, BASE, L, 2)
    assert view.slow_pairs == 18 and view.first_slow_pair == 46


def test_scale_one_flags_nothing():
    view = lesson.extension_view(D, BASE, L, 1)
    assert view.target_len == L
    assert (view.flags["flagged pairs"] == 0).all()


@pytest.mark.parametrize("factor", [2, 256])
def test_flags_by_hand_for_each_schedule(factor):
    view = lesson.extension_view(D, BASE, L, factor)
    assert view.target_len == L * factor
    # No scaling: every slow pair reaches s times its trained angle.
    assert flagged(view, "No scaling") == (18, "46-63")
    # NTK-aware: theta'_i / theta_i = s^(-2i/(D-2)), so s theta'_i / theta_i = s^(1 - 2i/126) > 1 for i < 63.
    assert flagged(view, "NTK-aware") == (17, "46-62")
    # Interpolation, YaRN (slow pairs fully interpolated: i >= ceil(45.04)) and Llama 3 (lambda > L): none.
    for schedule in (
        "Position interpolation (linear)",
        "YaRN (code's ramp)",
        "YaRN (paper's ramp)",
        "Llama 3.1 (llama3)",
        "Dynamic NTK",
    ):
        assert flagged(view, schedule) == (0, "none")


def test_four_k_to_a_million_is_a_factor_of_256():
    view = lesson.extension_view(D, BASE, L, 256)
    assert view.target_len == 1_048_576
    row = view.flags.set_index("schedule").loc["No scaling"]
    assert row["largest angle ratio, slow pairs"] == pytest.approx(256)
    assert view.flags.set_index("schedule").loc["YaRN (code's ramp)", "attention scale"] == pytest.approx(
        0.1 * math.log(256) + 1
    )


def test_a_larger_base_leaves_more_pairs_slow():
    assert lesson.extension_view(D, 500_000.0, L, 4).slow_pairs == len(slow_pairs_by_hand(base=500_000.0))
    assert len(slow_pairs_by_hand(base=500_000.0)) > 18


def test_flag_out_of_range_on_hand_made_frequencies():
    trained = torch.tensor([1.0, 1e-3, 1e-4])  # wavelengths 6.3, 6283, 62832: the last two are slow for L = 1000
    new = torch.tensor([1.0, 1e-3 / 2, 1e-4 / 4])
    flags = lesson.flag_out_of_range(new, trained, original_len=1000, target_len=3000)
    # pair 0: fast; pair 1: 3000 * 5e-4 = 1.5 > 1000 * 1e-3 = 1; pair 2: 0.075 < 0.1
    assert flags.tolist() == [False, True, False]


def test_pair_ranges_are_compact():
    assert lesson._pair_ranges([3, 4, 5, 9]) == "3-5, 9"
    assert lesson._pair_ranges([]) == "none"


def test_charts_follow_the_conventions():
    view = lesson.extension_view(64, BASE, L, 8)
    assert convention_problems(view.wavelength_chart) == [] and convention_problems(view.angle_chart) == []


# ---------------------------------------------------------------- the page


def _metrics(at):
    return [metric.value for metric in at.metric]


def test_page_factor_changes_the_target_length_and_the_flags(lesson_page):
    at = lesson_page("context-extension")
    assert _metrics(at)[:2] == ["1,048,576", "18 of 64"]
    at.select_slider(key="ext-factor").set_value(1).run()
    assert not at.exception and _metrics(at)[0] == "4,096"
    flags = next(
        table.value for table in at.dataframe if "flagged pairs" in table.value.columns
    )  # not a chart's numbers
    assert (flags["flagged pairs"] == 0).all()


def test_page_base_and_length_change_the_slow_pairs(lesson_page):
    at = lesson_page("context-extension")
    at.select_slider(key="ext-base").set_value(500_000).run()
    assert not at.exception and _metrics(at)[1] == f"{len(slow_pairs_by_hand(base=500_000.0))} of 64"
    at.select_slider(key="ext-length").set_value(8_192).run()
    assert not at.exception and _metrics(at)[0] == f"{8192 * 256:,}"


def yarn_ramps_by_hand(d: int, base: float, length: int, s: float) -> tuple[list[float], list[float]]:
    """YaRN's two ramps written from their definitions: over the pair index (code), over the turns (paper)."""
    theta = [base ** (-2 * i / d) for i in range(d // 2)]
    edge = [d * math.log(length / (n * 2 * math.pi)) / (2 * math.log(base)) for n in (32, 1)]
    low, high = max(math.floor(edge[0]), 0), min(math.ceil(edge[1]), d - 1)
    code = [
        t * (1 - r) + t / s * r
        for t, r in zip(theta, [min(max((i - low) / (high - low), 0), 1) for i in range(d // 2)])
    ]
    keep = [min(max((length * t / (2 * math.pi) - 1) / 31, 0), 1) for t in theta]
    paper = [t * g + t / s * (1 - g) for t, g in zip(theta, keep)]
    return code, paper


def test_page_shows_the_gap_between_the_two_yarn_ramps(lesson_page):
    from tests.app_harness import metrics

    at = lesson_page("context-extension")
    code, paper = yarn_ramps_by_hand(128, 10_000.0, 4096, 256.0)
    expected = max(max(a / b, b / a) for a, b in zip(code, paper))
    assert metrics(at)["YaRN: code's ramp vs paper's, largest θ′ ratio"] == f"{expected:.2f}×"
    at.select_slider(key="ext-factor").set_value(16).run()
    code, paper = yarn_ramps_by_hand(128, 10_000.0, 4096, 16.0)
    expected = max(max(a / b, b / a) for a, b in zip(code, paper))
    assert not at.exception and metrics(at)["YaRN: code's ramp vs paper's, largest θ′ ratio"] == f"{expected:.2f}×"
    assert 2.5 < expected < 3.5  # "up to 3x" at s = 16
