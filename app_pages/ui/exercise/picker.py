"""The Exercises page's picker: each exercise by its title, marked with the student's best grade."""

from __future__ import annotations

import streamlit as st

from app_pages.ui import store_calls
from poslab.exercises import EXERCISES, Exercise, get_exercise
from poslab.store.results import ExerciseProgress

EXERCISE_PARAM = "exercise"
CHOSEN_KEY = "exercise_chosen"  # the exercise last open in this session (the widget's key is dropped off-page)
PICK_KEY = "exercise-pick"
TITLES = {item.id: item.title for item in EXERCISES}


def marked_title(title: str, progress: ExerciseProgress | None) -> str:
    """``title``, then the best hidden-suite grade: ``RoPE ✓ 20/20`` when full, ``RoPE · 11/20`` when not."""
    if progress is None or progress.best_score is None or not progress.max_score:
        return title
    grade = f"{progress.best_score:g}/{progress.max_score:g}"
    return f"{title} ✓ {grade}" if progress.best_score >= progress.max_score else f"{title} · {grade}"


def chosen_exercise(student: str | None) -> Exercise:
    """The ?exercise= of the address, else this session's last one, else the first exercise."""
    ids = [item.id for item in EXERCISES]
    if PICK_KEY not in st.session_state:
        wanted = st.query_params.get(EXERCISE_PARAM) or st.session_state.get(CHOSEN_KEY)
        st.session_state[PICK_KEY] = wanted if wanted in ids else ids[0]
    else:
        # Set again on each run: a grade changes the options' labels, which gives the widget a new
        # identity, and a new identity takes a value set here, not the old widget's (it fell to the first).
        st.session_state[PICK_KEY] = st.session_state[PICK_KEY]
    progress = store_calls.progress_this_run(student) if student is not None else None
    by_id = {item.exercise: item for item in progress.exercises} if progress is not None else {}
    picked = st.selectbox(
        "Exercise",
        ids,
        format_func=lambda exercise_id: marked_title(TITLES[exercise_id], by_id.get(exercise_id)),
        key=PICK_KEY,
        help="✓ marks an exercise with full marks; the grade is your best hidden-suite attempt",
    )
    st.session_state[CHOSEN_KEY] = picked
    st.query_params[EXERCISE_PARAM] = picked
    return get_exercise(picked)
