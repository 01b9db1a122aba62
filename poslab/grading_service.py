"""The app's side of grading: check what a student hands in, queue it fairly, and call the grader.

The grader itself (``grader.api``) runs the code in its own worker subprocess; this module never
executes or parses a submission. It only

* refuses uploads a person should fix first (not a ``.py`` file, over 200 KB, not UTF-8 text),
  with a sentence saying what to do;
* lets one student have one grading at a time, and the whole app at most ``max_gradings`` at
  once, telling a student who has to wait that they are waiting (``GradingGate``);
* turns grader failures (not installed, crashed) into ``GradingError`` with a readable message;
* says what a ``SubmissionResult`` means for the student (visible tests only) and the store.
"""

from __future__ import annotations

import io
import threading
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import pandas as pd

MAX_UPLOAD_BYTES = 200 * 1024  # a solution is one short file; anything bigger is a wrong file
WAIT_FOR_SLOT_SECONDS = 90.0  # how long a student waits for a free grader before being told to retry
PROJECT_ROOT = Path(__file__).resolve().parent.parent


class SubmissionRejected(ValueError):
    """What the student handed in cannot be graded as it is; the message says how to fix it."""


class GradingError(RuntimeError):
    """The grading could not run (busy, not installed, crashed); the message says what to do."""


class AlreadyGrading(GradingError):
    def __init__(self) -> None:
        super().__init__("You already have a grading running (perhaps in another tab). "
                         "Wait for its result, then submit again.")


class GraderBusy(GradingError):
    def __init__(self, waited_seconds: float) -> None:
        super().__init__(f"The grader stayed busy with other students' code for {waited_seconds:g} seconds. "
                         "Nothing was lost: please submit again in a minute.")


def _check_size(size: int) -> None:
    if size > MAX_UPLOAD_BYTES:
        raise SubmissionRejected(
            f"That is {size / 1024:,.0f} KB; a solution must be at most {MAX_UPLOAD_BYTES // 1024} KB. "
            "Upload only your exercise's .py file.")


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionRejected(
            "That file is not UTF-8 text, so it is not a Python source file we can read. "
            "Save it as UTF-8 (any code editor can) and upload it again.") from None
    if "\x00" in text:
        raise SubmissionRejected("That file contains binary data (NUL bytes); upload the .py source file itself.")
    return text.removeprefix("\ufeff")  # a BOM from some Windows editors is harmless; drop it


def _check_not_empty(source: str) -> str:
    if not source.strip():
        raise SubmissionRejected("The submission is empty: upload your .py file or paste your code first.")
    return source


def source_from_upload(filename: str, data: bytes) -> str:
    """The text of an uploaded solution, or SubmissionRejected saying what is wrong with it."""
    if not filename.lower().endswith(".py"):
        # The name is not repeated: it is the student's text, and messages are drawn as Markdown.
        raise SubmissionRejected(
            "That is not a Python file (its name does not end in .py): upload the .py file you edited, "
            "for example rope.py.")
    _check_size(len(data))
    return _check_not_empty(_decode(data))


def source_from_paste(text: str | None) -> str:
    """Pasted code, with the same size rule as an upload."""
    source = text or ""
    _check_size(len(source.encode("utf-8")))
    return _check_not_empty(source.replace("\x00", ""))


class GradingGate:
    """One grading at a time per student, at most ``max_at_once`` for the whole app.

    Shared by every session of the app (the UI keeps one in ``st.cache_resource``). A student
    over the app-wide bound waits, and ``on_wait`` is told so first, so the page can say so.
    """

    def __init__(self, max_at_once: int, wait_seconds: float = WAIT_FOR_SLOT_SECONDS) -> None:
        if max_at_once < 1:
            raise ValueError(f"max_at_once must be at least 1, got {max_at_once}")
        self.max_at_once = max_at_once
        self.wait_seconds = wait_seconds
        self._slots = threading.BoundedSemaphore(max_at_once)
        self._lock = threading.Lock()
        self._grading: set[str] = set()

    def running(self) -> int:
        with self._lock:
            return len(self._grading)

    def _claim_student(self, student: str) -> None:
        with self._lock:
            if student in self._grading:
                raise AlreadyGrading()
            self._grading.add(student)

    def _release_student(self, student: str) -> None:
        with self._lock:
            self._grading.discard(student)

    @contextmanager
    def slot(self, student: str, on_wait: Callable[[str], None] = lambda message: None) -> Iterator[None]:
        """Hold a grading slot for ``student`` for the duration of the ``with`` block."""
        self._claim_student(student)
        try:
            if not self._slots.acquire(blocking=False):
                on_wait(f"The grader is busy: {self.max_at_once} gradings are running for the class. "
                        f"Yours starts as soon as one finishes (waiting up to {self.wait_seconds:g} s).")
                if not self._slots.acquire(timeout=self.wait_seconds):
                    raise GraderBusy(self.wait_seconds)
            try:
                yield
            finally:
                self._slots.release()
        finally:
            self._release_student(student)


# --- calling the grader ------------------------------------------------------------------------


def _grader_api():
    """``grader.api``, imported on first use so the app still opens (and says why) without it."""
    try:
        from grader import api
    except ImportError as error:
        raise GradingError(f"The autograder is not available in this installation ({error}). "
                           "Install the course with `pip install -r requirements.txt` from the project folder.") from None
    return api


def in_student_bundle() -> bool:
    """A bundle made by ``python -m grader release``: no hidden suite, only the public tests."""
    return _grader_api().running_in_bundle()


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
          on_wait: Callable[[str], None] = lambda message: None) -> Any:
    """Grade a folder or a {filename: source} map in the grader's own worker process.

    The hidden suite runs, or in a student bundle the public tests (the result then says
    ``public_tests_only``). Returns ``grader.results.SubmissionResult``; GradingError says why not.
    """
    api = _grader_api()
    mode = "public" if api.running_in_bundle() else "hidden"
    with gate.slot(student, on_wait):
        try:
            return api.grade_submission(submission, mode=mode)
        except api.GraderFault as error:
            raise GradingError(f"The grader itself failed ({error}). This is not your code's fault: "
                               "please submit again, and tell your instructor if it keeps happening.") from None
        except OSError as error:
            raise GradingError(f"The grader could not read the submission ({error}).") from None


# --- what a result means for the student and the store -------------------------------------------


def visible_tests(result: Any, exercise_ids: Sequence[str]) -> pd.DataFrame:
    """The student-visible tests of these exercises: exercise, test, points, status, message.

    Tests whose visibility is anything but ``visible`` are never shown, not even their names.
    """
    rows = [{"exercise": test.exercise, "test": test.name, "points": f"{test.score:g} / {test.max_score:g}",
             "status": test.status, "message": test.output}
            for test in result.tests if test.exercise in exercise_ids and test.visibility == "visible"]
    return pd.DataFrame(rows, columns=["exercise", "test", "points", "status", "message"])


def visible_failures(result: Any, exercise_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(test name, message) of each failed student-visible test, in suite order."""
    return [(test.name, test.output) for test in result.tests
            if test.exercise in exercise_ids and test.visibility == "visible" and test.status != "passed"]


def hidden_test_count(result: Any, exercise_ids: Sequence[str]) -> int:
    return sum(test.exercise in exercise_ids and test.visibility != "visible" for test in result.tests)


def score_line(result: Any, exercise_id: str) -> str:
    score = result.exercises.get(exercise_id)
    if score is None or score.max_score == 0:
        return "no tests ran for this exercise"
    return f"{score.score:g} / {score.max_score:g} points"


def attempt_details(result: Any, exercise_id: str) -> dict:
    """What the store keeps with an attempt: the result, cut down to this exercise's tests."""
    details = result.to_dict()
    details["tests"] = [test for test in details["tests"] if test["exercise"] == exercise_id]
    return details


def save_attempts(store: Any, student: str, result: Any, code_by_exercise: Mapping[str, str | None]) -> list[str]:
    """Record one attempt per exercise in ``code_by_exercise`` that had tests; returns their ids."""
    saved = []
    for exercise_id, code in code_by_exercise.items():
        score = result.exercises.get(exercise_id)
        if score is None or score.max_score <= 0:
            continue
        store.record_attempt(student, exercise_id, score.score, score.max_score,
                             details=attempt_details(result, exercise_id), code=code,
                             public_tests_only=result.public_tests_only)
        saved.append(exercise_id)
    return saved
