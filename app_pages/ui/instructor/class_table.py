"""The Instructor page's class table and its CSV: ``poslab.class_report``'s units (the overall
percentage to one decimal, grades in points out of the hidden suite's maximum, as in the gradebook),
short headers and narrow columns, the names pinned while the table scrolls sideways on a narrow page."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui import clock
from grader.lms.grades import suite_maxima
from poslab.class_report import class_report, points_header


def columns(maxima: dict[str, float]) -> dict:
    """Headers short enough for their columns (the long words in each column's tooltip), grades headed
    with their maximum; columns sized to their content."""
    number = st.column_config.NumberColumn
    zone = getattr(clock.student_zone(), "key", None) or "UTC"  # a fixed offset alone: UTC, said
    return {
        "student": st.column_config.TextColumn("student", pinned=True),
        "percent": st.column_config.ProgressColumn(
            "overall %",
            min_value=0,
            max_value=100,
            format="%.1f",
            help="Lessons done and exercise grades, each counting equally",
        ),
        "lessons_visited": number("visited", help="Lessons visited"),
        "lessons_done": number("done", help="Lessons done: marked done, or every quick check answered right"),
        "lessons_total": number("lessons", help="Lessons in the course"),
        "exercises_attempted": number("tried", help="Exercises with an attempt"),
        "exercises_graded": number("graded", help="Exercises with a hidden-suite grade"),
        "hints_used": number("hints", help="Hints revealed, over every exercise"),
        "last_active": st.column_config.DatetimeColumn(
            "last active", format="YYYY-MM-DD HH:mm", timezone=zone, help=f"In {zone}"
        ),
        **{
            exercise: number(
                points_header(exercise, maximum),
                format="%g",
                help=f"Best hidden-suite score in {exercise}, in points out of {maximum:g}",
            )
            for exercise, maximum in maxima.items()
        },
        "total": number(
            points_header("total", sum(maxima.values())),
            format="%g",
            help="The sum of the exercises' grades, as the gradebook and the LMS export give it",
        ),
    }


def show(table: pd.DataFrame) -> None:
    """The class's progress and grades, and the same report as CSV (times in UTC, ISO 8601)."""
    maxima = suite_maxima()
    report = class_report(table, maxima)
    st.dataframe(
        report,
        hide_index=True,
        column_order=[name for name in report.columns if name != "max"],
        column_config=columns(maxima),
        placeholder="–",
    )  # "–": not graded yet
    st.caption(
        f"Grades in points: each exercise's best hidden-suite score, and the total out of "
        f"{sum(maxima.values()):g}, as in the gradebook and the LMS export."
    )
    st.download_button(
        "Download the class table (CSV)",
        report.to_csv(index=False),
        "class_progress.csv",
        mime="text/csv",
        icon=":material/download:",
    )
