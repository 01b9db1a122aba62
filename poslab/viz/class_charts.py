"""The class's progress as charts, for the Instructor page (``poslab.viz.progress`` has a student's).

* ``score_distribution_chart``  -> how the class's overall percentages spread
* ``pass_rate_chart``           -> which tests trip up most students, worst first
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from poslab.viz.common import axis_title


def score_distribution_chart(class_table: pd.DataFrame) -> alt.Chart:
    """Histogram of the class's overall percentage, in bins of 10 points."""
    return (
        alt.Chart(class_table[["student", "percent"]], title="Overall progress across the class")
        .mark_bar()
        .encode(
            x=alt.X("percent:Q", bin=alt.Bin(extent=[0, 100], step=10), title=axis_title("overall progress", "%")),
            y=alt.Y("count():Q", title=axis_title("students", "count")),
            tooltip=[
                alt.Tooltip("percent:Q", bin=alt.Bin(extent=[0, 100], step=10), title="progress (%)"),
                alt.Tooltip("count():Q", title="students"),
            ],
        )
        .properties(height=260, description=_distribution_description(class_table["percent"]))
    )


def _distribution_description(percent: pd.Series) -> str:
    if percent.empty:
        return "Histogram of the class's overall progress: no students yet."
    return (
        f"Histogram of the overall progress of {len(percent)} student{'s' if len(percent) != 1 else ''} in "
        f"bins of 10 points: lowest {percent.min():.0f}%, median {percent.median():.0f}%, "
        f"highest {percent.max():.0f}%."
    )


def labelled_test(exercise: str, test: str) -> str:
    """The test's name, with its exercise once: suites already name theirs "rope: norm preserved"."""
    return test if test.startswith(f"{exercise}:") else f"{exercise}: {test}"


def pass_rate_chart(rates: pd.DataFrame, limit: int = 25) -> alt.LayerChart:
    """Per-test pass rates (columns exercise, test, pass_rate, n), the most failed test on top.

    One row per test, each labelled once in full, with a fixed height per row (a total height
    squeezed ten bars into 80 px) and its rate written at the bar's end.
    """
    frame = (
        rates.sort_values(["pass_rate", "exercise", "test"])
        .head(limit)
        .assign(
            label=lambda table: [labelled_test(e, t) for e, t in zip(table["exercise"], table["test"])],
            percent=lambda table: table["pass_rate"] * 100.0,
        )
    )
    frame = frame.assign(rate_text=[f"{p:.0f}% of {n}" for p, n in zip(frame["percent"], frame["n"])])
    title = "Which tests trip students up (lowest pass rate first)"
    if len(rates) > limit:
        title += f": the {limit} hardest of {len(rates)}"
    # The axis title sits above the labels, level: rotated beside them it ran into the longest.
    y = alt.Y(
        "label:N",
        title="test",
        sort=list(frame["label"]),
        axis=alt.Axis(labelLimit=600, titleAngle=0, titleAlign="right", titleX=-4, titleY=-6),
    )
    x = alt.X("percent:Q", title=axis_title("pass rate", "% of attempts"), scale=alt.Scale(domain=[0, 100]))
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=x,
            y=y,
            color=alt.Color("exercise:N", title="exercise", legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("exercise:N"),
                alt.Tooltip("test:N"),
                alt.Tooltip("percent:Q", title="pass rate (%)", format=".0f"),
                alt.Tooltip("n:Q", title="attempts that ran it"),
            ],
        )
    )
    rates_text = alt.Chart(frame).mark_text(align="left", dx=4, fontSize=11).encode(x=x, y=y, text="rate_text:N")
    described = "; ".join(f"{label} {text}" for label, text in zip(frame["label"], frame["rate_text"]))
    return alt.layer(bars, rates_text, title=title).properties(
        height=alt.Step(26), description=f"Bar chart of each test's pass rate, lowest first: {described}."
    )
