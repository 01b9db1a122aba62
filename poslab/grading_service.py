"""The app's side of grading: check what a student hands in, queue it fairly, and call the grader.

The grader itself (``grader.api``) runs the code in its own worker subprocess; this module never
executes or parses a submission. It only

* refuses uploads a person should fix first (not a ``.py`` file, over 200 KB, not UTF-8 text),
  with a sentence saying what to do;
* lets one student have one grading at a time, and the whole app at most ``max_gradings`` at
  once, telling a student who has to wait that they are waiting (``GradingGate``);
* turns grader failures (not installed, crashed) into ``GradingError`` with a readable message.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator

MAX_UPLOAD_BYTES = 200 * 1024  # a solution is one short file; anything bigger is a wrong file
WAIT_FOR_SLOT_SECONDS = 90.0  # how long a student waits for a free grader before being told to retry


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
        raise SubmissionRejected(
            f"{filename!r} is not a Python file: upload the .py file you edited (for example rope.py).")
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
