"""The Exercises page's history: each attempt at this exercise, newest first, to learn from.

Each attempt opens to its code, its feedback and what changed since the attempt before it, with
a button that puts its code back into the editor (as the draft). The attempts start closed (the
last result is drawn above them), and only an open one's content is drawn: a twentieth attempt
must not make every rerun highlight twenty files and their diffs in the browser.
"""

from __future__ import annotations

import difflib

import pandas as pd
import streamlit as st

from app_pages.ui import clock
from app_pages.ui.exercise import feedback, workspace
from app_pages.ui.store_calls import store_call
from grader.results import SubmissionResult
from grader.vocabulary import ExerciseStatus
from poslab.exercises import Exercise
from poslab.store import Attempt

LOAD_ICON = ":material/edit:"


def code_diff(before: str | None, after: str | None) -> str:
    """A unified diff of two attempts' code ('' when they are the same)."""
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        "previous attempt",
        "this attempt",
    )
    return "".join(lines)


def attempt_result(attempt: Attempt) -> SubmissionResult | None:
    try:
        return SubmissionResult.from_dict(attempt.details) if attempt.details else None
    except (KeyError, TypeError, ValueError):  # details of an older grader version
        return None


def attempt_ran(attempt: Attempt) -> bool:
    """Whether any test of the attempt's exercise ran (not: its file did not import); kept details decide,
    and an attempt without them counts as graded, as its score was."""
    result = attempt_result(attempt)
    return result is None or result.exercise_status(attempt.exercise) == ExerciseStatus.GRADED


def attempts_table(student: str) -> pd.DataFrame | None:
    """The student's attempts in time order for the Progress chart: the store's ``attempts`` columns and
    ``ran`` (``attempt_ran``); None when the store could not be read (``store_call`` said why)."""
    attempts = store_call("load your attempts", lambda opened: opened.attempt_details(student), None)
    if attempts is None:
        return None
    table = pd.DataFrame(
        [
            (
                item.id,
                item.student,
                item.exercise,
                item.time,
                item.score,
                item.max_score,
                item.score / item.max_score,
                item.public_tests_only,
                attempt_ran(item),
            )
            for item in attempts
        ],
        columns=["id", "student", "exercise", "time", "score", "max_score", "fraction", "public_tests_only", "ran"],
    )
    table["time"] = pd.to_datetime(table["time"], utc=True)
    return table


def attempt_label(number: int, attempt: Attempt, result: SubmissionResult | None, exercise_id: str) -> str:
    kind = "public tests" if attempt.public_tests_only else "graded"
    line = feedback.summary(result, exercise_id) if result is not None else "no details kept"
    return (
        f"Attempt {number} · {clock.shown(attempt.time, clock.DATE_TIME)} · {attempt.score:g} / "
        f"{attempt.max_score:g} ({kind}) · {line}"
    )


def _load(student: str, exercise: Exercise, code: str, number: int) -> None:
    workspace.replace_text(
        student, exercise, code, f"Attempt {number}'s code is in the editor now (and saved as your draft)."
    )
    st.rerun()  # the whole page: the editor, outside the hand-in fragment, mounts this code


def _ask_before_loading(question: str, asking: bool) -> None:
    st.session_state[question] = asking


def load_button(student: str, exercise: Exercise, attempt: Attempt, number: int) -> None:
    """Put the attempt's code in the editor; over a draft that differs from it, only once the student
    has confirmed (with a download of the draft at hand): the draft is not kept anywhere else.
    The question is asked in place, not in a popover, which can open partly off screen."""
    draft = workspace.draft_text(student, exercise)
    arguments = (student, exercise, attempt.code, number)
    question = f"ask-load-attempt-{attempt.id}"
    if draft == attempt.code:
        st.button(
            "Load into the editor", key=f"load-attempt-{attempt.id}", icon=LOAD_ICON, on_click=_load, args=arguments
        )
        return
    if not st.session_state.get(question):
        st.button(
            "Load into the editor",
            key=f"{question}-open",
            icon=LOAD_ICON,
            on_click=_ask_before_loading,
            args=(question, True),
        )
        return
    st.warning(
        f"Your draft differs from attempt {number}'s code. Loading replaces the draft in the editor, "
        "and it is not kept anywhere else: download it first if you may want it back."
    )
    choices = st.container(horizontal=True, gap="small")
    choices.button(
        f"Replace my draft with attempt {number}",
        key=f"load-attempt-{attempt.id}",
        type="primary",
        on_click=_confirmed_load,
        args=(question, *arguments),
    )
    choices.download_button(
        "Download my draft first",
        draft,
        exercise.filename,
        mime="text/x-python",
        icon=":material/download:",
        key=f"download-draft-{attempt.id}",
        on_click="ignore",
    )
    choices.button("Keep my draft", key=question + "-keep", on_click=_ask_before_loading, args=(question, False))


def _confirmed_load(question: str, student: str, exercise: Exercise, code: str, number: int) -> None:
    st.session_state[question] = False
    _load(student, exercise, code, number)


def show_history(student: str, exercise: Exercise, titles: dict[str, str]) -> None:
    attempts = store_call("load your attempts", lambda opened: opened.attempt_details(student, exercise.id), ())
    st.header(f"Your attempts ({len(attempts)})")
    if not attempts:
        st.caption("None yet: your submissions for grading appear here, each with its code and feedback.")
        return
    for number in range(len(attempts), 0, -1):
        attempt = attempts[number - 1]
        result = attempt_result(attempt)
        opened = st.expander(
            attempt_label(number, attempt, result, exercise.id), key=attempt_key(attempt), on_change="rerun"
        )
        with opened:
            if opened.open:
                attempt_details(student, exercise, titles, attempts, number, result)


def attempt_key(attempt: Attempt) -> str:
    """The session-state key of an attempt's expander (True while it is open)."""
    return f"attempt-open-{attempt.id}"


def attempt_details(
    student: str,
    exercise: Exercise,
    titles: dict[str, str],
    attempts: tuple[Attempt, ...],
    number: int,
    result: SubmissionResult | None,
) -> None:
    attempt = attempts[number - 1]
    feedback_tab, code_tab, diff_tab = st.tabs(["Feedback", "Code", "Changes since the attempt before"])
    with feedback_tab:
        if result is None:
            st.caption("This attempt's feedback was not kept.")
        else:
            feedback.show_result(result, [exercise.id], titles)
    with code_tab:
        st.code(attempt.code or "", language="python", line_numbers=True)
        if attempt.code:
            load_button(student, exercise, attempt, number)
    with diff_tab:
        if number == 1:
            st.caption("This is your first attempt.")
        else:
            changes = code_diff(attempts[number - 2].code, attempt.code)
            if changes:
                st.code(changes, language="diff")
            else:
                st.caption("The same code as the attempt before.")
