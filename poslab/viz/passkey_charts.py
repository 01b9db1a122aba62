"""The passkey probe's charts: retrieval against the needle's depth at one test length (one line
per arm), and against the needle's distance for one arm (one line per test length). A needle's
distance and the sequence's length are two things: the second chart keeps them apart."""

from __future__ import annotations

import altair as alt
import pandas as pd

from poslab.experiments.results import ExtrapolationResults
from poslab.viz.common import axis_title
from poslab.viz.extrapolation_charts import Measure, cannot_run, lines, reference, y_encoding
from poslab.viz.extrapolation_data import TITLES, percent, probe_frame, train_len_of

# Room above the plot for a title of two lines (long titles are wrapped into lines when drawn):
# without it the first line lies above the chart's box and is cut off.
TITLE = {"offset": 6, "lineHeight": 18}
PADDING = {"top": 12, "left": 5, "right": 5, "bottom": 5}


def retrieval_measure(results: ExtrapolationResults) -> Measure:
    chance = results.record.probe_chance or 0.0
    return Measure("retrieval", "share of needles", False, chance, f"chance {percent(chance)}", ".0%")


def titled(title: str) -> alt.TitleParams:
    return alt.TitleParams(title, **TITLE)


def _beyond_training(eval_len: int, train_len: int) -> pd.DataFrame:
    """The depths whose needle is ``train_len`` or more tokens back: the key at position
    ``eval_len - 1 - train_len`` or before, depth ``position / (eval_len - 3)``. Empty at the training length."""
    last_position = eval_len - 1 - train_len
    if last_position < 0:
        return pd.DataFrame()
    return pd.DataFrame(
        {"depth": [0.0], "depth_end": [last_position / (eval_len - 3)], "label": [f"needles {train_len}+ tokens back"]}
    )


def passkey_chart(results: ExtrapolationResults, eval_len: int, title: str, description: str) -> alt.LayerChart:
    """Retrieval against the needle's depth at one test length; each depth's tick also says how far back it is."""
    frame = probe_frame(results)
    frame = frame[frame["eval_len"] == eval_len].assign(depth_label=lambda f: f["depth"].map(percent))
    train_len = train_len_of(results)
    measure = retrieval_measure(results)
    depths = sorted(frame["depth"].unique().tolist())
    back = f"({eval_len - 1} - floor(datum.value * {eval_len - 3} + 0.5)) + ' back'"
    x_title = axis_title("needle depth", "0% the start, 100% just before the query")
    x_scale = alt.Scale(domain=[-0.03, 1.03], nice=False)
    x = alt.X(
        "depth:Q",
        title=x_title,
        scale=x_scale,
        axis=alt.Axis(values=depths, labelExpr=f"[format(datum.value, '.0%'), {back}]", labelLineHeight=13, grid=False),
    )
    tooltip = [
        alt.Tooltip("encoding:N"),
        alt.Tooltip("depth_label:N", title="needle depth"),
        alt.Tooltip("distance:Q", title="tokens back from the query"),
        alt.Tooltip("mean:Q", title="retrieved (mean)", format=".0%"),
        alt.Tooltip("low:Q", title="lowest seed", format=".0%"),
        alt.Tooltip("high:Q", title="highest seed", format=".0%"),
        alt.Tooltip("needles:Q"),
    ]
    layers = []
    beyond = _beyond_training(eval_len, train_len)
    if not beyond.empty:  # shade the needles farther back than the training length
        region = alt.Chart(beyond)
        layers += [
            region.mark_rect(opacity=0.07, color="black").encode(x=x, x2="depth_end:Q"),
            region.mark_text(align="right", baseline="top", dx=-4, dy=4, y=0, color="gray", fontSize=11).encode(
                x=alt.X("depth_end:Q", scale=x_scale, title=x_title), text="label:N"
            ),
        ]
    layers += lines(frame, x, measure, 1.0, tooltip)
    if (frame["status"] == "cannot run").any():
        layers.append(cannot_run(frame, x, "depth", measure, 1.0, ": cannot run at this length", at_top=True))
    return alt.layer(*layers, *reference(measure, 1.0), title=titled(title)).properties(
        height=340, description=description, padding=PADDING
    )


def distance_frame(results: ExtrapolationResults, arm: str) -> pd.DataFrame:
    """One arm's passkey cells that ran: one row per (test length, depth), with the needle's distance."""
    frame = probe_frame(results)
    frame = frame[(frame["encoding"] == TITLES[arm]) & (frame["status"] == "ok")]
    train_len = train_len_of(results)
    return frame.assign(length=frame["eval_len"].map(lambda n: f"{n} tokens ({n // train_len}x)"))


def distance_chart(results: ExtrapolationResults, arm: str, title: str, description: str) -> alt.LayerChart:
    """One arm's retrieval against the needle's distance from the query (log scale), one line per
    test length: lines that lie on one another mean distance alone decides; lines apart at the same
    distance mean the sequence's length matters too."""
    frame = distance_frame(results, arm)
    train_len = train_len_of(results)
    measure = retrieval_measure(results)
    distances = sorted(frame["distance"].unique().tolist()) or [1, train_len]
    lengths = sorted(frame["eval_len"].unique().tolist())
    names = [f"{n} tokens ({n // train_len}x)" for n in lengths]
    x = alt.X(
        "distance:Q",
        title=axis_title("needle's distance from the query", "tokens, log scale"),
        scale=alt.Scale(type="log", base=2, domain=[distances[0] / 1.2, distances[-1] * 1.2], nice=False),
        axis=alt.Axis(values=sorted({2, 4, 8, 16, 32, 64, 128, 256, 512} & set(range(distances[-1] + 1))), format="d"),
    )
    y = y_encoding(measure, "mean", 1.0)
    palette = alt.Scale(domain=names, scheme="viridis")
    legend = alt.Legend(
        orient="bottom", title="test length", columns=2, labelLimit=400, symbolOpacity=1, symbolStrokeWidth=2
    )
    tooltip = [
        alt.Tooltip("length:N", title="test length"),
        alt.Tooltip("distance:Q", title="tokens back from the query"),
        alt.Tooltip("mean:Q", title="retrieved (mean)", format=".0%"),
        alt.Tooltip("needles:Q"),
    ]
    drawn = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=60, filled=True))
        .encode(
            x=x,
            y=y,
            color=alt.Color("length:N", scale=palette, legend=legend),
            shape=alt.Shape("length:N", scale=alt.Scale(domain=names), legend=legend),
            strokeDash=alt.StrokeDash("length:N", scale=alt.Scale(domain=names), legend=legend),
            tooltip=tooltip,
        )
    )
    rule = alt.Chart(pd.DataFrame({"distance": [train_len]})).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    label = pd.DataFrame({"distance": [train_len], "label": [f"training length {train_len}"]})
    text = (
        alt.Chart(label)
        .mark_text(align="left", baseline="top", dx=4, dy=4, y=0, color="gray", fontSize=11)
        .encode(x=x, text="label:N")
    )
    return alt.layer(drawn, rule, text, *reference(measure, 1.0), title=titled(title)).properties(
        height=340, description=description, padding=PADDING
    )
