"""Exercises: read the spec, write the code in the editor (saved as a draft), run the public tests, submit.

The exercise is in the URL (``?exercise=rope``) and in the session, so a reload, the Progress
page's links and coming back all open the same one. The buttons and their answers are
``app_pages.ui.exercise.hand_in``; the gradings go to the grading service and never wait in this script.
"""

import streamlit as st

from app_pages.ui import deadlines_view, identity
from app_pages.ui.exercise import grading, hand_in, hints, workspace
from app_pages.ui.exercise.picker import chosen_exercise
from poslab.exercises import spec

st.title("Exercises")
student = identity.current_student()
exercise = chosen_exercise(student)
st.caption(f"Implement {', '.join(exercise.names)} in `{exercise.filename}`. The spec:")
# Plain text, the same as the stub's docstring. Not wrapped: its aligned columns and formulas ("N - 1")
# keep their lines, and a narrow page scrolls the block sideways instead.
st.code(spec(exercise.id), language=None, wrap_lines=False)
if student is not None:
    deadlines_view.exercise_deadlines(student, exercise.id)  # the due date, the late policy, what counts
hints.show_hints(student, exercise.id)

st.header("Your code", anchor=False)  # no link icon: one Tab from the hints to the editor
if grading.in_student_bundle():
    st.info(
        "This is a student bundle: your code is checked against the public tests only. "
        "The hidden suite runs when your instructor grades your work."
    )
if student is None:
    st.info(identity.prompt("write and submit your code: your draft and your score are saved under your name"))
    st.download_button(
        f"Download the starter code ({exercise.filename})",
        workspace.starter_code(exercise),
        exercise.filename,
        mime="text/x-python",
        icon=":material/download:",
    )
    st.stop()

workspace.sync_with_store(student, exercise)
workspace.editor(student, exercise)
hand_in.panel(student, exercise)  # the buttons, their answers, the other ways to hand in, the attempts
