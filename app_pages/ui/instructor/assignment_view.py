"""The Instructor page's assignment: which one the class table and the LMS export count (with an
assignments file), each student's grade for it at their own due date, and the extensions the
instructor sets here (kept in the store; the file's own are listed beside them)."""

from __future__ import annotations

from datetime import datetime, time

import pandas as pd
import streamlit as st

from app_pages.ui import course
from app_pages.ui.store_calls import store_call
from poslab.assignments import Assignment, Course
from poslab.course_grades import class_grades
from poslab.deadline_text import when
from poslab.deadlines import AssignmentGrade
from poslab.roles import Actor
from poslab.store import RosterMember

PICK_KEY = "instructor-assignment"


def chosen(show_picker: bool = False) -> tuple[Course, Assignment] | None:
    """The course and the assignment chosen (the first until one is); the picker only where asked,
    once per page. None (after a sentence) when the assignments file is bad."""
    found = course.course_or_default()
    if found is None:
        return None
    ids = [item.id for item in found.assignments]
    if st.session_state.get(PICK_KEY) not in ids:
        st.session_state[PICK_KEY] = ids[0]
    if show_picker and found.source:
        titles = {item.id: f"{item.title} ({item.id})" for item in found.assignments}
        st.selectbox(
            "Assignment",
            ids,
            format_func=titles.get,
            key=PICK_KEY,
            help=f"The class table, the extensions and the grades back to the LMS count this one ({found.source})",
        )
    return found, found.get(st.session_state[PICK_KEY])


def grades(found: Course, assignment: Assignment, members: tuple[RosterMember, ...]) -> dict[str, AssignmentGrade]:
    """Every student's grade for ``assignment``: their attempts in time, at their own due date."""
    submissions = store_call("load the class's attempts", lambda store: store.graded_submissions(), None)
    if submissions is None:
        return {}
    overrides = store_call("load the scores set by hand", lambda store: store.override_fractions(), {})
    names = {member.key: (member.key, member.email, member.lms_id, member.name) for member in members}
    return class_grades(submissions, names, assignment, course.extensions(found, assignment.id), overrides)


def extensions_section(keys: list[str], actor: Actor) -> None:
    """Grant or withdraw one student's extension of the chosen assignment; list the ones in force."""
    picked = chosen()
    if picked is None or picked[1].due is None:
        return
    found, assignment = picked
    zone = assignment.due.tzinfo
    st.subheader("Extensions", anchor=False)
    st.caption(
        f"{assignment.title} is due {when(assignment.due, zone)}. An extension gives one student their own date."
    )
    with st.form("extension-form"):
        student = st.selectbox("Student", keys, index=None, placeholder="Choose a student", key="extension-student")
        first, second = st.columns(2)
        day = first.date_input("New due date", value=assignment.due.astimezone(zone).date(), key="extension-day")
        hour = second.time_input("Time", value=assignment.due.astimezone(zone).time(), key="extension-time")
        if st.form_submit_button("Grant the extension", icon=":material/event_available:"):
            _grant(assignment, student, datetime.combine(day, hour or time(23, 59)).replace(tzinfo=zone), actor)
    rows = [
        (key, when(due, zone), "assignments file") for key, due in found.extensions.extensions(assignment.id).items()
    ]
    stored = store_call("load the extensions", lambda store: store.granted_extensions(assignment.id), ())
    rows += [
        (item.student, when(item.due, zone), f"set by {item.set_by}, {when(item.set_at, zone)}") for item in stored
    ]
    if not rows:
        st.caption("No extension yet.")
        return
    st.dataframe(pd.DataFrame(rows, columns=["student", "due", "from"]), hide_index=True)
    if stored:
        withdraw = st.selectbox(
            "Withdraw an extension set here", [item.student for item in stored], index=None, key="extension-withdraw"
        )
        if withdraw and st.button("Withdraw it", icon=":material/event_busy:", key="extension-withdraw-button"):
            store_call(
                "withdraw the extension",
                lambda store: store.withdraw_extension(assignment.id, withdraw, actor=actor),
                False,
            )
            st.rerun()


def _grant(assignment: Assignment, student: str | None, due: datetime, actor: Actor) -> None:
    if not student:
        st.warning("Choose the student first.")
        return
    if due <= assignment.due:
        st.warning(f"An extension must be after the assignment's due date, {when(assignment.due, due.tzinfo)}.")
        return
    done = store_call(
        "grant the extension", lambda store: store.grant_extension(assignment.id, student, due, actor), False
    )
    if done is None:
        st.success(f"{student} now has until {when(due, due.tzinfo)}.", icon=":material/task_alt:")
