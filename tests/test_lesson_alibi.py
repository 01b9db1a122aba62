"""ALiBi lesson: slopes incl. non-powers of two, windows by hand, the bias heatmap, the page."""

import math

import pytest

from poslab.viz import alibi as lesson
from poslab.viz.common import MAX_HEATMAP_CELLS, convention_problems
from tests.app_harness import chart_titles

TWELVE_HEADS = [2**-e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]  # the paper's rule, by hand


def test_twelve_heads_take_eight_plus_the_odd_sixteen_head_slopes():
    frame = lesson.slopes_frame(12)
    assert list(frame["slope"]) == pytest.approx(TWELVE_HEADS)
    assert (frame["set"] == "8-head set").sum() == 8
    assert list(frame["rule"].iloc[8:]) == ["2^(-4·1/8)", "2^(-4·3/8)", "2^(-4·5/8)", "2^(-4·7/8)"]
    assert (frame["set"].iloc[8:] == "odd steps of the 16-head set").all()


def test_power_of_two_heads_form_a_geometric_sequence():
    slopes = list(lesson.slopes_frame(4)["slope"])
    assert slopes == pytest.approx([2**-2, 2**-4, 2**-6, 2**-8])
    assert lesson.power_of_two_below(4) == 4 and lesson.power_of_two_below(12) == 8


def test_slope_rule_names_the_case():
    assert "not a power of two" in lesson.slope_rule(12) and "c = 8" in lesson.slope_rule(12)
    assert "Heads 8-11" in lesson.slope_rule(12) and "Head 2:" in lesson.slope_rule(3)
    assert "is a power of two" in lesson.slope_rule(16)


def test_window_is_ln_100_over_the_slope_by_hand():
    frame = lesson.window_frame(8, 0.01)
    assert frame["window"].iloc[0] == pytest.approx(4.605170186 / 0.5)  # ln 100 = 4.60517...
    assert frame["window"].iloc[7] == pytest.approx(4.605170186 * 256)
    ratios = frame["window"].iloc[1:].to_numpy() / frame["window"].iloc[:-1].to_numpy()
    assert ratios == pytest.approx([2.0] * 7)  # halving the slope doubles the window


def test_window_at_other_ratios_and_bad_ratios():
    assert lesson.window_frame(1, 0.1)["window"].iloc[0] == pytest.approx(math.log(10) * 256)
    for bad in (0.0, 1.0, 2.0):
        with pytest.raises(ValueError, match="between 0 and 1"):
            lesson.window_frame(8, bad)


def test_slopes_view_reports_the_penalty_and_power_of_two():
    view = lesson.slopes_view(12, 0.01)
    assert view.power_of_two == 8 and view.penalty == pytest.approx(-4.605170186)
    assert len(view.table) == 12 and convention_problems(view.chart) == []


def test_bias_heatmap_masks_the_future_and_is_capped():
    chart = lesson.bias_chart(8, 0, 16)
    frame = chart.data
    assert len(frame) == 16 * 16 and frame["value"].isna().sum() == 16 * 15 // 2
    cell = frame[(frame["row"] == 5) & (frame["col"] == 2)]["value"].item()
    assert cell == pytest.approx(-0.5 * 3)  # -m (i - j), m = 1/2 for head 0 of 8
    assert len(lesson.bias_chart(8, 0, 200).data) <= MAX_HEATMAP_CELLS
    assert convention_problems(chart) == []
    with pytest.raises(ValueError):
        lesson.bias_chart(8, 8, 16)


def test_recency_weights_are_exp_minus_m_d():
    frame = lesson.recency_frame(2, 10)
    head1 = frame[frame["head"] == 1].set_index("distance")["weight"]
    assert head1[0] == 1.0 and head1[10] == pytest.approx(math.exp(-10 / 256))  # 2 heads: m = 1/16, 1/256
    steep = lesson.recency_frame(1, 5000)  # m = 1/256: exp(-d/256) >= 1e-6 up to d = 256 ln(1e6) = 3536.8
    assert steep["distance"].max() == 3536
    assert convention_problems(lesson.recency_chart(4, 20)) == []


def test_the_recency_lines_of_twelve_heads_are_told_apart_by_a_multi_hue_palette():
    scale = lesson.recency_chart(12, 20).to_dict()["layer"][0]["encoding"]["color"].get("scale", {})
    # Vega-Lite's default for an ordinal field is one hue (blues): 12 heads came out near-identical.
    assert scale.get("scheme") in {"viridis", "plasma", "inferno", "magma", "turbo", "cividis"}, scale


def test_moving_the_whole_sequence_changes_nothing_with_alibi_but_changes_an_added_table():
    moved = lesson.shifted_inputs(4, 8, 100)
    assert moved.alibi_difference < 1e-12
    assert moved.sinusoidal_difference > 1e-2


# ---------------------------------------------------------------- the page


def test_page_head_count_changes_the_slopes_table(lesson_page):
    at = lesson_page("alibi")
    table = at.dataframe[0].value
    assert len(table) == 12 and list(table["slope"]) == pytest.approx(TWELVE_HEADS)
    assert "c = 8" in at.info[0].value
    at.slider(key="alibi-heads").set_value(8).run()
    assert not at.exception and len(at.dataframe[0].value) == 8 and "is a power of two" in at.info[0].value


def test_page_ratio_head_and_offset_widgets_change_what_is_shown(lesson_page):
    at = lesson_page("alibi")
    caption = [c.value for c in at.caption]
    at.select_slider(key="alibi-ratio").set_value("1/10").run()
    assert not at.exception and [c.value for c in at.caption] != caption
    assert any("Head 0 of 12" in title for title in chart_titles(at))
    at.selectbox(key="alibi-head-12").set_value(11).run()
    assert not at.exception and any("Head 11 of 12" in title for title in chart_titles(at))
    assert at.metric[0].value == "0.0e+00"
    sinusoidal = at.metric[1].value
    at.slider(key="alibi-offset").set_value(7).run()
    assert not at.exception and at.metric[1].value != sinusoidal and at.metric[0].value == "0.0e+00"


def test_one_head_gets_one_slope_in_words_not_a_sequence_from_2_to_itself():
    rule = lesson.slope_rule(1)
    assert "2^(-8)" in rule and "sequence from" not in rule
    assert "from 2^(-1) down to 2^(-8)" in lesson.slope_rule(8)  # brackets on both ends


def test_recency_line_labels_name_every_line_reaching_the_edge_and_never_crowd_the_floor():
    labels = lesson.line_end_labels(lesson.recency_frame(12, 200), 200)
    at_edge = labels[labels["distance"] == 200]
    on_floor = labels[labels["distance"] < 200].sort_values("distance")
    assert len(at_edge) >= 1 and set(at_edge["name"]) == {f"head {h}" for h in at_edge["head"]}
    assert (on_floor["distance"].diff().dropna() >= 20).all()
