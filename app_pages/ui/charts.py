"""Charts converted to Vega-Lite once per chart, not on every run of every session.

``st.altair_chart`` turns the Altair object into a Vega-Lite spec on every run: ``to_dict``
validates the whole spec against Vega-Lite's JSON schema and the chart's data frames are written
as Arrow. Under a class that was a quarter of the server's time (a py-spy profile, 30 sessions),
for charts that had not changed. Here the spec (with its data as Arrow, exactly what
``st.altair_chart`` sends) is kept by the chart's content: the pickled chart, hashed, is its key
(0.1 ms against 3 to 11 ms for a conversion). A chart built again with the same inputs pickles
to the same bytes, so a page's charts are converted once per process and knob setting, whichever
session asks first.

The conversion is Streamlit's own (``_convert_altair_to_vega_lite_spec``, streamlit==1.67.0 is
pinned): the element drawn is the one ``st.altair_chart`` draws (``tests/test_charts.py`` checks
that). If a later Streamlit lacks it, or a chart does not pickle, charts are drawn as before.

Two changes on the way (``laid_out``):

* ``wrap_titles``: Vega-Lite draws a chart title on one line and cuts it at the chart's width with
  an ellipsis, so at 800 px (a 500 px page beside the sidebar) a long title read "RoFormer's
  relative upper bound on the score (D=64): not m…". Long titles go in lines.
* ``fit_width_only``: Streamlit fits a chart into a fixed box (350 px, or the spec's height) in
  both directions. A two-line title, a bottom legend and a rotated axis title then leave the plot
  a few dozen pixels, the axis title overflows it, and Vega's one-pass fit puts the title above
  the box, where it is cut: all five charts of the inference-engine lesson lost a title line. A
  single view's height is its plot's, and the chart grows to hold its title and legend.
"""

from __future__ import annotations

import hashlib
import pickle
import textwrap

import altair as alt
import pandas as pd
import pyarrow as pa
import streamlit as st

try:
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as _to_vega_lite
except ImportError:  # not in this Streamlit: every chart through st.altair_chart
    _to_vega_lite = None

# Kept apart from the library results' cache; a large heatmap's spec is a few hundred KB.
SPEC_CACHE = {"max_entries": 1024, "max_size": "128MB"}
# A line of a bold chart title that fits a full-width chart on a 500 px page (measured in Chromium).
TITLE_LINE_CHARS = 48


def fingerprint(chart: alt.TopLevelMixin) -> str | None:
    """The hash of the pickled chart (its data included), or None if it does not pickle."""
    try:
        return hashlib.blake2b(pickle.dumps(chart, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).hexdigest()
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


@st.cache_data(show_spinner=False, **SPEC_CACHE)
def _spec(key: str, _chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of the chart whose fingerprint is ``key`` (``_chart`` is not hashed)."""
    return laid_out(_to_vega_lite(_chart))


def laid_out(spec: dict) -> dict:
    """The spec as the app draws it: long titles in lines, the height the plot's (see the docstring)."""
    return fit_width_only(wrap_titles(spec))


# The plot's height when a chart sets none (Streamlit's box was 350 px for plot, title and legend),
# and room above the title: Chromium's box of a 16 px title line reaches 3 px above Vega's estimate.
PLOT_HEIGHT = 260
PADDING = {"top": 8, "bottom": 5, "left": 5, "right": 5}
COMPOSED = ("facet", "repeat", "hconcat", "vconcat", "concat")  # Vega-Lite fits single and layered views only


def fit_width_only(spec: dict) -> dict:
    """A single or layered view fits the page's width; its height is the plot's, and the chart is as tall
    as plot, title, axes and legend together (Vega-Lite's ``fit-x``). The spec's own choices are kept."""
    spec = {"padding": PADDING, **spec}  # composed views too: their title has the same headroom
    if any(key in spec for key in COMPOSED) or "autosize" in spec:
        return spec
    spec["autosize"] = {"type": "fit-x", "contains": "padding"}
    if "height" not in spec and not any(
        "height" in layer for layer in spec.get("layer", []) if isinstance(layer, dict)
    ):
        spec["height"] = PLOT_HEIGHT
    return spec


def wrap_titles(spec: dict) -> dict:
    """The spec with every chart title longer than ``TITLE_LINE_CHARS`` in lines (Vega-Lite's list of
    lines), in the spec and in its layers, facets and concatenations; axis and legend titles as they are."""
    spec = dict(spec)
    title = spec.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if isinstance(text, str) and len(text) > TITLE_LINE_CHARS:
        lines = textwrap.wrap(text, TITLE_LINE_CHARS)
        spec["title"] = {**title, "text": lines} if isinstance(title, dict) else lines
    for key in ("layer", "hconcat", "vconcat", "concat"):
        if isinstance(spec.get(key), list):
            spec[key] = [wrap_titles(child) if isinstance(child, dict) else child for child in spec[key]]
    if isinstance(spec.get("spec"), dict):
        spec["spec"] = wrap_titles(spec["spec"])
    return spec


@st.cache_data(show_spinner=False, **SPEC_CACHE)
def _numbers(key: str, _chart: alt.TopLevelMixin) -> pa.Table:
    # As Arrow: st.dataframe writes a table as it is, and converts a data frame to one first,
    # exactly so (pyarrow's from_pandas), on every run.
    return pa.Table.from_pandas(chart_numbers(_chart))


def draw(chart: alt.TopLevelMixin) -> str | None:
    """Draw the chart as ``st.altair_chart(chart, width="stretch")`` does; its fingerprint, if any."""
    key = fingerprint(chart) if _to_vega_lite is not None else None
    if key is None:
        st.altair_chart(chart, width="stretch")
    else:
        st.vega_lite_chart(spec=_spec(key, chart), width="stretch")
    return key


def numbers(chart: alt.TopLevelMixin, key: str | None) -> pd.DataFrame | pa.Table:
    """What ``st.dataframe`` shows under the chart: the chart's numbers, as Arrow once converted."""
    return chart_numbers(chart) if key is None else _numbers(key, chart)


def chart_numbers(chart: alt.TopLevelMixin) -> pd.DataFrame:
    """The data a chart draws (a layered chart's first data frame); a heatmap's as a row x column table."""
    charts = [chart, *getattr(chart, "layer", [])]
    data = next((c.data for c in charts if isinstance(getattr(c, "data", None), pd.DataFrame)), pd.DataFrame())
    if {"row", "col", "value"} <= set(data.columns):
        return data.pivot(index="row", columns="col", values="value")
    return data.reset_index(drop=True)
