"""What the page shows while a student waits: a job's ``JobStatus``, and the sentences a student reads.

A status is ``WatchState.STARTING`` (no judge warm yet, about 10 s once), ``WAITING`` (``ahead``
submissions before it), ``GRADING``, ``DONE`` (``result``) or ``FAILED`` (``message``, a
sentence). ``RecentStatuses`` keeps the last statuses of the jobs the store does not hold (practice
runs; every job of a service without a store), so that a job's status is one question to the
service before and after it finishes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from grader.results import SubmissionResult
from grader.vocabulary import WatchState
from poslab.vocabulary import JobState

RECENT_STATUSES = 4096  # finished jobs whose status a page may still ask for (a class's practice runs)


@dataclass(frozen=True)
class JobStatus:
    """Where a job is (see the module's documentation)."""

    job_id: str
    state: WatchState
    ahead: int = 0
    result: SubmissionResult | None = None
    message: str | None = None
    handed_in: datetime | None = None  # when the job was handed in (UTC), when known

    def __post_init__(self) -> None:
        object.__setattr__(self, "state", WatchState(self.state))

    @property
    def settled(self) -> bool:
        """Done or failed: nothing more will change."""
        return self.state.settled


def queued_status(job_id: str, ahead: int, judges: int, handed_in: datetime | None) -> JobStatus:
    """A job not finished yet, ``ahead`` jobs handed in before it, with ``judges`` warm judges."""
    if judges == 0:
        return JobStatus(job_id, WatchState.STARTING, ahead, handed_in=handed_in)
    if ahead < judges:
        return JobStatus(job_id, WatchState.GRADING, handed_in=handed_in)
    return JobStatus(job_id, WatchState.WAITING, ahead - judges + 1, handed_in=handed_in)


def settled_status(record: Any) -> JobStatus | None:
    """A stored submission's status if it is settled (done or failed); None while it is queued."""
    if record.status == JobState.DONE:
        return finished_status(record.id, SubmissionResult.from_dict(record.result), None, record.submitted_at)
    if record.status == JobState.FAILED:
        return JobStatus(record.id, WatchState.FAILED, message=record.message, handed_in=record.submitted_at)
    return None


def practice_status(attempt: Any) -> JobStatus:
    """A practice run kept in the store (an attempt of kind ``PRACTICE``), as a finished status."""
    return JobStatus(
        f"practice-{attempt.id}",
        WatchState.DONE,
        result=SubmissionResult.from_dict(attempt.details),
        handed_in=attempt.time,
    )


def finished_status(
    job_id: str, result: SubmissionResult | None, error: BaseException | None, handed_in: datetime | None
) -> JobStatus:
    if result is not None:
        return JobStatus(job_id, WatchState.DONE, result=result, handed_in=handed_in)
    return JobStatus(job_id, WatchState.FAILED, message=failure_sentence(error), handed_in=handed_in)


class RecentStatuses:
    """The statuses of the last ``RECENT_STATUSES`` finished jobs not kept in a store. Thread-safe."""

    def __init__(self, size: int = RECENT_STATUSES) -> None:
        self.size = size
        self._statuses: OrderedDict[str, JobStatus] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, status: JobStatus) -> None:
        with self._lock:
            self._statuses[status.job_id] = status
            while len(self._statuses) > self.size:
                self._statuses.popitem(last=False)

    def get(self, job_id: str) -> JobStatus | None:
        with self._lock:
            return self._statuses.get(job_id)


# -- what a student reads -----------------------------------------------------------------------------


def failure_sentence(error: BaseException | None) -> str:
    return (
        f"The grader itself failed ({error}). This is not your code's fault: please submit again, "
        "and tell your instructor if it keeps happening."
    )


def stopped_grader_message(times: int) -> str:
    count = {2: "twice", 3: "three times"}.get(times, f"{times} times")
    return (
        f"Your code stopped the grader {count}; nothing was graded. Look for something that could "
        "bring the whole machine down (huge memory, endless processes) and submit again."
    )
