"""The extrapolation lab's charts: accuracy and perplexity against test length, and the passkey
probe's retrieval against the needle's distance. One line per encoding with its seed range as a band,
each encoding with its own colour, point shape and dash (colour is not the only thing telling them apart)."""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd

from poslab.experiments.results import ExtrapolationResults
from poslab.experiments.tiny_transformer import ENCODINGS
from poslab.viz.common import axis_title, y_axis_title
from poslab.viz.extrapolation_data import COLORS, TITLES, chart_frame, percent, probe_frame, train_len_of

ENCODING_TITLES = [TITLES[e] for e in ENCODINGS]


@dataclass(frozen=True)
class Measure:
    """How one number is drawn: its axis, its scale and its reference line."""

    name: str
    unit: str
    log: bool  # a log scale (perplexity), else a share from 0 to 1
    reference: float  # what guessing gets
    reference_label: str
    value_format: str  # d3 format of the tooltip


def _encoding_channels(legend: alt.Legend) -> dict:
    palette = alt.Scale(domain=ENCODING_TITLES, range=[COLORS[e] for e in ENCODINGS])
    return {"color": alt.Color("encoding:N", title="encoding", scale=palette, legend=legend)}


def _y(measure: Measure, field: str, upper: float) -> alt.Y:
    title = y_axis_title(measure.name, measure.unit)
    if measure.log:
        scale = alt.Scale(type="log", domain=[1, upper])
        return alt.Y(f"{field}:Q", title=title, scale=scale, axis=alt.Axis(format="~g"))
    return alt.Y(f"{field}:Q", title=title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))


def _lines(frame: pd.DataFrame, x: alt.X, measure: Measure, upper: float, tooltip: list) -> list[alt.Chart]:
    """The seed band and the mean line with its points, for the rows that ran."""
    # One legend for every layer (switching it off in one switches it off in all), drawn at full opacity:
    # the faint band's swatches made it look switched off.
    legend = alt.Legend(orient="bottom", labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2)
    channels = _encoding_channels(legend)
    runs = alt.Chart(frame[frame["status"] == "ok"])
    band = runs.mark_area(opacity=0.2).encode(x=x, y=_y(measure, "low", upper), y2="high:Q", tooltip=tooltip,
                                              **channels)
    lines = runs.mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=x, y=_y(measure, "mean", upper), tooltip=tooltip,
        shape=alt.Shape("encoding:N", title="encoding", scale=alt.Scale(domain=ENCODING_TITLES), legend=legend),
        strokeDash=alt.StrokeDash("encoding:N", title="encoding", scale=alt.Scale(domain=ENCODING_TITLES),
                                  legend=legend), **channels)
    return [band, lines]


def _cannot_run(frame: pd.DataFrame, x: alt.X, field: str, measure: Measure, upper: float, label: str) -> alt.Chart:
    """"cannot run" on the floor of the chart: there is no number to place it at."""
    blocked = frame[frame["status"] == "cannot run"].groupby("encoding", as_index=False)[field].min()
    floor = 1.0 if measure.log else 0.0
    blocked = blocked.assign(label=blocked["encoding"] + label, mean=floor)
    legend = alt.Legend(orient="bottom", labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2)
    return alt.Chart(blocked).mark_text(align="left", baseline="bottom", dx=2, dy=-1, fontSize=10,
                                        fontStyle="italic").encode(
        x=x, y=_y(measure, "mean", upper), text="label:N", tooltip=[alt.Tooltip("label:N", title="status")],
        **_encoding_channels(legend))


def _rules(x: alt.X, field: str, measure: Measure, upper: float, at: float) -> list[alt.Chart]:
    """A dashed vertical rule at the training length and a dotted one at what guessing gets."""
    marks = pd.DataFrame({field: [at], "mean": [measure.reference], "label": [measure.reference_label]})
    trained = alt.Chart(marks).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    y = _y(measure, "mean", upper)
    reference = alt.Chart(marks).mark_rule(strokeDash=[2, 2], color="gray").encode(y=y)
    text = alt.Chart(marks).mark_text(align="left", baseline="bottom", dx=4, dy=-2, x=0, color="gray").encode(
        y=y, text="label:N")
    return [trained, reference, text]


def _upper(frame: pd.DataFrame, measure: Measure) -> float:
    return max([measure.reference, *frame["high"].dropna().tolist()]) * 1.25 if measure.log else 1.0


def length_chart(results: ExtrapolationResults, measure: Measure, title: str, description: str) -> alt.LayerChart:
    """``measure`` against evaluation length (log scale); ``accuracy`` or ``perplexity`` of the recall task."""
    metric = "accuracy" if not measure.log else "perplexity"
    frame = chart_frame(results, metric)
    train_len = train_len_of(results)
    lengths = sorted(frame["eval_len"].unique().tolist())
    x = alt.X("eval_len:Q", title=axis_title("evaluation length", "tokens, log scale"),
              scale=alt.Scale(type="log", base=2, domain=[lengths[0] / 1.15, lengths[-1] * 1.15]),
              axis=alt.Axis(values=lengths, format="d",
                            labelExpr=f"datum.value == {train_len} ? '{train_len} (trained)' : datum.label"))
    upper = _upper(frame, measure)
    tooltip = [alt.Tooltip("encoding:N"), alt.Tooltip("eval_len:Q", title="evaluation length (tokens)"),
               alt.Tooltip("multiple:Q", title="x training length"),
               alt.Tooltip("mean:Q", title=f"mean {measure.name}", format=measure.value_format),
               alt.Tooltip("low:Q", title="lowest seed", format=measure.value_format),
               alt.Tooltip("high:Q", title="highest seed", format=measure.value_format), alt.Tooltip("seeds:Q")]
    layers = _lines(frame, x, measure, upper, tooltip)
    if (frame["status"] == "cannot run").any():
        layers.append(_cannot_run(frame, x, "eval_len", measure, upper, ": cannot run from here on"))
    return alt.layer(*layers, *_rules(x, "eval_len", measure, upper, train_len), title=title).properties(
        height=340, description=description)


def passkey_chart(results: ExtrapolationResults, eval_len: int, title: str, description: str) -> alt.LayerChart:
    """Retrieval against how far back the needle is, at one test length."""
    frame = probe_frame(results)
    frame = frame[frame["eval_len"] == eval_len].assign(depth_label=lambda f: f["depth"].map(percent))
    train_len = train_len_of(results)
    measure = Measure("retrieval", "share of needles", False, results.record.probe_chance or 0.0,
                      f"chance {percent(results.record.probe_chance or 0.0)}", ".0%")
    distances = sorted(frame["distance"].unique().tolist())
    x = alt.X("distance:Q", title=axis_title("needle's distance from the query", "tokens, log scale"),
              scale=alt.Scale(type="log", base=2, domain=[distances[0] / 1.3, max(distances[-1], train_len) * 1.3]),
              axis=alt.Axis(values=sorted({*distances, train_len}), format="d",
                            labelExpr=f"datum.value == {train_len} ? '{train_len} (trained)' : datum.label"))
    tooltip = [alt.Tooltip("encoding:N"), alt.Tooltip("depth_label:N", title="needle depth"),
               alt.Tooltip("distance:Q", title="tokens back from the query"),
               alt.Tooltip("mean:Q", title="retrieved (mean)", format=".0%"),
               alt.Tooltip("low:Q", title="lowest seed", format=".0%"),
               alt.Tooltip("high:Q", title="highest seed", format=".0%"), alt.Tooltip("needles:Q")]
    layers = _lines(frame, x, measure, 1.0, tooltip)
    if (frame["status"] == "cannot run").any():
        layers.append(_cannot_run(frame, x, "distance", measure, 1.0, ": cannot run at this length"))
    return alt.layer(*layers, *_rules(x, "distance", measure, 1.0, train_len), title=title).properties(
        height=340, description=description)
