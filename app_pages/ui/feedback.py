"""What a student sees of a grading result, laid out to be read.

The score first; each failed visible test as its own block with its whole message; the hidden
tests as the points lost per property family (never their names or messages); the passed tests
folded away. Tests whose visibility is anything but ``visible`` are never named.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import streamlit as st

from grader.results import SubmissionResult, TestOutcome

OTHER_FAMILY = "other properties"


@dataclass(frozen=True)
class FamilyLoss:
    family: str
    lost: float
    max_score: float
    tests: int


def _tests(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[TestOutcome]:
    return [test for test in result.tests if test.exercise in exercise_ids]


def visible_failures(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[TestOutcome]:
    """Each failed student-visible test, in suite order."""
    return [test for test in _tests(result, exercise_ids) if test.visibility == "visible" and test.status != "passed"]


def visible_passes(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[TestOutcome]:
    return [test for test in _tests(result, exercise_ids) if test.visibility == "visible" and test.status == "passed"]


def hidden_losses(result: SubmissionResult, exercise_ids: Sequence[str]) -> list[FamilyLoss]:
    """Points the hidden tests took off, per property family (families with no loss too), by family name."""
    lost: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for test in _tests(result, exercise_ids):
        if test.visibility == "visible":
            continue
        entry = lost[test.family or OTHER_FAMILY]
        entry[0] += test.max_score - test.score
        entry[1] += test.max_score
        entry[2] += 1
    return [FamilyLoss(family, points, maximum, int(count)) for family, (points, maximum, count) in sorted(lost.items())]


def score_line(result: SubmissionResult, exercise_id: str) -> str:
    score = result.exercises.get(exercise_id)
    if score is None or score.max_score == 0:
        return "no tests ran for this exercise"
    return f"{score.score:g} / {score.max_score:g} points"


def summary(result: SubmissionResult, exercise_id: str) -> str:
    """One line for the history: the score and what went wrong first."""
    failures = visible_failures(result, [exercise_id])
    losses = [loss for loss in hidden_losses(result, [exercise_id]) if loss.lost > 0]
    if result.messages and not result.tests:
        return result.messages[0].splitlines()[0][:120]
    if failures:
        return f"{len(failures)} visible test{'s' if len(failures) != 1 else ''} failed, first {failures[0].name}"
    if losses:
        return "hidden tests lost points in " + ", ".join(loss.family for loss in losses)
    return "every test passed"


def show_result(result: SubmissionResult, exercise_ids: Sequence[str], titles: dict[str, str]) -> None:
    """A result's feedback: score, messages, failed visible tests, hidden losses, passed tests folded."""
    if result.public_tests_only:
        st.info("Public tests only: this score is feedback, not your grade. "
                "The hidden suite runs when you submit for grading (or, in a student bundle, when your "
                "instructor grades your work).")
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
        lines = [f"- **{loss.family}**: lost {loss.lost:g} of {loss.max_score:g} points"
                 f" ({loss.tests} test{'s' if loss.tests != 1 else ''})" for loss in losses]
        st.markdown("**Hidden tests, by property:**\n" + "\n".join(lines))  # families come from the suite
        st.caption("Hidden tests count in the score; their names and messages are for your instructor.")
    passed = visible_passes(result, exercise_ids)
    if passed:
        with st.expander(f"{len(passed)} visible test{'s' if len(passed) != 1 else ''} passed"):
            st.markdown("\n".join(f"- `{test.name}` · {test.score:g} / {test.max_score:g}" for test in passed))
