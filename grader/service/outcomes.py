"""From a finished grading to the store: the one writer of grading outcomes.

A submission with a store: the job's state and one attempt per exercise graded, in one
transaction, exactly once (``Store.finish_grading_job``), or the job failed with a sentence (the
grader broke). A practice run: one attempt of kind ``PRACTICE`` per exercise that had tests
(``Store.record_practice_runs``). A job whose judges died under it (Dask's ``KilledWorker``) ends
with a result of status ``STOPPED_GRADER`` and a sentence; nothing ran in a sandbox, so its
isolation is ``NONE``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import grader
from grader.faults import GraderFault
from grader.results import SubmissionResult
from grader.service.job import GradingJob
from grader.service.status import failure_sentence, stopped_grader_message
from grader.vocabulary import Isolation, SubmissionStatus
from poslab.exercises import EXERCISES
from poslab.vocabulary import AttemptKind, GradingMode

if TYPE_CHECKING:
    from poslab.store.attempts import AttemptToRecord

logger = logging.getLogger(__name__)


def outcome_of(
    job: GradingJob, future: Any, allowed_failures: int
) -> tuple[SubmissionResult | None, BaseException | None]:
    """The result of a finished Dask future, or the error that ended it (a ``GraderFault``)."""
    from distributed.scheduler import KilledWorker

    try:
        return SubmissionResult.from_dict(future.result()), None
    except KilledWorker:
        return stopped_grader_result(job, allowed_failures + 1), None
    except BaseException as error:  # noqa: BLE001 - cancelled on close, or the grader's own failure
        return None, error if isinstance(error, GraderFault) else GraderFault(f"{type(error).__name__}: {error}")


def stopped_grader_result(job: GradingJob, times: int) -> SubmissionResult:
    submission = job.submission
    return SubmissionResult(
        submission_id=submission.submission_id,
        status=SubmissionStatus.STOPPED_GRADER,
        tests=(),
        isolation=Isolation.NONE,
        public_tests_only=job.mode == GradingMode.PUBLIC,
        submission_hash=submission.content_hash,
        suite_hash="",
        grader_version=grader.__version__,
        execution_time=time.monotonic() - job.submitted,
        messages=(stopped_grader_message(times),),
    )


def record_outcome(store: Any, job: GradingJob, result: SubmissionResult | None, error: BaseException | None) -> None:
    """Write what the job came to; a failure to write is logged (a lease that runs out regrades it)."""
    try:
        if job.kind == AttemptKind.PRACTICE:
            if store is not None and job.student is not None and result is not None:
                store.record_practice_runs(job.student, attempts_of(result, job.submission.files, job.exercises))
        elif job.recorded and result is not None:
            store.finish_grading_job(job.id, result.to_dict(), attempts_of(result, job.submission.files, job.exercises))
        elif job.recorded:
            store.fail_grading_job(job.id, failure_sentence(error))
    except Exception:  # noqa: BLE001 - the page still gets the result; the store's copy is retried or lost
        logger.exception("could not record the outcome of %s job %s", job.kind, job.id)


def code_of(files: Mapping[str, str], exercise: str) -> str:
    """The code kept with an exercise's attempt: its own file, or all the files."""
    own = next(item.filename for item in EXERCISES if item.id == exercise)
    if own in files:
        return files[own]
    if len(files) == 1:
        return next(iter(files.values()))
    return "\n\n".join(f"# ---- {name}\n{source}" for name, source in sorted(files.items()))


def attempts_of(result: SubmissionResult, files: Mapping[str, str], exercises: Sequence[str]) -> list[AttemptToRecord]:
    """One attempt per asked-for exercise that had tests, each with that exercise's tests only."""
    # Imported here, for a store: ``python -m grader grade`` has none, and the store's imports
    # (SQLAlchemy, Alembic, pandas) were half of its start before the judges could start.
    from grader.gradebook import per_test_rows
    from poslab.store.attempts import AttemptToRecord

    attempts = []
    data = result.to_dict()
    for exercise in exercises:
        score = result.exercises.get(exercise)
        if score is None or score.max_score <= 0:
            continue
        details = {**data, "tests": [test for test in data["tests"] if test["exercise"] == exercise]}
        attempts.append(
            AttemptToRecord(
                exercise,
                score.score,
                score.max_score,
                details,
                code_of(files, exercise),
                result.public_tests_only,
                tuple(per_test_rows(result, exercise)),
            )
        )
    return attempts
