"""Intake: a submission's files checked, and (with a store) the job recorded before it is dispatched.

``SubmissionRejected`` says what to fix in what was handed in; ``AlreadyPending`` refuses a second
submission while the student's first is still queued (one pending submission per student), and
names that one. A practice run is checked the same way and recorded nowhere until its result
(``grader.service.outcomes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grader.settings import GraderSettings
from grader.submissions import Submission, SubmissionRejected, load_submission

__all__ = ["AlreadyPending", "SubmissionRejected", "checked_submission", "record_job"]


class AlreadyPending(SubmissionRejected):
    """The student has a submission still being graded; ``job_id`` is that one."""

    def __init__(self, message: str, job_id: str) -> None:
        super().__init__(message)
        self.job_id = job_id


def checked_submission(files: Mapping[str, str], submission_id: str, settings: GraderSettings) -> Submission:
    """The files as a ``Submission``; ``SubmissionRejected`` with every problem, in sentences."""
    submission = load_submission(files, submission_id=submission_id, settings=settings)
    problems = (*submission.problems, *submission.unread.values())
    if problems:
        raise SubmissionRejected(" ".join(problems))
    return submission


def record_job(store: Any, job: Any, holder: str, lease_seconds: float) -> None:
    """Record the job as queued and held by ``holder``; ``AlreadyPending`` if the student has one queued."""
    try:
        store.add_grading_job(job.id, job.student, job.submission.files, job.exercises, job.mode, holder, lease_seconds)
    except ValueError as refused:
        # The store's PendingJobExists carries the pending job. Told by that, not by its class: a store
        # made before a module reload (Streamlit's file watcher) raises the class it imported then.
        pending = getattr(refused, "job", None)
        if pending is None:
            raise
        raise AlreadyPending(str(refused), pending.id) from None
