"""The inference-engine lesson: each position rule of ``poslab.viz.engine_rules`` kept and broken, charted.

A view holds, per rule, the largest error against the reference over all steps and the first step where
it exceeds ``WRONG`` (rounding stays near 1e-16; a broken rule is off by 1e-3 or more), and a line chart
of the error per decode step on a log scale, where exact zeros are drawn at ``FLOOR``.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd

from poslab.viz import engine_rules as rules
from poslab.viz.common import axis_title, y_axis_title

WRONG = 1e-9  # above rounding (about 1e-16 in float64), far below what a broken rule gives
FLOOR = 1e-17  # exact zeros drawn here on the log axis
# One entry per line below the plot: rule names are sentences, and a row of them is cut off on a narrow page.
LEGEND = alt.Legend(orient="bottom", direction="vertical", labelLimit=600)


@dataclass(frozen=True)
class RuleView:
    largest: dict[str, float]  # rule -> largest error (or distance) over all steps
    first_wrong: dict[str, int | None]  # rule -> first step above WRONG (None: never)
    chart: alt.Chart


def _first_wrong(series: list[float]) -> int | None:
    return next((step for step, error in enumerate(series) if error > WRONG), None)


def error_chart(errors: dict[str, list[float]], title: str, what: str, step_name: str = "decode step") -> alt.Chart:
    frame = pd.concat(
        [
            pd.DataFrame(
                {"step": range(len(series)), "error": series, "drawn": [max(e, FLOOR) for e in series], "rule": name}
            )
            for name, series in errors.items()
        ],
        ignore_index=True,
    )
    worst = "; ".join(f"{name}: largest {max(series):.1e}" for name, series in errors.items())
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("step:Q", title=axis_title(step_name, "index"), axis=alt.Axis(tickMinStep=1, format="d")),
            y=alt.Y(
                "drawn:Q",
                title=y_axis_title("max |cached - reference|", "log scale"),
                scale=alt.Scale(type="log", domain=[FLOOR, 10]),
                axis=alt.Axis(format=".0e"),
            ),
            color=alt.Color("rule:N", title="rule", legend=LEGEND),
            strokeDash=alt.StrokeDash("rule:N", legend=LEGEND, title="rule"),
            tooltip=[alt.Tooltip("rule:N"), alt.Tooltip("step:Q"), alt.Tooltip("error:Q", format=".2e")],
        )
        .properties(
            title=title,
            description=(
                f"Line chart, log scale: for each {step_name}, the largest difference between {what} and the reference, "
                f"one line per rule; zeros are drawn at {FLOOR:g}. {worst}."
            ),
        )
    )


def rule_view(errors: dict[str, list[float]], chart: alt.Chart) -> RuleView:
    return RuleView(
        {name: max(series) for name, series in errors.items()},
        {name: _first_wrong(series) for name, series in errors.items()},
        chart,
    )


def cache_mode_view(seq_len: int) -> RuleView:
    errors = rules.cache_modes(seq_len)
    return rule_view(
        errors,
        error_chart(errors, "Where RoPE is applied: before the cache, at read, or twice", "the cached decode's output"),
    )


def padding_view(prompt_lengths: tuple[int, ...], new_tokens: int) -> RuleView:
    errors = rules.left_padding(prompt_lengths, new_tokens)
    return rule_view(
        errors,
        error_chart(
            errors,
            f"A left-padded batch of prompts {list(prompt_lengths)}: step 0 is the prefill",
            "each row's output and its sequence decoded alone",
            "step (0 = prefill)",
        ),
    )


def rolling_view(seq_len: int, window: int) -> RuleView:
    errors = rules.rolling_buffer(seq_len, window)
    return rule_view(
        errors,
        error_chart(
            errors,
            f"A rolling buffer of {window} slots (sliding window {window})",
            "the buffered decode's output and the full forward masked to the window",
        ),
    )


def dynamic_view(seq_len: int, original_len: int) -> RuleView:
    errors = rules.dynamic_ntk(seq_len, original_len)
    return rule_view(
        errors,
        error_chart(
            errors,
            f"Dynamic NTK with a cache: frequencies change past {original_len} tokens",
            "the cached decode's output and a fresh forward of the prefix",
        ),
    )


def streaming_view(seq_len: int, sinks: int, recent: int) -> RuleView:
    distances = rules.streaming(seq_len, sinks, recent)
    frame = pd.concat(
        [
            pd.DataFrame({"step": range(seq_len), "distance": series, "rule": name})
            for name, series in distances.items()
        ],
        ignore_index=True,
    )
    cache = sinks + recent
    chart = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "step:Q", title=axis_title("token of the stream", "index"), axis=alt.Axis(tickMinStep=1, format="d")
            ),
            y=alt.Y("distance:Q", title=y_axis_title("largest query-key distance", "positions")),
            color=alt.Color("rule:N", title="positions", legend=LEGEND),
            strokeDash=alt.StrokeDash("rule:N", title="positions", legend=LEGEND),
            tooltip=[alt.Tooltip("rule:N"), alt.Tooltip("step:Q"), alt.Tooltip("distance:Q")],
        )
        .properties(
            title=f"StreamingLLM: {sinks} sink tokens and the last {recent}, a cache of {cache}",
            description=(
                f"Line chart of the largest distance between the query and a cached key at each token of a stream of "
                f"{seq_len}: with positions re-indexed inside the cache it never exceeds {cache - 1}; with the positions of "
                f"the original text it grows to {max(distances['broken: positions of the original text'])}."
            ),
        )
    )
    return RuleView(
        {name: max(series) for name, series in distances.items()},
        {name: next((s for s, d in enumerate(series) if d > cache - 1), None) for name, series in distances.items()},
        chart,
    )
