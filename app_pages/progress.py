"""Progress: how far the student is through the lessons and exercises, and what to do next."""

import streamlit as st

from app_pages.ui import frame, identity, store_calls
from poslab.exercises import EXERCISES
from poslab.lessons import all_lessons
from poslab.viz.progress import attempts_chart, exercise_rows, lesson_rows, next_steps

st.title("Your progress")
student = identity.current_student()
if student is None:
    st.info("Type your name in the sidebar (or log in) to see your progress.")
    st.stop()

progress = store_calls.student_progress(student)
if progress is None:
    st.stop()  # store_call has said why

st.metric("Overall", f"{progress.percent:.0f}%",
          help="Lessons done and exercise grades, each counting equally.")

st.subheader("What to do next")
steps = next_steps(progress, all_lessons(), EXERCISES)
if not steps:
    st.success("You have finished every lesson and every exercise. Well done!")
for step in steps:
    st.page_link(step.page, label=step.text, icon=":material/arrow_forward:")

st.subheader("Lessons")
st.caption("Each bar: visiting, each quick check answered right, and finishing count as equal steps.")
for row in lesson_rows(progress, all_lessons()).itertuples():
    st.progress(row.fraction, text=f"{row.title}: {row.status}")

st.subheader("Exercises")
st.caption("Each bar is your grade: the best score the hidden tests gave. "
           "Public-tests-only scores (from a student bundle) are feedback, not a grade.")
for row in exercise_rows(progress, EXERCISES).itertuples():
    st.progress(row.fraction, text=f"{row.title}: {row.status} · hints used: {row.hints_used}")

st.subheader("Attempts over time")
attempts = store_calls.store_call("load your attempts", lambda store: store.attempts(student), None)
if attempts is not None and attempts.empty:
    st.caption("No attempts yet: submit a solution on the Exercises page.")
elif attempts is not None:
    frame.chart(attempts_chart(attempts, {exercise.id: exercise.title for exercise in EXERCISES}))
