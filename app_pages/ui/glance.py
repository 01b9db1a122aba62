"""Home's progress at a glance: overall progress, lessons done, and the one next step."""

from __future__ import annotations

import streamlit as st

from app_pages.ui.identity import current_student, prompt
from app_pages.ui.store_calls import progress_this_run
from poslab.exercises import EXERCISES
from poslab.lessons import all_lessons
from poslab.viz.progress import next_steps


def progress_at_a_glance() -> bool:
    """Overall progress, lessons done, and the one next step (or how to start saving).

    Returns whether a next step was linked, so Home does not repeat it with its own start link.
    """
    student = current_student()
    if student is None:
        st.caption(prompt("save your progress and see it here"))
        return False
    progress = progress_this_run(student)
    if progress is None:
        return False  # store_call has already said why
    st.progress(
        min(progress.percent, 100.0) / 100.0,
        text=f"{student}: {progress.percent:.0f}% of the course, "
        f"{progress.lessons_done} of {len(progress.lessons)} lessons done",
    )
    steps = next_steps(progress, all_lessons(), EXERCISES, limit=1)
    if steps:
        st.page_link(steps[0].page, label=f"Next: {steps[0].text}", icon=":material/arrow_forward:")
        return True
    st.success("You have finished every lesson and every exercise.")
    return False
