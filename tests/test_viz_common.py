"""poslab.viz.common: the heatmap cap, block reduction, labels and the chart conventions."""

import math

import altair as alt
import numpy as np
import pandas as pd
import pytest
import torch

from poslab.viz.common import MAX_HEATMAP_CELLS, axis_title, block_strides, convention_problems, heatmap, matrix_frame


def test_axis_title_names_the_unit():
    assert axis_title("key position", "token index") == "key position (token index)"
    assert axis_title("weight") == "weight"


@pytest.mark.parametrize("shape", [(5, 5), (70, 70), (71, 71), (300, 300), (10_000, 8), (3, 9_000), (2048, 2048)])
def test_block_strides_respect_the_cap(shape):
    n_rows, n_cols = shape
    row_stride, col_stride = block_strides(n_rows, n_cols)
    assert math.ceil(n_rows / row_stride) * math.ceil(n_cols / col_stride) <= MAX_HEATMAP_CELLS


def test_small_matrices_are_not_reduced_and_thin_ones_shrink_along_the_long_side():
    assert block_strides(70, 70) == (1, 1)  # 4,900 cells fit
    row_stride, col_stride = block_strides(10_000, 8)
    assert col_stride == 1 and row_stride >= 10_000 * 8 / MAX_HEATMAP_CELLS


def test_matrix_frame_caps_cells_and_covers_every_index():
    frame = matrix_frame(np.ones((300, 250)))
    assert len(frame) <= MAX_HEATMAP_CELLS
    assert frame["row"].min() == 0 and frame["row_end"].max() == 299
    assert frame["col"].min() == 0 and frame["col_end"].max() == 249
    assert np.allclose(frame["value"], 1.0)


def test_block_mean_and_max_are_what_a_hand_computation_gives():
    matrix = np.arange(16, dtype=float).reshape(4, 4)  # 4 blocks of 2x2 when capped at 4 cells
    mean = matrix_frame(matrix, max_cells=4).set_index(["row", "col"])["value"]
    # top-left block holds 0, 1, 4, 5 -> mean 2.5, max 5; bottom-right 10, 11, 14, 15 -> 12.5, 15
    assert mean[(0, 0)] == pytest.approx(2.5) and mean[(2, 2)] == pytest.approx(12.5)
    biggest = matrix_frame(matrix, max_cells=4, reduce="max").set_index(["row", "col"])["value"]
    assert biggest[(0, 0)] == 5 and biggest[(2, 2)] == 15


def test_ragged_edge_blocks_average_only_real_entries():
    matrix = np.array([[1.0, 2.0, 3.0]])
    frame = matrix_frame(matrix, max_cells=2)  # strides (1, 2): blocks {1, 2} and {3}
    assert list(frame["value"]) == [1.5, 3.0]
    assert list(frame["col_end"]) == [1, 2]


def test_masked_entries_become_missing_not_infinite():
    frame = matrix_frame([[0.0, float("-inf")], [1.0, 2.0]])
    assert frame["value"].isna().sum() == 1
    assert np.isfinite(frame["value"].dropna()).all()


def test_tensors_and_lists_give_the_same_frame():
    values = [[0.25, 0.75], [0.5, 0.5]]
    pd.testing.assert_frame_equal(matrix_frame(values), matrix_frame(torch.tensor(values)))


def test_repeated_labels_stay_distinct_columns():
    frame = matrix_frame(np.eye(3), col_labels=["the", "dog", "the"], row_labels=["a", "b", "c"])
    assert frame["col_label"].nunique() == 3
    assert frame.loc[(frame["row"] == 0) & (frame["col"] == 2), "col_label"].item() == "2 the"


@pytest.mark.parametrize("bad", [np.ones(3), np.ones((2, 2, 2)), np.ones((0, 3))])
def test_non_matrices_are_refused(bad):
    with pytest.raises(ValueError):
        matrix_frame(bad)


def test_wrong_label_count_is_refused():
    with pytest.raises(ValueError, match="2 row labels for 3 rows"):
        matrix_frame(np.eye(3), row_labels=["a", "b"])


def test_heatmap_follows_the_conventions_and_says_when_it_reduced():
    chart = heatmap(
        np.random.default_rng(0).normal(size=(200, 200)),
        title="Weights",
        x_title="key (position)",
        y_title="query (position)",
        value_title="weight",
    )
    spec = chart.to_dict()
    assert convention_problems(chart) == []
    assert spec["encoding"]["x"]["title"] == "key (position)"
    assert {t["field"] for t in spec["encoding"]["tooltip"]} >= {"row", "col", "value"}
    assert "block" in spec["title"]
    assert len(chart.data) <= MAX_HEATMAP_CELLS


def test_small_heatmap_keeps_its_title_and_every_cell():
    chart = heatmap(np.eye(4), title="Identity", x_title="x (i)", y_title="y (i)", value_title="v")
    assert chart.to_dict()["title"] == "Identity"
    assert len(chart.data) == 16


def test_convention_problems_finds_what_is_missing():
    bare = alt.Chart(pd.DataFrame({"a": [1], "b": [2]})).mark_point().encode(x="a:Q", y="b:Q")
    problems = convention_problems(bare)
    assert "no chart title" in problems and "no tooltip" in problems
    assert any("x axis has no title" in p for p in problems)


def test_a_fixed_domain_reaches_the_colour_scale():
    chart = heatmap(np.eye(2), title="t", x_title="x (i)", y_title="y (i)", value_title="v", domain=(-2.0, 2.0))
    assert chart.to_dict()["encoding"]["color"]["scale"]["domain"] == [-2.0, 2.0]


def test_rows_get_a_fixed_pixel_step_that_shrinks_for_tall_matrices():
    from poslab.viz.common import row_step

    assert row_step(5) == 24 and row_step(100) == 4 and row_step(5_000) == 1
    chart = heatmap(np.eye(5), title="t", x_title="x (i)", y_title="y (i)", value_title="v")
    assert chart.to_dict()["height"] == {"step": 24}
    assert (
        heatmap(np.eye(5), title="t", x_title="x (i)", y_title="y (i)", value_title="v", height=300).to_dict()["height"]
        == 300
    )


def test_long_y_titles_break_before_the_unit_and_short_ones_stay_whole():
    from poslab.viz.common import Y_TITLE_MAX_CHARS, y_axis_title

    long_name = "angle at T / largest trained angle"
    assert len(f"{long_name} (ratio)") > Y_TITLE_MAX_CHARS
    assert y_axis_title(long_name, "ratio") == [long_name, "(ratio)"]
    assert y_axis_title("value", "unitless") == "value (unitless)"
    assert y_axis_title(long_name) == long_name  # no unit: nothing to break before
