"""The job handle: one grading handed to the service, and the result it waits for.

A job is a submission (``AttemptKind.SUBMISSION``: handed in, with a store recorded before it is
dispatched) or a practice run (``AttemptKind.PRACTICE``: the public tests on a draft). Its
``result()`` waits for the ``SubmissionResult``; ``as_completed`` yields jobs as they finish.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

from grader.results import SubmissionResult
from grader.submissions import Submission
from poslab.vocabulary import AttemptKind, GradingMode


class ServiceClosed(RuntimeError):
    """The service stopped before this job's result came; with a store, the next start grades it."""


class GradingJob:
    """One grading handed to the service; ``result()`` waits for its ``SubmissionResult``."""

    def __init__(
        self,
        job_id: str,
        student: str | None,
        submission: Submission,
        exercises: tuple[str, ...],
        mode: GradingMode,
        recorded: bool = True,
        kind: AttemptKind = AttemptKind.SUBMISSION,
    ) -> None:
        self.id, self.student, self.submission, self.exercises = job_id, student, submission, tuple(exercises)
        self.mode, self.kind = GradingMode(mode), AttemptKind(kind)
        self.recorded = recorded  # in the store's grading jobs (a submission with a store), with a lease
        self.submitted = time.monotonic()  # orders the jobs in flight here
        self.handed_in = datetime.now(UTC)
        self._done = threading.Event()
        self._result: SubmissionResult | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[GradingJob], None]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GradingJob({self.id!r}, {self.kind}, student={self.student!r}, done={self.done()})"

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the result; whether it is there."""
        return self._done.wait(timeout)

    def result(self, timeout: float | None = None) -> SubmissionResult:
        """The result; ``TimeoutError`` after ``timeout`` s; ``GraderFault`` if the grader broke."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"job {self.id} had no result within {timeout:g} s")
        if self._error is not None:
            raise self._error
        return self._result

    def add_done_callback(self, callback: Callable[[GradingJob], None]) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def settle(self, result: SubmissionResult | None, error: BaseException | None) -> None:
        """Give the job its result or error, once (later calls do nothing), and run its callbacks."""
        with self._lock:
            if self._done.is_set():
                return
            self._result, self._error = result, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


def as_completed(jobs: Iterable[GradingJob]) -> Iterator[GradingJob]:
    """Yield the jobs as their results arrive."""
    arrived: queue.Queue[GradingJob] = queue.Queue()
    jobs = list(jobs)
    for job in jobs:
        job.add_done_callback(arrived.put)
    for _ in jobs:
        yield arrived.get()
