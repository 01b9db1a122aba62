"""The grading service: one queue of gradings for the app and the CLI, graded by warm judges on Dask.

    from grader.service import GradingService
    service = GradingService.from_env(store=store)    # starts nothing yet
    service.start()                                   # optional: the judges warm up in the background
    job = service.submit("ada", {"rope.py": source}, exercises=["rope"])   # returns at once; recorded first
    result = job.result(timeout=60)                   # grader.results.SubmissionResult
    service.close()

Starting, where grading runs, judges that die, one pending submission per student and what the
page asks: ``docs/grading_service.md``. ``status(job_id)`` is the one way a page learns where a job is.
"""

from grader.service.dispatch import task_function
from grader.service.intake import AlreadyPending, SubmissionRejected
from grader.service.job import GradingJob, ServiceClosed, as_completed
from grader.service.judge import planned_isolation
from grader.service.outcomes import attempts_of, code_of
from grader.service.service import GradingService
from grader.service.settings import ServiceSettings
from grader.service.status import JobStatus, failure_sentence, stopped_grader_message
from grader.vocabulary import WatchState

__all__ = [
    "AlreadyPending",
    "GradingJob",
    "GradingService",
    "JobStatus",
    "ServiceClosed",
    "ServiceSettings",
    "SubmissionRejected",
    "WatchState",
    "as_completed",
    "attempts_of",
    "code_of",
    "failure_sentence",
    "planned_isolation",
    "stopped_grader_message",
    "task_function",
]
