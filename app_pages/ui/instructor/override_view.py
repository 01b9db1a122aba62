"""The Instructor page's scores set by hand (instructors only): set one with its reason, clear one,
and the list of those in force. The store checks the role and the reason, and logs both."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.ui.store_calls import store_call
from grader.lms.grades import suite_maxima
from poslab.roles import Actor

NOTICE_KEY = "override-notice"


def _set(actor: Actor) -> None:
    state = st.session_state
    student, exercise = state.get("override-student"), state.get("override-exercise")
    if not student or not exercise:
        state[NOTICE_KEY] = ("warning", "Choose the student and the exercise first.")
        return
    maximum = suite_maxima()[exercise]
    score, reason = state.get("override-score", 0.0), state.get("override-reason", "")
    done = store_call(
        "set the score",
        lambda store: store.set_override(student, exercise, score, maximum, reason, actor=actor) or True,
        None,
    )
    if not done:
        return  # store_call has said why (no reason, a score out of range, not an instructor)
    state[NOTICE_KEY] = ("success", f"{student}'s {exercise} is now {score:g}/{maximum:g} (overridden).")
    state["override-reason"] = ""


def _clear(actor: Actor, student: str, exercise: str) -> None:
    store_call("clear the override", lambda store: store.clear_override(student, exercise, actor=actor), None)
    st.session_state[NOTICE_KEY] = ("success", f"{student}'s {exercise} counts its attempts again.")


def override_section(actor: Actor, keys: list[str]) -> None:
    st.header("Scores set by hand")
    st.caption(
        "An override wins over the attempts in the class table, the grades and the LMS export; a reason is required."
    )
    notice = st.session_state.pop(NOTICE_KEY, None)
    if notice:
        getattr(st, notice[0])(notice[1])
    maxima = suite_maxima()
    with st.form("override-form"):
        first, second, third = st.columns([2, 1, 1])
        first.selectbox("Student", keys, index=None, placeholder="Choose a student", key="override-student")
        second.selectbox("Exercise", list(maxima), index=None, placeholder="Choose", key="override-exercise")
        third.number_input("Score (points)", min_value=0.0, step=0.5, key="override-score")
        st.text_input("Reason (required, kept in the audit log)", key="override-reason")
        st.form_submit_button("Set the score", on_click=_set, args=(actor,), icon=":material/edit:")
    found = store_call("load the scores set by hand", lambda store: store.overrides(), ())
    if not found:
        st.caption("No score is set by hand.")
        return
    st.dataframe(
        pd.DataFrame(
            [
                (item.student, item.exercise, f"{item.score:g}/{item.max_score:g}", item.reason, item.set_by)
                for item in found
            ],
            columns=["student", "exercise", "score", "reason", "set by"],
        ),
        hide_index=True,
    )
    for item in found:
        st.button(
            f"Clear {item.student}'s {item.exercise} override",
            key=f"override-clear-{item.student}-{item.exercise}",
            on_click=_clear,
            args=(actor, item.student, item.exercise),
            icon=":material/backspace:",
        )
