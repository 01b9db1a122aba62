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

from __future__ import annotations

import importlib
from typing import Any

# Each name from the module that defines it, loaded when first asked for: a judge (``dask worker
# --preload grader.service.judge``) imports this package, and the service's store side (SQLAlchemy,
# pandas) would cost every judge start about 2 s of CPU it never uses.
_DEFINED_IN = {
    "AlreadyPending": "grader.service.intake",
    "GradingJob": "grader.service.job",
    "GradingService": "grader.service.service",
    "JobStatus": "grader.service.status",
    "ServiceClosed": "grader.service.job",
    "ServiceSettings": "grader.service.settings",
    "SubmissionRejected": "grader.service.intake",
    "WatchState": "grader.vocabulary",
    "as_completed": "grader.service.job",
    "attempts_of": "grader.service.outcomes",
    "code_of": "grader.service.outcomes",
    "failure_sentence": "grader.service.status",
    "planned_isolation": "grader.service.judge",
    "stopped_grader_message": "grader.service.status",
    "task_function": "grader.service.dispatch",
}

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


def __getattr__(name: str) -> Any:
    if name not in _DEFINED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_DEFINED_IN[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_DEFINED_IN])
