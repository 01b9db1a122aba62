"""The bound on gradings: one at a time per student, at most ``max_at_once`` for the whole app.

A stand-in until gradings go through a grading service; ``grading`` holds one per app process.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator

WAIT_FOR_SLOT_SECONDS = 90.0  # how long a student waits for a free grader before being told to retry


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


class GradingGate:
    """One grading at a time per student, at most ``max_at_once`` for the whole app.

    Shared by every session of the app. A student over the app-wide bound waits, and
    ``on_wait`` is told so first, so the page can say so.
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
