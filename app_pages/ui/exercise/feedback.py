"""What a student sees of a grading result, laid out to be read.

The score first; each failed visible test as its own block with its whole message; the hidden
tests as the points lost per property family (never their names or messages); the passed tests
folded away. Tests whose visibility is anything but ``visible`` are never named.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from grader.results import FamilyLoss, SubmissionResult, TestOutcome
from grader.vocabulary import ExerciseStatus, family_words
from poslab.vocabulary import TestStatus


def visible_failures(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[TestOutcome]:
    """Each failed student-visible test of an exercise that imported, in suite order."""
    return [
        test
        for exercise in exercise_ids
        for test in result.feedback(exercise).visible
        if test.status == TestStatus.FAILED
    ]


def visible_passes(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[TestOutcome]:
    return [
        test
        for exercise in exercise_ids
        for test in result.feedback(exercise).visible
        if test.status == TestStatus.PASSED
    ]


def hidden_losses(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[FamilyLoss]:
    """Points the hidden tests took off, per property family (the grader's accounting)."""
    return [loss for exercise in exercise_ids for loss in result.feedback(exercise).hidden_losses]


def import_messages(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[str]:
    """The one message of each exercise whose file did not import (the same message is shown once)."""
    messages = [message for exercise in exercise_ids for message in result.feedback(exercise).import_messages]
    return list(dict.fromkeys(messages))


def score_line(result: SubmissionResult, exercise_id: str) -> str:
    if result.exercise_status(exercise_id) == ExerciseStatus.DID_NOT_IMPORT:
        return "did not import: nothing of it ran (see the message above)"
    score = result.exercises.get(exercise_id)
    if score is None or score.max_score == 0:
        return "no tests ran for this exercise"
    return f"{score.score:g} / {score.max_score:g} points"


def summary(result: SubmissionResult, exercise_id: str) -> str:
    """One line for the history: the score and what went wrong first."""
    failures = visible_failures(result, [exercise_id])
    losses = [loss for loss in hidden_losses(result, [exercise_id]) if loss.points > 0]
    if result.messages and (not result.tests or result.exercise_status(exercise_id) == ExerciseStatus.DID_NOT_IMPORT):
        return "did not import: " + result.messages[0].splitlines()[0][:120]
    if failures:
        return f"{len(failures)} visible test{'s' if len(failures) != 1 else ''} failed, first {failures[0].name}"
    if losses:
        return result.feedback(exercise_id).hidden_summary()
    return "every test passed"


def show_result(result: SubmissionResult, exercise_ids: Sequence[str], titles: dict[str, str]) -> None:
    """A result's feedback: score, messages, failed visible tests, hidden losses, passed tests folded."""
    if result.public_tests_only:
        st.info(
            "Public tests only: this score is feedback, not your grade. "
            "The hidden suite runs when you submit for grading (or, in a student bundle, when your "
            "instructor grades your work)."
        )
    for message in result.messages:  # may quote the student's own code or exception text: not Markdown
        st.code(message, language=None, wrap_lines=True)
    for exercise_id in exercise_ids:
        st.markdown(f"**{titles.get(exercise_id, exercise_id)}:** {score_line(result, exercise_id)}")
    for test in visible_failures(result, exercise_ids):
        with st.container(border=True):
            st.markdown(f":material/close: **Failed:** `{test.name}` · {test.score:g} / {test.max_score:g} points")
            st.code(test.output, language=None, wrap_lines=True)  # whole message; may quote student text
    losses = hidden_losses(result, exercise_ids)
    if losses:
        lines = [
            f"- {loss.failed} hidden test{'s' if loss.failed != 1 else ''} about **{family_words(loss.family)}** "
            f"failed: {loss.points:g} point{'s' if loss.points != 1 else ''}"
            for loss in losses
        ]
        st.markdown("**Where the other points went:**\n" + "\n".join(lines))  # families come from the suite
        st.caption("Hidden tests count in the score; their names, inputs and messages stay with your instructor.")
    passed = visible_passes(result, exercise_ids)
    if passed:
        with st.expander(f"{len(passed)} visible test{'s' if len(passed) != 1 else ''} passed"):
            st.markdown("\n".join(f"- `{test.name}` · {test.score:g} / {test.max_score:g}" for test in passed))
