"""What a student sees of a grading result: scores, the visible tests, how many are hidden.

Tests whose visibility is anything but ``visible`` are never shown, not even their names.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd
import streamlit as st

from app_pages.ui.grading import last_grading
from grader.results import SubmissionResult


def visible_tests(result: SubmissionResult, exercise_ids: Sequence[str]) -> pd.DataFrame:
    """The student-visible tests of these exercises: exercise, test, points, status, message."""
    rows = [{"exercise": test.exercise, "test": test.name, "points": f"{test.score:g} / {test.max_score:g}",
             "status": test.status, "message": test.output}
            for test in result.tests if test.exercise in exercise_ids and test.visibility == "visible"]
    return pd.DataFrame(rows, columns=["exercise", "test", "points", "status", "message"])


def visible_failures(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(test name, message) of each failed student-visible test, in suite order."""
    return [(test.name, test.output) for test in result.tests
            if test.exercise in exercise_ids and test.visibility == "visible" and test.status != "passed"]


def hidden_test_count(result: SubmissionResult, exercise_ids: Sequence[str]) -> int:
    return sum(test.exercise in exercise_ids and test.visibility != "visible" for test in result.tests)


def score_line(result: SubmissionResult, exercise_id: str) -> str:
    score = result.exercises.get(exercise_id)
    if score is None or score.max_score == 0:
        return "no tests ran for this exercise"
    return f"{score.score:g} / {score.max_score:g} points"


def show_last_result(titles: dict[str, str]) -> None:
    """This session's last grading: score, visible tests as a table, how many are hidden."""
    last = last_grading()
    if last is None:
        return
    result, exercise_ids = last.result, last.exercises
    st.subheader("Your last result")
    if result.public_tests_only:
        st.info("Public tests only: this copy of the course has no hidden tests, so this score is feedback, "
                "not your grade. The hidden suite runs when your instructor grades your work.")
    for message in result.messages:  # may quote the student's own code or exception text: not Markdown
        st.code(message, language=None, wrap_lines=True)
    for exercise_id in exercise_ids:
        st.markdown(f"**{titles.get(exercise_id, exercise_id)}:** {score_line(result, exercise_id)}")
    st.dataframe(visible_tests(result, exercise_ids), hide_index=True)
    for name, message in visible_failures(result, exercise_ids):
        st.markdown(f"**Failed:** `{name}`")  # test names come from the trusted suite
        st.code(message, language=None, wrap_lines=True)  # may quote the student's exception text
    hidden = hidden_test_count(result, exercise_ids)
    if hidden:
        st.caption(f"{hidden} more test{'s' if hidden != 1 else ''} ran but {'are' if hidden != 1 else 'is'} hidden: "
                   "they count in the score; their names and messages are for your instructor.")
