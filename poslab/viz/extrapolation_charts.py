"""The extrapolation lab's charts: accuracy and perplexity against test length, and the passkey
probe's retrieval against the needle's distance. One line per encoding with its seed range as a band,
each encoding with its own colour, point shape and dash (colour is not the only thing telling them apart)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import pandas as pd

from poslab.experiments.results import ExtrapolationResults
from poslab.experiments.rope_arms import ARMS
from poslab.viz.common import axis_title, y_axis_title
from poslab.viz.extrapolation_data import COLORS, TITLES, chart_frame, train_len_of


@dataclass(frozen=True)
class Measure:
    """How one number is drawn: its axis, its scale and its reference line."""

    name: str
    unit: str
    log: bool  # a log scale (perplexity), else a share from 0 to 1
    reference: float  # what guessing gets
    reference_label: str
    value_format: str  # d3 format of the tooltip


def arms_in(frame: pd.DataFrame) -> list[str]:
    """The arms a chart's frame holds, in ``ARMS`` order: the legend lists these and no others."""
    return [arm for arm in ARMS if TITLES[arm] in set(frame["encoding"])]


def _encoding_channels(legend: alt.Legend, arms: list[str]) -> dict:
    palette = alt.Scale(domain=[TITLES[e] for e in arms], range=[COLORS[e] for e in arms])
    return {"color": alt.Color("encoding:N", title="encoding", scale=palette, legend=legend)}


def y_encoding(measure: Measure, field: str, upper: float) -> alt.Y:
    title = y_axis_title(measure.name, measure.unit)
    if measure.log:
        scale = alt.Scale(type="log", domain=[1, upper])
        decades = [10**power for power in range(0, 1 + int(math.log10(upper)))]
        return alt.Y(f"{field}:Q", title=title, scale=scale, axis=alt.Axis(format="~g", values=decades))
    return alt.Y(f"{field}:Q", title=title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))


def lines(frame: pd.DataFrame, x: alt.X, measure: Measure, upper: float, tooltip: list) -> list[alt.Chart]:
    """The seed band and the mean line with its points, for the rows that ran."""
    # One legend for every layer (switching it off in one switches it off in all), drawn at full opacity:
    # the faint band's swatches made it look switched off.
    legend = alt.Legend(orient="bottom", labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2)
    arms = arms_in(frame)
    titles = [TITLES[e] for e in arms]
    channels = _encoding_channels(legend, arms)
    runs = alt.Chart(frame[frame["status"] == "ok"])
    band = runs.mark_area(opacity=0.2).encode(
        x=x, y=y_encoding(measure, "low", upper), y2="high:Q", tooltip=tooltip, **channels
    )
    lines = runs.mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=x,
        y=y_encoding(measure, "mean", upper),
        tooltip=tooltip,
        shape=alt.Shape("encoding:N", title="encoding", scale=alt.Scale(domain=titles), legend=legend),
        strokeDash=alt.StrokeDash("encoding:N", title="encoding", scale=alt.Scale(domain=titles), legend=legend),
        **channels,
    )
    return [band, lines]


def cannot_run(
    frame: pd.DataFrame, x: alt.X, field: str, measure: Measure, upper: float, label: str, at_top: bool
) -> alt.Chart:
    """ "cannot run" at the floor or the ceiling of the chart (where the lines leave room): there is no
    number to place it at."""
    blocked = frame[frame["status"] == "cannot run"].groupby("encoding", as_index=False)[field].min()
    blocked = blocked.assign(label=blocked["encoding"] + label, mean=upper if at_top else (1.0 if measure.log else 0.0))
    legend = alt.Legend(orient="bottom", labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2)
    return (
        alt.Chart(blocked)
        .mark_text(
            align="left",
            baseline="top" if at_top else "bottom",
            dx=2,
            dy=1 if at_top else -1,
            fontSize=10,
            fontStyle="italic",
        )
        .encode(
            x=x,
            y=y_encoding(measure, "mean", upper),
            text="label:N",
            tooltip=[alt.Tooltip("label:N", title="status")],
            **_encoding_channels(legend, arms_in(frame)),
        )
    )


def _training_rule(x: alt.X, field: str, at: float) -> alt.Chart:
    """A dashed vertical rule at the training length."""
    return alt.Chart(pd.DataFrame({field: [at]})).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)


def reference(measure: Measure, upper: float) -> list[alt.Chart]:
    """A dotted horizontal rule, labelled, at what guessing gets."""
    marks = pd.DataFrame({"mean": [measure.reference], "label": [measure.reference_label]})
    y = y_encoding(measure, "mean", upper)
    rule = alt.Chart(marks).mark_rule(strokeDash=[2, 2], color="gray").encode(y=y)
    text = (
        alt.Chart(marks)
        .mark_text(align="left", baseline="bottom", dx=4, dy=-2, x=0, color="gray")
        .encode(y=y, text="label:N")
    )
    return [rule, text]


def _upper(frame: pd.DataFrame, measure: Measure) -> float:
    return max([measure.reference, *frame["high"].dropna().tolist()]) * 1.25 if measure.log else 1.0


def length_chart(results: ExtrapolationResults, measure: Measure, title: str, description: str) -> alt.LayerChart:
    """``measure`` against evaluation length (log scale); ``accuracy`` or ``perplexity`` of the recall task."""
    metric = "accuracy" if not measure.log else "perplexity"
    frame = chart_frame(results, metric)
    train_len = train_len_of(results)
    lengths = sorted(frame["eval_len"].unique().tolist())
    x = alt.X(
        "eval_len:Q",
        title=axis_title("evaluation length", "tokens, log scale"),
        scale=alt.Scale(type="log", base=2, domain=[lengths[0] / 1.15, lengths[-1] * 1.15]),
        axis=alt.Axis(
            values=lengths, format="d", labelExpr=f"datum.value == {train_len} ? '{train_len} (trained)' : datum.label"
        ),
    )
    upper = _upper(frame, measure)
    tooltip = [
        alt.Tooltip("encoding:N"),
        alt.Tooltip("eval_len:Q", title="evaluation length (tokens)"),
        alt.Tooltip("multiple:Q", title="x training length"),
        alt.Tooltip("mean:Q", title=f"mean {measure.name}", format=measure.value_format),
        alt.Tooltip("low:Q", title="lowest seed", format=measure.value_format),
        alt.Tooltip("high:Q", title="highest seed", format=measure.value_format),
        alt.Tooltip("seeds:Q"),
    ]
    layers = lines(frame, x, measure, upper, tooltip)
    if (frame["status"] == "cannot run").any():
        # Accuracy leaves the floor free past the training length, perplexity the ceiling.
        layers.append(cannot_run(frame, x, "eval_len", measure, upper, ": cannot run from here on", measure.log))
    return alt.layer(
        *layers, _training_rule(x, "eval_len", train_len), *reference(measure, upper), title=title
    ).properties(height=340, description=description)
