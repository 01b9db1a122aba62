"""Grading many submissions: on the grading service's judges (``grade``), or on threads that
each own one warm Grader (``validate``, benchmarks)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from grader.results import SubmissionResult
from grader.settings import GraderSettings
from grader.submissions import Submission
from poslab.vocabulary import GradingMode

if TYPE_CHECKING:
    from grader.api import Grader  # torch: grade_with_service's caller needs none of it


def grade_in_parallel(
    items: Sequence[Submission],
    jobs: int,
    make_grader: Callable[[], Grader],
    on_result: Callable[[SubmissionResult], None],
    exercises_of: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Grade ``items`` with ``jobs`` threads, each owning one Grader (one worker process); an item
    whose id ``exercises_of`` holds is graded on those exercises only, any other on every exercise.

    The judging threads share this process (the hidden tests run here); each worker and its
    children are separate processes. The first grader fault stops the run and is re-raised.
    """
    chosen = dict(exercises_of or {})
    pending: queue.Queue[Submission] = queue.Queue()
    for item in items:
        pending.put(item)
    faults: list[BaseException] = []

    def run() -> None:
        try:
            with make_grader() as grading:
                while not faults:
                    try:
                        item = pending.get_nowait()
                    except queue.Empty:
                        return
                    if item.submission_id in chosen:
                        on_result(grading.grade(item, exercises=chosen[item.submission_id]))
                    else:
                        on_result(grading.grade(item))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            faults.append(error)

    threads = [
        threading.Thread(target=run, name=f"grader-{index}", daemon=True)
        for index in range(max(1, min(jobs, len(items))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if faults:
        raise faults[0]


def grade_with_service(
    items: Sequence[Submission],
    settings: GraderSettings,
    on_result: Callable[[SubmissionResult], None],
    *,
    scheduler: str | None,
    judges: int,
    suite: str | None = None,
) -> None:
    """Grade ``items`` on the grading service: ``judges`` warm judges here, or the cluster at ``scheduler``.

    ``suite`` names a stand-in for the hidden suite ("module:attribute"; tests). Nothing goes to
    the store; the first grader fault stops the run and is raised.
    """
    if not items:
        return
    from grader.service import GradingService, as_completed
    from grader.service.settings import ServiceSettings

    wanted = ServiceSettings(
        grader=settings,
        scheduler=scheduler,
        judges=judges,
        suite=suite,
        warm_modes=(GradingMode.HIDDEN,),
        scheduler_in_process=True,  # its judges end with the command: so may its scheduler
    )
    with GradingService(service_settings=wanted) as service:
        jobs = [service.submit_submission(item) for item in items]
        for job in as_completed(jobs):
            on_result(job.result())
