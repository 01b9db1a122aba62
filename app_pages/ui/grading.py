"""Grading from the Exercises page: the gate, the call into ``grader.api``, and saving the attempts.

The grader runs the code in its own sandboxed worker process; the app never executes or parses a
submission. What the student handed in is checked first by the grader's own rules
(``grader.submissions``); this module turns grader failures into ``GradingError`` sentences and
records one attempt per exercise, with its per-test rows for the pass rates.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import streamlit as st

from app_pages.ui.gate import GradingError, GradingGate
from app_pages.ui.store_calls import store_call
from grader import api
from grader.gradebook import per_test_rows
from grader.results import SubmissionResult
from grader.submissions import SubmissionRejected
from poslab.config import PROJECT_ROOT, Settings
from poslab.exercises import Exercise
from poslab.store import Store

GRADED_KEY = "last_grading"  # this session's last LastGrading


@dataclass(frozen=True)
class LastGrading:
    exercises: tuple[str, ...]  # the exercises the student submitted for
    result: SubmissionResult


@st.cache_resource(show_spinner=False)
def _grading_gate(max_at_once: int) -> GradingGate:
    return GradingGate(max_at_once)  # one per app process: every session shares the bound


def grading_gate() -> GradingGate:
    return _grading_gate(Settings.from_env().max_gradings)


def in_student_bundle() -> bool:
    """A bundle made by ``python -m grader release``: no hidden suite, only the public tests."""
    return api.running_in_bundle()


def exercises_folder() -> Path | None:
    """The checkout's or bundle's ``exercises/`` folder with the student's files, if there is one."""
    folder = PROJECT_ROOT / "exercises"
    return folder if folder.is_dir() and any(folder.glob("*.py")) else None


def exercises_zip(folder: Path) -> bytes:
    """The stubs and public tests of ``folder`` as a zip (``exercises/<name>.py``), for download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.glob("*.py")):
            archive.write(path, f"exercises/{path.name}")
    return buffer.getvalue()


def grade(gate: GradingGate, student: str, submission: Path | Mapping[str, str],
          on_wait: Callable[[str], None] = lambda message: None) -> SubmissionResult:
    """Grade a folder or a {filename: source} map in the grader's own worker process.

    The hidden suite runs, or in a student bundle the public tests (the result then says
    ``public_tests_only``). GradingError says why not.
    """
    mode = "public" if api.running_in_bundle() else "hidden"
    with gate.slot(student, on_wait):
        try:
            return api.grade_submission(submission, mode=mode)
        except api.GraderFault as error:
            raise GradingError(f"The grader itself failed ({error}). This is not your code's fault: "
                               "please submit again, and tell your instructor if it keeps happening.") from None
        except OSError as error:
            raise GradingError(f"The grader could not read the submission ({error}).") from None


def attempt_details(result: SubmissionResult, exercise_id: str) -> dict:
    """What the store keeps with an attempt: the result, cut down to this exercise's tests."""
    details = result.to_dict()
    details["tests"] = [test for test in details["tests"] if test["exercise"] == exercise_id]
    return details


def save_attempts(store: Store, student: str, result: SubmissionResult,
                  code_by_exercise: Mapping[str, str | None]) -> list[str]:
    """Record one attempt per exercise in ``code_by_exercise`` that had tests; returns their ids."""
    saved = []
    for exercise_id, code in code_by_exercise.items():
        score = result.exercises.get(exercise_id)
        if score is None or score.max_score <= 0:
            continue
        store.record_attempt(student, exercise_id, score.score, score.max_score,
                             details=attempt_details(result, exercise_id), code=code,
                             public_tests_only=result.public_tests_only, tests=per_test_rows(result, exercise_id))
        saved.append(exercise_id)
    return saved


def last_grading() -> LastGrading | None:
    return st.session_state.get(GRADED_KEY)


def _grade(student: str, submission: Path | Mapping[str, str], code_by_exercise: dict[str, str | None]) -> None:
    with st.status("Grading your code in a sandbox…", expanded=True) as status:
        def waiting(message: str) -> None:
            status.update(label="Waiting for a free grader…")
            st.write(message)

        try:
            result = grade(grading_gate(), student, submission, on_wait=waiting)
        except GradingError as error:
            status.update(label="Not graded", state="error")
            st.error(str(error))
            return
        saved = store_call("save your score",
                           lambda opened: save_attempts(opened, student, result, code_by_exercise), [])
        status.update(label=f"Graded in {result.execution_time:.0f} s" + (" and saved" if saved else ""),
                      state="complete", expanded=False)
    st.session_state[GRADED_KEY] = LastGrading(tuple(code_by_exercise), result)


def submit_source(student: str, exercise: Exercise, read_source: Callable[[], str]) -> None:
    """Check an upload or paste, then grade it as the exercise's file and save the score with the code."""
    try:
        source = read_source()
    except SubmissionRejected as error:
        st.error(str(error), icon=":material/block:")
        return
    _grade(student, {exercise.filename: source}, {exercise.id: source})


def submit_folder(student: str, folder: Path, exercises: tuple[Exercise, ...]) -> None:
    """Grade the student's exercises/ folder as it is on disk; every exercise's score is saved."""
    def code(exercise: Exercise) -> str | None:
        path = folder / exercise.filename
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    _grade(student, folder, {exercise.id: code(exercise) for exercise in exercises})
