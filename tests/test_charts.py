"""Charts drawn from a spec converted once (app_pages/ui/charts.py) are the ones st.altair_chart draws."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from app_pages.ui import charts
from poslab.viz import permutation, sinusoidal

CHART_BUILDERS = {
    "heatmap": "sinusoidal.table_view(length=32, d_model=16, base=10000.0).chart",
    "layered": "rope.decay_chart(head_dim=16, base=10000.0, max_distance=250)",
    "facet": "rope.clock_chart(head_dim=16, base=10000.0, m=3, n=10)",
}


def _draw(kind: str, how: str) -> None:
    import streamlit as st

    from app_pages.ui import charts, frame  # noqa: F401 - the page's own modules
    from poslab.viz import rope, sinusoidal  # noqa: F401 - used by the expression

    built = eval(kind)  # noqa: S307 - one of CHART_BUILDERS, written above
    if how == "altair":
        st.altair_chart(built, width="stretch")
    else:
        frame.chart(built, numbers=True)


def drawn(expression: str, how: str) -> tuple[dict, list[bytes], AppTest]:
    at = AppTest.from_function(_draw, args=(expression, how), default_timeout=60).run()
    assert not at.exception, at.exception
    [element] = at.get("vega_lite_chart")
    return json.loads(element.proto.spec), [dataset.data.data for dataset in element.proto.datasets], at


def _table(frame, how: str) -> None:
    import pyarrow as pa
    import streamlit as st

    st.dataframe(frame if how == "frame" else pa.Table.from_pandas(frame))


def test_numbers_as_arrow_are_the_bytes_st_dataframe_sends_for_the_frame():
    heatmap = charts.chart_numbers(sinusoidal.table_view(length=16, d_model=8, base=10000.0).chart)
    for frame in (heatmap, heatmap.reset_index(drop=True)):
        sent = {}
        for how in ("frame", "arrow"):
            at = AppTest.from_function(_table, args=(frame, how), default_timeout=60).run()
            sent[how] = at.dataframe[0].proto.arrow_data.data
        assert sent["frame"] == sent["arrow"] and sent["frame"]


def test_a_converted_chart_is_the_element_st_altair_chart_draws():
    for name, expression in CHART_BUILDERS.items():
        direct_spec, direct_data, _ = drawn(expression, "altair")
        cached_spec, cached_data, at = drawn(expression, "frame")
        expected = charts.laid_out(direct_spec)  # the same, laid out (long titles in lines)
        # The size is the layout's and Streamlit's to settle (fit or fit-x, a plot height); the content is the same.
        assert cached_spec.pop("autosize")["contains"] == expected.pop("autosize")["contains"] == "padding", name
        assert cached_spec.pop("height", charts.PLOT_HEIGHT) == expected.pop("height", charts.PLOT_HEIGHT), name
        assert cached_spec == expected, name
        assert cached_data == direct_data and cached_data, name
        assert at.get("vega_lite_chart")[0].proto.theme == "streamlit"
        assert len(at.dataframe) == 1, f"{name}: the numbers under the chart"


def test_the_same_chart_built_twice_has_one_fingerprint_and_other_knobs_another():
    first = sinusoidal.table_view(length=32, d_model=16, base=10000.0).chart
    again = sinusoidal.table_view(length=32, d_model=16, base=10000.0).chart
    other = sinusoidal.table_view(length=48, d_model=16, base=10000.0).chart
    assert charts.fingerprint(first) == charts.fingerprint(again) is not None
    assert charts.fingerprint(first) != charts.fingerprint(other)
    tokens = permutation.sentence_tokens(next(iter(permutation.PRESETS)), 6)
    order = permutation.suggested_order(next(iter(permutation.PRESETS)), len(tokens))
    result = permutation.equivariance_experiment(
        tokens=tokens, order=order, d_model=8, seed=0, positional=False, causal=False, pooled=False
    )
    built_twice = [permutation.comparison_charts(result), permutation.comparison_charts(result)]
    assert [charts.fingerprint(c) for c in built_twice[0]] == [charts.fingerprint(c) for c in built_twice[1]]


def test_long_titles_are_drawn_in_lines_short_ones_and_axis_titles_as_they_are():
    long_title = "RoFormer's relative upper bound on the score (D=64): not monotone, not an expected score"
    spec = {
        "title": long_title,
        "layer": [
            {
                "title": {"text": long_title, "anchor": "start"},
                "mark": "line",
                "encoding": {"x": {"field": "d", "title": long_title}},
            }
        ],
        "spec": {"title": "short"},
    }
    wrapped = charts.wrap_titles(spec)
    assert all(len(line) <= charts.TITLE_LINE_CHARS for line in wrapped["title"]) and len(wrapped["title"]) == 2
    assert " ".join(wrapped["title"]) == long_title
    assert wrapped["layer"][0]["title"] == {"text": wrapped["title"], "anchor": "start"}
    assert wrapped["layer"][0]["encoding"]["x"]["title"] == long_title and wrapped["spec"]["title"] == "short"
    assert spec["title"] == long_title  # the cached spec it came from is not changed


def test_numbers_of_a_heatmap_are_a_row_by_column_table():
    table = charts.chart_numbers(sinusoidal.table_view(length=32, d_model=16, base=10000.0).chart)
    assert table.shape == (32, 16)
    assert table.index.name == "row"
