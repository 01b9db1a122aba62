"""``GradingService``: the one queue of gradings for the app and the CLI, and the one writer of their outcomes.

Building one starts nothing; ``start()`` (idempotent, safe from any thread) starts the judges in the
background. The package's documentation tells the whole story; each part is a module of its own.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from grader.faults import GraderFault
from grader.selection import grading_mode, selected_exercises
from grader.service.connection import ClusterConnection
from grader.service.dispatch import Dispatcher
from grader.service.intake import checked_submission, record_job
from grader.service.job import GradingJob, ServiceClosed
from grader.service.leases import LeaseKeeper, holder_name
from grader.service.outcomes import outcome_of, record_outcome
from grader.service.settings import ServiceSettings
from grader.service.status import (
    JobStatus,
    RecentStatuses,
    finished_status,
    practice_status,
    queued_status,
    settled_status,
)
from grader.settings import GraderSettings
from grader.submissions import Submission, load_submission
from poslab.vocabulary import AttemptKind, GradingMode

logger = logging.getLogger(__name__)

PRACTICE_ID = "practice"  # the submission id of a practice run that names no student
STOPPED_BEFORE_RESULT = "the grading service stopped before this job's result; with a store, the next start grades it"


class GradingService:
    """See the package's documentation. Thread-safe; one per process (the app caches it).

    ``self.settings`` is one ``ServiceSettings``: ``service_settings`` (default: the graders' own
    ``settings``), with the fields the keywords give overridden.
    """

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        judges: int | None = None,
        store: Any = None,
        settings: GraderSettings | None = None,
        service_settings: ServiceSettings | None = None,
        suite: str | None = None,
        warm_modes: Sequence[GradingMode] | None = None,
    ) -> None:
        base = service_settings or ServiceSettings(grader=settings or GraderSettings.from_env())
        overrides = dict(grader=settings, scheduler=scheduler, judges=judges, suite=suite, warm_modes=warm_modes)
        self.settings = replace(base, **{name: value for name, value in overrides.items() if value is not None})
        self.store = store
        self.holder = holder_name(uuid.uuid4().hex[:12])
        self._closing = threading.Event()
        self.connection = ClusterConnection(self.settings)
        self.dispatcher = Dispatcher(self.connection, self.settings, self._finished)
        self.recent = RecentStatuses()
        self.leases = (
            None
            if store is None
            else LeaseKeeper(store, self.holder, self.settings.lease_seconds, self._held, self._regrade, self._closing)
        )
        self._started = False
        self._start_lock = threading.Lock()
        self._finisher: ThreadPoolExecutor | None = None

    @classmethod
    def from_env(cls, *, store: Any = None, settings: GraderSettings | None = None) -> GradingService:
        """Embedded, or the cluster at ``POSLAB_GRADER_SCHEDULER``; ``store``: where outcomes are recorded."""
        return cls(store=store, service_settings=ServiceSettings.from_env(grader=settings))

    def __enter__(self) -> GradingService:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- start-up ----------------------------------------------------------------------------------

    def start(self) -> GradingService:
        """Start the judges (or connect to the scheduler) in the background, once; returns at once."""
        if self._started:
            return self
        with self._start_lock:
            if self._closing.is_set():
                raise ServiceClosed("the grading service is closed")
            if not self._started:
                self._finisher = ThreadPoolExecutor(2, thread_name_prefix="grader-results")
                threading.Thread(target=self._connect, name="grader-service-start", daemon=True).start()
                self._started = True
        return self

    @property
    def started(self) -> bool:
        return self._started

    def _connect(self) -> None:
        try:
            self.connection.open()
        except GraderFault as fault:
            logger.error("%s", fault)
            for job in self.dispatcher.fail_backlog(fault):
                self._settle(job, None, fault)
            return
        if self._closing.is_set():
            return
        self.dispatcher.connected()
        if self.leases is not None:
            self.leases.start()

    @property
    def client(self) -> Any:
        """The Dask client, once connected (None before)."""
        return self.connection.client

    def judges(self) -> int:
        """Judges connected to the scheduler now (each joined once warm)."""
        return self.connection.judges()

    def wait_ready(self, timeout: float | None = None) -> None:
        """Start, and wait until a judge is warm; ``GraderFault`` if none can start within ``timeout`` s."""
        self.start().connection.wait_for_judge(self.settings.start_seconds if timeout is None else timeout)

    # -- handing in --------------------------------------------------------------------------------

    def submit(
        self,
        student: str,
        files: Mapping[str, str],
        exercises: Sequence[str] | None = None,
        mode: GradingMode = GradingMode.HIDDEN,
    ) -> GradingJob:
        """Queue one submission and return its job at once; ``SubmissionRejected`` says what to fix."""
        submission = checked_submission(files, student, self.settings.grader)
        return self.submit_submission(submission, exercises, mode, student=student)

    def submit_submission(
        self,
        submission: Submission,
        exercises: Sequence[str] | None = None,
        mode: GradingMode = GradingMode.HIDDEN,
        *,
        student: str | None = None,
        record: bool = True,
    ) -> GradingJob:
        """Queue a loaded submission as it is (one with problems is graded as not importable: the CLI).
        ``record=False``: its outcome is only the job's (a regrade keeps it its own way), never the store's."""
        job = GradingJob(
            uuid.uuid4().hex,
            student or submission.submission_id,
            submission,
            selected_exercises(exercises),
            grading_mode(mode),
            recorded=self.store is not None and record,
        )
        return self._queue(job)

    def run_public(
        self, files: Mapping[str, str], exercises: Sequence[str] | None = None, *, student: str | None = None
    ) -> GradingJob:
        """Grade ``files`` against the public tests (practice) and return the job at once.

        With a store and a ``student``, its outcome is kept as that student's practice runs (one
        per exercise with tests, ``Store.practice_runs``), never as a job, an attempt or the
        student's pending submission. ``SubmissionRejected`` says what to fix.
        """
        submission = checked_submission(files, student or PRACTICE_ID, self.settings.grader)
        job = GradingJob(
            uuid.uuid4().hex,
            student,
            submission,
            selected_exercises(exercises),
            GradingMode.PUBLIC,
            recorded=False,
            kind=AttemptKind.PRACTICE,
        )
        return self._queue(job)

    def _queue(self, job: GradingJob) -> GradingJob:
        """Record the job (a submission, with a store) and send it to the judges."""
        if self._closing.is_set():
            raise ServiceClosed("the grading service is closed")
        if job.recorded:
            record_job(self.store, job, self.holder, self.settings.lease_seconds)
        self.start().dispatcher.dispatch(job)
        return job

    # -- outcomes ----------------------------------------------------------------------------------

    def _finished(self, job: GradingJob, future: Any) -> None:
        """Dask's callback: record the outcome off Dask's thread."""
        try:
            self._finisher.submit(self._finish, job, future)
        except RuntimeError:  # close() shut the finisher down: it settles the job itself
            pass

    def _finish(self, job: GradingJob, future: Any) -> None:
        result, error = outcome_of(job, future, self.connection.allowed_failures)
        if error is not None and self._closing.is_set():
            return  # cancelled by close(): still queued in the store, the next start grades it
        record_outcome(self.store, job, result, error)
        self._settle(job, result, error)

    def _settle(self, job: GradingJob, result: Any, error: BaseException | None) -> None:
        if not job.recorded:  # the store does not hold its status: keep it for the page
            self.recent.keep(finished_status(job.id, result, error, job.handed_in))
        self.dispatcher.forget(job)
        job.settle(result, error)

    # -- leases ----------------------------------------------------------------------------------------

    def _held(self) -> list[str]:
        return [job.id for job in self.dispatcher.in_flight() if job.recorded]

    def _regrade(self, record: Any) -> None:
        if self.dispatcher.job(record.id) is not None:
            return
        submission = load_submission(record.files, submission_id=record.student, settings=self.settings.grader)
        self.dispatcher.dispatch(GradingJob(record.id, record.student, submission, record.exercises, record.mode))

    # -- what the page shows -------------------------------------------------------------------------

    def job(self, job_id: str) -> GradingJob | None:
        """The job if this service is grading it now (not after it finished)."""
        return self.dispatcher.job(job_id)

    def status(self, job_id: str) -> JobStatus:
        """Where a job is: starting, waiting (how many ahead), grading, done or failed; ``KeyError`` if unknown.

        Any job of this service, also finished; with a store, any replica's submission, also after a
        reload. Asking about a submission still queued starts the service: only a started one grades it.
        """
        job = self.dispatcher.job(job_id)
        if job is None and (kept := self.recent.get(job_id)) is not None:
            return kept
        if job is not None and not job.recorded:
            ahead, handed_in = self.dispatcher.ahead_of(job), job.handed_in
        elif self.store is not None:
            record = self.store.grading_job(job_id)
            if (settled := settled_status(record)) is not None:
                return settled
            ahead, handed_in = self.store.jobs_ahead(job_id), record.submitted_at
            self.start()
        else:
            raise KeyError(f"no job {job_id!r} in this service")
        problem = self.connection.problem()
        if problem is not None:
            return finished_status(job_id, None, problem, handed_in)
        return queued_status(job_id, ahead, self.judges(), handed_in)

    def wait(self, job_id: str, timeout: float) -> None:
        """Wait up to ``timeout`` s for a job this service is grading (returns at once for any other)."""
        job = self.dispatcher.job(job_id)
        if job is not None:
            job.wait(timeout)

    def last_submission(self, student: str, exercise: str | None = None) -> tuple[str, tuple[str, ...]] | None:
        """(id, exercises) of the student's last submission (of ``exercise``, if given), queued or settled:
        after a reload the page watches it again, and ``status()`` says where it is."""
        record = None if self.store is None else self.store.latest_grading_job(student, exercise)
        return None if record is None else (record.id, tuple(record.exercises))

    def last_practice_run(self, student: str, exercise: str) -> JobStatus | None:
        """The student's last practice run of ``exercise`` kept in the store, as a finished status."""
        runs = () if self.store is None else self.store.practice_runs(student, exercise)
        return practice_status(runs[-1]) if runs else None

    # -- stopping -----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop; submissions without a result stay queued in the store and the next start grades them."""
        with self._start_lock:
            if self._closing.is_set():
                return
            self._closing.set()
        unfinished = self.dispatcher.in_flight()
        if self.leases is not None and self._started:
            self.leases.release()
        self.connection.close()
        if self._finisher is not None:
            self._finisher.shutdown(wait=True, cancel_futures=False)
        for job in unfinished:
            self._settle(job, None, ServiceClosed(STOPPED_BEFORE_RESULT))
