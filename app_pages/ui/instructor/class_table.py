"""The Instructor page's class table: every student (``poslab.class_roll``) with filters and a sort,
each exercise's points and the total, a link that opens each student, and its CSV.

Short headers and narrow columns, the names pinned while the table scrolls sideways on a narrow page.
"""

from __future__ import annotations

from urllib.parse import quote

import pandas as pd
import streamlit as st

from app_pages.ui import clock
from poslab.assignments import Assignment
from poslab.class_report import points_header
from poslab.class_roll import STATUS_MEANING, STATUSES, filtered, roll_csv

STUDENT_PARAM = "student_key"  # /instructor?student_key=...: one student's page, behind the same lock
EVERY = "every"


def student_address(key: str) -> str:
    return f"instructor?{STUDENT_PARAM}={quote(key, safe='@')}"


def columns(maxima: dict[str, float], assignment: Assignment | None = None) -> dict:
    """Headers short enough for their columns (the long words in each column's tooltip)."""
    number = st.column_config.NumberColumn
    zone = getattr(clock.student_zone(), "key", None) or "UTC"  # a fixed offset alone: UTC, said
    return {
        "name": st.column_config.TextColumn("name", pinned=True),
        "open": st.column_config.LinkColumn("open", display_text="open", help="This student's page (its own address)"),
        "roster": st.column_config.TextColumn("roster", help="Seen in the app but not on the roster"),
        **{
            exercise: number(
                points_header(exercise, maximum),
                format="%g",
                help=f"Best hidden-suite score in {exercise}, in points out of {maximum:g} (0: none yet)"
                + (f", as {assignment.title} counts it (late work after its penalty)" if assignment else ""),
            )
            for exercise, maximum in maxima.items()
        },
        "total": number(
            points_header("total", sum(maxima.values())),
            format="%g",
            help="The sum of the exercises' points, as the gradebook and the LMS export give it",
        ),
        "percent": st.column_config.ProgressColumn(
            "overall %", min_value=0, max_value=100, format="%.1f", help="Lessons done and exercise grades, equally"
        ),
        "lessons_done": number("lessons", help="Lessons done"),
        "exercises_graded": number("graded", help="Exercises with a hidden-suite grade"),
        "last_active": st.column_config.DatetimeColumn(
            "last active", format="YYYY-MM-DD HH:mm", timezone=zone, help=f"In {zone}"
        ),
        "overridden": st.column_config.TextColumn(
            "overridden", help="Exercises whose score an instructor set by hand: it counts instead of the attempts"
        ),
    }


def _filters(table: pd.DataFrame, maxima: dict[str, float]) -> pd.DataFrame:
    sections = sorted({section for section in table["section"] if section})
    first, second, third, fourth = st.columns(4)
    # Never disabled: a disabled label's grey fails WCAG contrast; the help says why there is one choice.
    section = first.selectbox(
        "Section",
        [EVERY, *sections],
        key="class-section",
        help=None if sections else "The roster gives no sections",
    )
    exercise = second.selectbox(
        "Exercise", [EVERY, *maxima], key="class-exercise", help="The status and the sort in this exercise"
    )
    status = third.selectbox(
        "Status",
        [EVERY, *STATUSES],
        key="class-status",
        help="; ".join(f"{name}: {meaning}" for name, meaning in STATUS_MEANING.items()),
    )
    sort_by = fourth.selectbox("Sort by", ["name", "section", "total", "status", "last_active"], key="class-sort")
    chosen = None if exercise == EVERY else exercise
    return filtered(
        table,
        None if section == EVERY else section,
        chosen,
        None if status == EVERY else status,
        chosen if chosen is not None and sort_by == "total" else sort_by,
    )


def show(table: pd.DataFrame, maxima: dict[str, float], assignment: Assignment | None = None) -> None:
    """The filters, the table, and the whole class's CSV (one row per student, whatever the filters).
    ``assignment``: the points are that assignment's, counted in time (``poslab.course_grades``)."""
    shown = _filters(table, maxima)
    shown.insert(1, "open", [student_address(key) for key in shown["key"]])
    order = ["name", "open", "section", "key", "roster", "status", *maxima, "total", "percent", "lessons_done"]
    st.dataframe(
        shown,
        hide_index=True,
        column_order=[*order, "exercises_graded", "last_active", "overridden"],
        column_config=columns(maxima, assignment),
    )
    if assignment is None:
        st.caption(
            f"{len(shown)} of {len(table)} students. Points: each exercise's best hidden-suite score (0: none "
            f"yet), the total out of {sum(maxima.values()):g}, as in the gradebook and the LMS export. "
            '"late" is given once assignments have due dates; no student is late yet.'
        )
    else:
        st.caption(
            f"{len(shown)} of {len(table)} students. Points: {assignment.title} as counted at each student's due "
            f"date (the best on-time attempt, or a late one after its penalty), the total out of "
            f'{assignment.max_points:g}, as the LMS export sends it. "late": some attempt came after the due date.'
        )
    st.download_button(
        "Download the class table (CSV)",
        roll_csv(table),
        "class_table.csv",
        mime="text/csv",
        icon=":material/download:",
    )
