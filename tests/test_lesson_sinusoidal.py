"""Sinusoidal lesson: the shift matrix M_k, the dot product against distance, the charts, the page."""

import math

import numpy as np
import pytest
import torch

from poslab.encodings.sinusoidal import sinusoidal_encoding
from poslab.viz import sinusoidal as lesson
from poslab.viz.common import MAX_HEATMAP_CELLS, convention_problems

D, BASE, LENGTH = 16, 10000.0, 64


def hand_frequency(i: int, d: int = D, base: float = BASE) -> float:
    return base ** (-2 * i / d)


# ---------------------------------------------------------------- M_k


@pytest.mark.parametrize("k", [1, 5, 17])
def test_shift_matrix_is_block_diagonal_with_the_rotation_blocks(k):
    matrix = lesson.shift_matrix(k, D, BASE)
    assert matrix.shape == (D, D)
    for row in range(D):
        for col in range(D):
            if row // 2 != col // 2:
                assert matrix[row, col] == 0.0
    for i in range(D // 2):
        angle = k * hand_frequency(i)
        block = matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        expected = torch.tensor(
            [[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]], dtype=torch.float64
        )
        assert torch.allclose(block, expected, atol=1e-12)
        assert torch.det(block).item() == pytest.approx(1.0)


@pytest.mark.parametrize("k", [1, 7, -3])
def test_shifting_by_k_is_one_matrix_for_every_position(k):
    errors = lesson.shift_errors(k, LENGTH, D, BASE)
    assert len(errors) == LENGTH - abs(k)
    assert errors.max() < 1e-6  # float32 table, entries within [-1, 1]


def test_the_error_is_large_with_the_wrong_matrix():
    table = sinusoidal_encoding(LENGTH, D, BASE).double()
    wrong = table[:-3] @ lesson.shift_matrix(2, D, BASE).T  # M_2 applied, PE[p+3] expected
    assert (table[3:] - wrong).abs().max() > 0.1


def test_blocks_frame_reads_the_angles_off_the_matrix():
    frame = lesson.blocks_frame(4, D, BASE, pairs=3)
    assert list(frame["pair i"]) == [0, 1, 2]
    assert frame["M[0,1]"].iloc[1] == pytest.approx(math.sin(4 * hand_frequency(1)))
    assert frame["M[1,0]"].iloc[2] == pytest.approx(-math.sin(4 * hand_frequency(2)))


# ---------------------------------------------------------------- dot products


def test_dot_product_depends_on_the_offset_only_and_is_even():
    frame = lesson.dot_by_offset(LENGTH, D, BASE).set_index("offset")
    assert frame.loc[0, "dot"] == pytest.approx(D / 2, abs=1e-5)  # sin^2 + cos^2 = 1 per pair
    for k in (1, 5, 30):
        by_hand = sum(math.cos(k * hand_frequency(i)) for i in range(D // 2))
        assert frame.loc[k, "dot"] == pytest.approx(by_hand, abs=1e-5)
        assert frame.loc[-k, "dot"] == pytest.approx(frame.loc[k, "dot"], abs=1e-5)
    assert frame["spread"].max() < 1e-5
    assert frame.loc[LENGTH - 1, "pairs"] == 1 and frame.loc[0, "pairs"] == LENGTH


def test_shift_view_plus_and_minus_k_agree_with_the_hand_sum():
    view = lesson.shift_view(6, LENGTH, D, BASE)
    by_hand = sum(math.cos(6 * hand_frequency(i)) for i in range(D // 2))
    assert view.dot_plus == pytest.approx(by_hand, abs=1e-5)
    assert view.dot_minus == pytest.approx(by_hand, abs=1e-5)
    assert view.off_block_max == 0.0 and view.max_error < 1e-6
    assert view.positions_checked == LENGTH - 6


def test_shift_view_refuses_offsets_without_room_on_both_sides():
    with pytest.raises(ValueError, match="2k < length"):
        lesson.shift_view(32, LENGTH, D, BASE)


# ---------------------------------------------------------------- charts


def test_wavelengths_of_the_first_and_last_columns():
    assert lesson.column_wavelength(0, 64, BASE) == pytest.approx(2 * math.pi)
    assert lesson.column_wavelength(63, 64, BASE) == pytest.approx(2 * math.pi * BASE ** (62 / 64))


def test_big_table_heatmap_is_capped_and_charts_follow_the_conventions():
    view = lesson.table_view(512, 256, BASE)
    assert len(view.chart.data) <= MAX_HEATMAP_CELLS
    charts = [
        view.chart,
        lesson.waves_chart(64, D, BASE, (0, 3)),
        lesson.dot_view(64, D, BASE).chart,
        lesson.shift_view(3, 64, D, BASE).matrix_chart,
    ]
    assert all(convention_problems(chart) == [] for chart in charts)


def test_waves_frame_skips_columns_the_table_does_not_have():
    frame = lesson.waves_frame(10, 8, BASE, (1, 8, 99))
    assert set(frame["column"]) == {"1 (cos)"} and len(frame) == 10
    assert frame["value"].iloc[0] == pytest.approx(1.0)  # cos(0)


# ---------------------------------------------------------------- the page


def _metrics(at):
    """The shift section's metrics, in page order: the rotation error, then (once shown) +k and -k."""
    return [metric.value for metric in at.metric if "wavelength" not in metric.label and "2π·base" not in metric.label]


def _skip_prediction(at):
    at.button(key="qc-skip-sinusoidal-sign-of-offset").click().run()
    return at


def test_the_offset_dot_products_wait_for_the_prediction(lesson_page):
    at = lesson_page("sinusoidal")
    assert len(_metrics(at)) == 1  # only the rotation error, until the student predicts or skips
    assert len(_metrics(_skip_prediction(at))) == 3


def test_page_renders_and_k_changes_the_numbers(lesson_page):
    at = _skip_prediction(lesson_page("sinusoidal"))
    before = _metrics(at)
    assert len(before) == 3 and float(before[0]) < 1e-6
    at.slider(key="sin-k").set_value(9).run()
    assert not at.exception
    after = _metrics(at)
    assert after[1] != before[1] and after[1] == after[2]  # +k and -k agree, and k moved them


def test_the_longest_wavelength_is_2_pi_base_to_the_d_minus_2_over_d(lesson_page):
    from tests.app_harness import metrics

    at = lesson_page("sinusoidal")
    shown = metrics(at)
    # d = 64, base 10,000: 2 pi 10000^(62/64) = 2 pi 10^3.875 = 47,117 (not 2 pi base = 62,832)
    assert shown["longest wavelength 2π·base^((d−2)/d) (last pair)"] == "47,117"
    assert shown["2π·base, for comparison"] == "62,832"
    at.select_slider(key="sin-d").set_value(8).run()
    assert not at.exception
    assert metrics(at)["longest wavelength 2π·base^((d−2)/d) (last pair)"] == f"{2 * math.pi * 10**3:,.0f}"


def test_page_dimension_and_base_change_what_is_shown(lesson_page):
    from tests.app_harness import metrics

    at = _skip_prediction(lesson_page("sinusoidal"))
    longest = metrics(at)["longest wavelength 2π·base^((d−2)/d) (last pair)"]
    at.select_slider(key="sin-base").set_value(100).run()
    assert not at.exception and metrics(at)["longest wavelength 2π·base^((d−2)/d) (last pair)"] != longest
    dots = _metrics(at)[1]
    at.select_slider(key="sin-d").set_value(128).run()
    assert not at.exception and _metrics(at)[1] != dots


def test_big_table_is_sampled_not_averaged_so_sin_and_cos_stay_apart():
    view = lesson.table_view(512, 256, BASE)
    cells = view.chart.data
    table = sinusoidal_encoding(512, 256, BASE).double().numpy()
    assert len(cells) <= MAX_HEATMAP_CELLS
    # every drawn cell is the table's own entry at the row and column it names
    assert np.allclose(cells["value"], table[cells["row"], cells["col"]])
    # sin (even) and cos (odd) columns both survive, in pairs: column 2i is drawn with 2i + 1
    kept = set(cells["col"])
    assert {0, 1} <= kept and all((c + 1 if c % 2 == 0 else c - 1) in kept for c in kept)
    # at p = 0 a sin column is 0 and a cos column 1: no 0.5 from averaging the two
    first = cells[cells["row"] == 0]
    assert set(np.round(first["value"], 9)) == {0.0, 1.0}


def test_waves_legend_lists_columns_in_numeric_order():
    spec = lesson.waves_chart(64, 256, BASE, (128, 0, 64)).to_dict()
    assert spec["encoding"]["color"]["sort"] == ["0 (sin)", "64 (sin)", "128 (sin)"]
    assert spec["encoding"]["strokeDash"]["field"] == "column"
