"""Progress: how far the student is through the lessons and exercises, and what to do next."""

import streamlit as st

from app_pages.ui import clock, deadlines_view, frame, identity, store_calls
from app_pages.ui.exercise import grading, history
from poslab.exercises import EXERCISES
from poslab.lessons import all_lessons
from poslab.viz.progress import attempts_chart, exercise_rows, lesson_rows, next_steps

# px: the longest "Open <title>" with its icon, at 6.6 px a character (the app's font draws 6.3), and no
# wider: at 800 px the bar beside it gets what is left. A fixed 270 px cut the eighth title by 2 px.
OPEN_LINK_WIDTH = 44 + round(6.6 * max(len(f"Open {exercise.title}") for exercise in EXERCISES))

st.title("Your progress")
student = identity.current_student()
if student is None:
    st.info(identity.prompt("see your progress"))
    st.stop()


@st.fragment(run_every=1)
def watch_submission(job_id: str) -> None:
    """A submission still being graded (from any tab): the page redraws with it once graded."""
    watch = grading.pending_job(student)
    if watch is None or watch.job_id != job_id or grading.refresh(watch) is None:
        return
    if watch.settled:
        st.rerun()
    st.info(
        f"A submission of yours is being graded: {grading.waiting_sentence(watch)}", icon=":material/hourglass_top:"
    )


pending = grading.pending_job(student)
if pending is not None:
    grading.refresh(pending)
    if not pending.settled:
        watch_submission(pending.job_id)

progress = store_calls.student_progress(student)
if progress is None:
    st.stop()  # store_call has said why

st.metric("Overall", f"{progress.percent:.0f}%", help="Lessons done and exercise grades, each counting equally.")

st.header("What to do next")
deadlines_view.due_next(student)
steps = next_steps(progress, all_lessons(), EXERCISES)
if not steps:
    st.success("You have finished every lesson and every exercise. Well done!")
for step in steps:
    st.page_link(step.page, label=step.text, icon=":material/arrow_forward:")

st.header("Lessons")
st.caption("Each bar: visiting, each quick check answered right, and finishing count as equal steps.")
for row in lesson_rows(progress, all_lessons()).itertuples():
    st.progress(row.fraction, text=f"{row.title}: {row.status}")

st.header("Exercises")
st.caption(
    "Each bar is your grade: the best score the hidden tests gave. "
    "Public-tests-only scores (from a student bundle) are feedback, not a grade."
)
for row in exercise_rows(progress, EXERCISES).itertuples():
    # The link wide enough for the longest title, the bar what is left (columns cut the link to "Op…" at
    # 800 px); a page too narrow for both puts the link under the bar.
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        st.progress(row.fraction, text=f"{row.title}: {row.status} · hints used: {row.hints_used}")
        st.page_link(
            "app_pages/exercise.py",
            label=f"Open {row.title}",
            icon=":material/edit:",
            query_params={"exercise": row.exercise},
            width=OPEN_LINK_WIDTH,
        )

st.header("Attempts over time")
attempts = history.attempts_table(student)
if attempts is not None and attempts.empty:
    st.caption("No attempts yet: submit a solution on the Exercises page.")
elif attempts is not None:
    titles = {exercise.id: exercise.title for exercise in EXERCISES}
    frame.chart(attempts_chart(attempts, titles, clock.student_zone()))

st.header("All your work")
opened = store_calls.store()
if opened is not None:
    st.download_button(
        "Download all your work (zip)",
        lambda: opened.student_work_zip(student),  # made on the click, in a thread of its own
        "poslab-my-work.zip",
        mime="application/zip",
        on_click="ignore",
        icon=":material/folder_zip:",
        help="Every submission's code, by exercise and attempt, and each exercise's saved draft",
        key="my-work-download",
    )
