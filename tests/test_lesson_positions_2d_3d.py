"""Positions in 2D and 3D: the views' checks against their meaning, the charts' conventions, and the page."""

import pytest
import torch

from poslab.encodings import rope_nd
from poslab.viz import rope_nd as lesson
from poslab.viz.common import convention_problems
from tests.app_harness import chart_titles, metrics, numbers

LESSON = "positions-2d-3d"
ROUNDING = 1e-12


def test_grid_view_checks_hold_and_fail_where_they_should():
    view = lesson.grid_view(5, 6, 2, 3, shift=(2, 3))
    assert view.offset_error < ROUNDING and view.permutation_error < ROUNDING
    assert view.positions_left_behind > 1e-2  # position is read: moving tokens without positions changes scores
    assert view.mirror_difference > 1e-3 and view.raster_rows_vs_cols > 1e-3


def test_grid_score_map_is_centred_on_the_query_and_moves_with_it():
    # The same key everywhere: the score depends on (row - query row, col - query col) only.
    a = lesson.grid_view(6, 6, 1, 1, shift=(0, 0)).chart_2d.to_dict()
    b = lesson.grid_view(6, 6, 2, 3, shift=(0, 0)).chart_2d.to_dict()
    values_a = {(r["row"], r["col"]): r["value"] for r in a["datasets"][next(iter(a["datasets"]))]}
    values_b = {(r["row"], r["col"]): r["value"] for r in b["datasets"][next(iter(b["datasets"]))]}
    for (row, col), value in values_a.items():
        if (row + 1, col + 2) in values_b:
            assert values_b[(row + 1, col + 2)] == pytest.approx(value, abs=1e-9)
    # one token's query against its own key: the score peaks where the key sits on the query
    assert max(values_b, key=values_b.get) == (2, 3) and max(values_a, key=values_a.get) == (1, 1)


def test_mrope_view_counts_tokens_and_ids_and_its_checks_hold():
    view = lesson.mrope_view(5, 3, 4, 3, 2)
    assert view.tokens == 5 + 12 + 3 + 2 * 4
    # text 0..4, image ids 5..8 (max(3, 4) = 4 ids), text 9..11, video from 12: frames 12..13, rows/cols 12..13
    assert view.largest_id == 13
    assert view.offset_error < ROUNDING and view.permutation_error < ROUNDING and view.text_vs_1d < ROUNDING
    assert list(view.table.columns) == ["token", "segment", *rope_nd.AXES]


def test_views_follow_the_chart_conventions():
    grid = lesson.grid_view(4, 4, 1, 1, shift=(1, 1))
    for chart in (grid.chart_2d, grid.chart_raster, lesson.mrope_view(2, 2, 2, 2, 1).chart):
        assert convention_problems(chart) == [] and len(chart.to_dict()["description"]) > 40


def test_page_shows_the_checks_and_follows_its_sliders(lesson_page):
    at = lesson_page(LESSON)
    assert not at.exception
    shown = metrics(at)
    assert float(shown["offset: every patch moved by (2, 3)"]) < ROUNDING
    assert float(shown["permutation, positions left behind"]) > 1e-2
    assert float(shown["text only: M-RoPE vs 1D RoPE"]) < ROUNDING
    assert shown["tokens"] == str(5 + 12 + 3 + 8) and shown["largest position id"] == "13"
    assert len(chart_titles(at)) == 3 and numbers(at, 0).shape[0] == 8  # one row per grid row
    at.slider(key="nd-image-rows").set_value(6).run()
    assert (
        not at.exception and metrics(at)["largest position id"] == "15"
    )  # text 0-4, image 5-10, text 11-13, video 14-15
    at.slider(key="nd-height").set_value(4).run()
    assert not at.exception and numbers(at, 0).shape[0] == 4


def test_reference_positions_are_the_ones_the_view_charts():
    # text at 0; a 1 x 2 image from 1 (its largest id is 2, in the width); the text after it at 3
    positions, _ = rope_nd.mrope_positions(lesson.layout(1, 1, 2, 1, 0))
    assert torch.equal(positions, torch.tensor([[0, 1, 1, 3], [0, 1, 1, 3], [0, 1, 2, 3]]))
