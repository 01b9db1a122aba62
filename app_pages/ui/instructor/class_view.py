"""The Instructor page's whole class: every student (the roster, or everyone seen), the table with
its filters, sort and CSV, the spread of overall progress, and a way to open one student."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui import frame
from app_pages.ui.instructor import assignment_view, class_table
from app_pages.ui.store_calls import store_call
from grader.lms.grades import suite_maxima
from poslab.class_roll import class_roll
from poslab.course_grades import assignment_roll
from poslab.roles import Actor, may
from poslab.store import RosterMember
from poslab.viz.class_charts import score_distribution_chart
from poslab.vocabulary import AuditAction


def roster() -> tuple[RosterMember, ...] | None:
    return store_call("load the roster", lambda store: store.roster_members(), None)


def roll() -> pd.DataFrame | None:
    """The class table (``poslab.class_roll``), or None when the store cannot say (it has said why)."""
    members = roster()
    progress = store_call("load the class's progress", lambda store: store.class_progress(), None)
    if members is None or progress is None:
        return None
    return class_roll(progress, members, suite_maxima())


def _open(keys: list[str]) -> None:
    chosen = st.session_state.get("class-open")
    if chosen in keys:
        st.query_params[class_table.STUDENT_PARAM] = chosen


def show_class(actor: Actor) -> list[str]:
    """The class table and its charts; the students' keys, for the sections below."""
    st.header("The class")
    picked = assignment_view.chosen(show_picker=True)
    table = roll()
    if table is None:
        return []
    if table.empty:
        st.caption("No roster and no student has done anything yet.")
        return []
    maxima, counted = suite_maxima(), None
    if picked is not None and picked[0].source:  # an assignments file: the chosen assignment's points and dates
        found, counted = picked
        table = assignment_roll(table, assignment_view.grades(found, counted, roster() or ()), counted)
        maxima = dict(counted.points)
    class_table.show(table, maxima, counted)
    if may(actor, AuditAction.EXTENSION):
        assignment_view.extensions_section(list(table["key"]), actor)
    labels = dict(
        zip(table["key"], [f"{name} ({key})" if name != key else key for name, key in zip(table["name"], table["key"])])
    )
    st.selectbox(
        "Open a student",
        list(labels),
        format_func=labels.get,
        index=None,
        placeholder="Choose a student to see their attempts, code and drafts",
        key="class-open",
        on_change=_open,
        args=(list(labels),),
    )
    frame.chart(score_distribution_chart(table.rename(columns={"key": "student"})))
    return list(table["key"])
