"""Deadlines as a student sees them: on the Exercises page, each assignment covering the exercise
(its due date, time left, late policy, what the attempts count for and whether each was late); on
the Progress page, what is due next. Nothing shows without an assignments file."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from app_pages.ui import clock, course
from app_pages.ui.store_calls import store_call
from poslab.course_grades import KnownExtensions, merged_extensions, student_due_next, timed_attempts
from poslab.deadline_text import deadline_sentence, due_next_sentence, timed_rows
from poslab.deadlines import assignment_status, student_due


def names_of(student: str) -> tuple[str, ...]:
    """Every name an extension may give this student: their key, and on a roster their email, LMS id and
    name (as the Instructor page counts them, so both pages agree on their due date)."""
    members = store_call("load the roster", lambda store: store.roster_members(), ())
    found = next((member for member in members if member.key == student), None)
    return (student,) if found is None else (student, found.email, found.lms_id, found.name)


def exercise_deadlines(student: str, exercise_id: str) -> None:
    found = course.configured_course()
    covering = [item for item in found.assignments if exercise_id in item.points] if found else []
    if not covering:
        return
    attempts = store_call("load your attempts", lambda store: store.attempt_details(student, exercise_id), ())
    timed = timed_attempts(attempts)
    now, zone, names = datetime.now(UTC), clock.student_zone(), names_of(student)
    for assignment in covering:
        due = student_due(assignment, names, course.extensions(found, assignment.id))
        status = assignment_status(timed, assignment, now, due)
        st.info(deadline_sentence(status, assignment, zone), icon=":material/event:")
        (counted,) = [item for item in status.grade.exercises if item.exercise == exercise_id]
        st.caption(f"For {assignment.title}, your attempts count: {counted.why}.")
        rows = timed_rows([(item.at, item.fraction) for item in timed], assignment, exercise_id, due)
        if rows and due is not None:
            with st.expander(f"Your attempts against the due date ({len(rows)})", icon=":material/schedule:"):
                table = pd.DataFrame(
                    [(row.number, clock.shown(row.at, clock.DATE_TIME), row.points, row.timing) for row in rows[::-1]],
                    columns=["attempt", "handed in", f"points of {assignment.points[exercise_id]:g}", "on time?"],
                )
                st.dataframe(table, hide_index=True)


def due_next(student: str) -> None:
    found = course.configured_course()
    if found is None:
        return
    now = datetime.now(UTC)
    stored = store_call("load the extensions", lambda store: store.granted_extensions(), ())
    mine = {}
    for item in stored:
        mine.setdefault(item.assignment, {})[item.student] = item.due
    extensions = merged_extensions(found.extensions, KnownExtensions(mine))
    assignment, due = student_due_next(found.assignments, names_of(student), extensions, now)
    st.info(due_next_sentence(assignment, due, now, clock.student_zone()), icon=":material/event:")
