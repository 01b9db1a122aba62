"""The Instructor page's grades-to-the-LMS section: the app's grades (each exercise's best
hidden-suite score; public-tests-only attempts never count) written into the class's Canvas
gradebook export or Moodle grading worksheet, ready to import. The work is
``grader.lms.fill`` / ``grader.lms.grades``; this draws the widgets and the result.
"""

from __future__ import annotations

from pathlib import PurePath

import pandas as pd
import streamlit as st

from app_pages.ui import store_calls
from app_pages.ui.instructor import assignment_view
from app_pages.ui.instructor.class_view import roster
from grader.lms.fill import FilledGradebook, StudentGrade, fill_canvas, fill_moodle
from grader.lms.grades import grades_from_assignment, grades_from_class_table, suite_maxima
from poslab.assignments import Assignment, Course
from poslab.course_grades import feedback_line
from poslab.lms_csv import CsvFileError
from poslab.roles import Actor

CANVAS, MOODLE = "Canvas gradebook export", "Moodle grading worksheet"
HOW_TO_EXPORT = {
    CANVAS: "In Canvas: Grades > Export > Export Entire Gradebook. Import the filled file with Grades > Import.",
    MOODLE: "In Moodle: the assignment's View all submissions > Download grading worksheet. Upload the filled "
    "file with Upload grading worksheet.",
}


def lms_export_section(actor: Actor) -> None:
    """Upload the LMS's grade file, get it back with the assignment's grades filled in."""
    st.header("Grades back to the LMS")
    picked = assignment_view.chosen()
    counted = picked[1] if picked is not None and picked[0].source else None
    if counted is None:
        st.caption(
            "Each student's grade is the sum over exercises of their best hidden-suite score (public-test "
            "runs never count), matched by their email or LMS id, as signed in with the roster or a login. "
            "Students with no graded attempt are left as exported."
        )
    else:
        st.caption(
            f"Each student's grade is {counted.title} out of {counted.max_points:g}, as the class table counts "
            "it: per exercise, the best hidden-suite attempt by their due date (extensions included), or a late "
            "one after its penalty. Matched by their email or LMS id; students with nothing counted are left as "
            "exported. Moodle's feedback column gets one line per student saying what was counted."
        )
    kind = st.radio("The file from your LMS", (CANVAS, MOODLE), horizontal=True, key="lms-export-kind")
    st.caption(HOW_TO_EXPORT[kind])
    uploaded = st.file_uploader("Upload it (CSV)", type=["csv"], key="lms-export-file")
    assignment = (
        st.text_input(
            "Assignment column: the start of its header",
            value=counted.title if counted else "Position Lab",
            key=f"lms-export-assignment-{counted.id}" if counted else "lms-export-assignment",
        )
        if kind == CANVAS
        else ""
    )
    missing_zero = st.checkbox("Give 0 to students with no graded attempt", key="lms-export-missing-zero")
    if uploaded is None:
        return
    if counted is None:
        table = store_calls.store_call("load the class's grades", lambda store: store.class_progress(), None)
        if table is None:
            return
        grades, feedback = grades_from_class_table(table, suite_maxima()), None
    else:
        grades, feedback = _assignment_grades(picked[0], counted)
    try:
        if kind == CANVAS:
            filled = fill_canvas(uploaded.getvalue(), grades, assignment, missing_zero)
        else:
            filled = fill_moodle(uploaded.getvalue(), grades, missing_zero, feedback=feedback)
    except CsvFileError as error:
        st.error(str(error))
        return
    _show(filled, uploaded.name, missing_zero, actor)


def _assignment_grades(found: Course, counted: Assignment) -> tuple[list[StudentGrade], dict[str, str]]:
    """The class's grades for the chosen assignment, and a feedback line per student."""
    counted_grades = assignment_view.grades(found, counted, roster() or ())
    feedback = {key: feedback_line(counted, grade) for key, grade in counted_grades.items()}
    return grades_from_assignment(counted_grades), feedback


def _record_download(actor: Actor, file_name: str, students: int) -> None:
    store_calls.store_call(
        "record the download in the audit log",
        lambda store: store.record_export("grades for the LMS", f"{file_name}: {students} student(s)", actor=actor),
        None,
    )


def _show(filled: FilledGradebook, uploaded_name: str, missing_zero: bool, actor: Actor) -> None:
    without = "given 0" if missing_zero else "left as exported"
    st.success(
        f"Filled in for {filled.filled} student(s); {filled.left} without a grade {without}.",
        icon=":material/task_alt:",
    )
    st.text(f"Column: {filled.column}")  # st.text: the file's header is not Markdown
    if filled.warnings:
        with st.expander(f"{len(filled.warnings)} warning(s)", expanded=True, icon=":material/warning:"):
            for warning in filled.warnings:
                st.text(warning)  # they name students as the store and the file do: never Markdown
    if filled.written:
        st.dataframe(pd.DataFrame(filled.written, columns=["student", "grade written"]), hide_index=True)
    stem = PurePath(uploaded_name).stem or "grades"
    st.download_button(
        "Download the filled file (CSV)",
        filled.text.encode("utf-8"),
        f"{stem}-filled.csv",
        mime="text/csv",
        on_click=_record_download,
        args=(actor, f"{stem}-filled.csv", filled.filled),
        icon=":material/download:",
        key="lms-export-download",
    )
