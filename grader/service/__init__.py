"""The grading service: one queue of submissions for the app and the CLI, graded by warm judges on Dask.

    from grader.service import GradingService
    service = GradingService.from_env(store=store)    # embedded by default; a Dask cluster when configured
    job = service.submit("ada", {"rope.py": source}, exercises=["rope"])   # returns at once; recorded first
    result = job.result(timeout=60)                   # grader.results.SubmissionResult
    service.close()

**Where grading runs.** Embedded (the default): a Dask scheduler on 127.0.0.1 and
``POSLAB_GRADER_WORKERS`` judges (default: one per core), each its own interpreter started with
``subprocess`` (``grader.service.embedded``); they stop with the service or when this process
ends. With ``POSLAB_GRADER_SCHEDULER=tcp://host:8786`` the service uses that cluster, whose
workers run ``dask worker tcp://host:8786 --nthreads 1 --preload grader.cluster``. Each Dask task
is one submission's whole grading on a warm judge (``grader.cluster``); nothing of it runs here.

**Nothing lost.** With a store, ``submit`` records the job (queued, code, who, when) before it is
dispatched, and the service, not the page, writes the result: the job's status and one attempt
per exercise graded, in one transaction, exactly once. The replica that dispatched a job holds a
lease on it and renews it while it waits; when a service starts (and every ``lease_seconds / 3``
after), it claims and regrades the jobs whose lease ran out, i.e. those of a stopped replica.

**Judges that die.** A judge runs one job at a time, so a judge that dies costs that job only:
Dask gives it to another judge. If that one dies too, the job ends with a result saying "Your code
stopped the grader twice; nothing was graded." Only a judge's death counts: a submission that
crashes or hangs its sandboxed child is an ordinary failed test. A grader fault (a sandbox worker
that cannot start) is retried once (``retries=1``) and then fails the job with a sentence.

**One pending submission per student** (with a store): a second one while the first is still
queued is refused with ``AlreadyPending``, whose message says so; it names the pending job.

**Practice runs.** ``run_public(files, exercises)`` grades a draft against the public tests on
the same warm judges and returns its job at once; it records nothing (no job, no attempt): the
caller keeps the result where it wants it (the app: a practice run).

**Module reloads.** A process that reloads this package's modules (Streamlit's file watcher)
keeps a service made before: the task function is looked up by name at each dispatch, so Dask
sends it by reference (the function object made before a reload would be pickled by value, and
fails), and the store's exceptions are those of the store the service was given.

Environment: ``POSLAB_GRADER_WORKERS`` (judges of the embedded cluster, default one per core),
``POSLAB_GRADER_SCHEDULER`` (a Dask scheduler's address; unset: embedded).
"""

from __future__ import annotations

import importlib
import logging
import os
import queue
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from grader.api import GraderFault, Submission, SubmissionRejected, load_submission
from grader.api import MODES, selected_exercises
from grader.cluster import WARM_MODES_ENV, task_for
from grader.gradebook import per_test_rows
from grader.results import SubmissionResult
from grader.settings import GraderSettings, positive_int
from poslab.exercises import EXERCISES

logger = logging.getLogger(__name__)

__all__ = ["AlreadyPending", "GradingJob", "GradingService", "JobStatus", "ServiceClosed", "ServiceSettings",
           "SubmissionRejected"]

STOPPED_GRADER_STATUS = "stopped_grader"
CONNECT_SECONDS = 60.0
TASK_MODULE, TASK_FUNCTION = "grader.cluster", "grade_on_judge"  # each Dask task: one submission's grading


def task_function() -> Callable[[dict], dict]:
    """The Dask task function as imported now (so Dask sends it by reference, also after a reload)."""
    return getattr(importlib.import_module(TASK_MODULE), TASK_FUNCTION)


def stopped_grader_message(times: int) -> str:
    count = {2: "twice", 3: "three times"}.get(times, f"{times} times")
    return (f"Your code stopped the grader {count}; nothing was graded. Look for something that could "
            "bring the whole machine down (huge memory, endless processes) and submit again.")


@dataclass(frozen=True)
class ServiceSettings:
    scheduler: str | None = None  # a Dask scheduler's address; None: an embedded cluster
    workers: int = max(1, os.cpu_count() or 1)  # judges of the embedded cluster
    lease_seconds: float = 60.0  # a replica renews its jobs' leases every lease_seconds / 3
    start_seconds: float = 180.0  # judges warming up on a loaded machine (import torch, bwrap)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "ServiceSettings":
        env = os.environ if environ is None else environ
        scheduler = env.get("POSLAB_GRADER_SCHEDULER", "").strip() or None
        if scheduler is not None and "://" not in scheduler:
            raise ValueError(f"POSLAB_GRADER_SCHEDULER must be an address like tcp://host:8786, got {scheduler!r}")
        return cls(scheduler=scheduler, workers=positive_int(env, "POSLAB_GRADER_WORKERS", cls.workers))


class AlreadyPending(SubmissionRejected):
    """The student has a submission still being graded; ``job_id`` is that one."""

    def __init__(self, message: str, job_id: str) -> None:
        super().__init__(message)
        self.job_id = job_id


class ServiceClosed(RuntimeError):
    """The service stopped before this job's result came; with a store, the next start grades it."""


@dataclass(frozen=True)
class JobStatus:
    """What the page shows while a student waits.

    ``state``: ``starting`` (judges warming up, about 10 s once), ``waiting`` (``ahead`` submissions
    before it), ``grading``, ``done`` (``result``) or ``failed`` (``message``, a sentence).
    """

    job_id: str
    state: str
    ahead: int = 0
    result: SubmissionResult | None = None
    message: str | None = None


class GradingJob:
    """One submission handed to the service; ``result()`` waits for its ``SubmissionResult``."""

    def __init__(self, job_id: str, student: str, submission: Submission, exercises: tuple[str, ...],
                 mode: str, recorded: bool = True) -> None:
        self.id, self.student, self.submission, self.exercises, self.mode = job_id, student, submission, exercises, mode
        self.recorded = recorded  # False for a practice run: nothing of it goes to the store
        self.submitted = time.monotonic()
        self._done = threading.Event()
        self._result: SubmissionResult | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[["GradingJob"], None]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GradingJob({self.id!r}, student={self.student!r}, done={self.done()})"

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

    def add_done_callback(self, callback: Callable[["GradingJob"], None]) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def _settle(self, result: SubmissionResult | None, error: BaseException | None) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._result, self._error = result, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


def _allowed_failures(dask_scheduler: Any) -> int:
    return dask_scheduler.allowed_failures


def code_of(files: Mapping[str, str], exercise: str) -> str:
    """The code kept with an exercise's attempt: its own file, or all the files."""
    own = next(item.filename for item in EXERCISES if item.id == exercise)
    if own in files:
        return files[own]
    if len(files) == 1:
        return next(iter(files.values()))
    return "\n\n".join(f"# ---- {name}\n{source}" for name, source in sorted(files.items()))


def attempts_of(result: SubmissionResult, files: Mapping[str, str], exercises: Sequence[str],
                attempt_type: Any = None) -> list:
    """One attempt per asked-for exercise that had tests, each with that exercise's tests only."""
    if attempt_type is None:
        from poslab.store.jobs import AttemptToRecord as attempt_type

    attempts = []
    data = result.to_dict()
    for exercise in exercises:
        score = result.exercises.get(exercise)
        if score is None or score.max_score <= 0:
            continue
        details = {**data, "tests": [test for test in data["tests"] if test["exercise"] == exercise]}
        attempts.append(attempt_type(exercise, score.score, score.max_score, details, code_of(files, exercise),
                                     result.public_tests_only, tuple(per_test_rows(result, exercise))))
    return attempts


class GradingService:
    """See the module's documentation. Thread-safe; one per process (the app caches it)."""

    def __init__(self, scheduler: str | None = None, *, workers: int | None = None, store: Any = None,
                 settings: GraderSettings | None = None, service_settings: ServiceSettings | None = None,
                 suite: str | None = None, warm_modes: Sequence[str] = MODES) -> None:
        base = service_settings or ServiceSettings()
        self.config = ServiceSettings(scheduler=scheduler or base.scheduler, workers=workers or base.workers,
                                      lease_seconds=base.lease_seconds, start_seconds=base.start_seconds)
        self.settings = settings or GraderSettings.from_env()
        self.store = store
        if store is not None:  # of the store's own import: the ones it raises and expects, also after a reload
            from poslab.store.jobs import AttemptToRecord, PendingJobExists

            self._attempt_type, self._pending_exists = AttemptToRecord, PendingJobExists
        self.suite = suite  # "module:attribute" of a stand-in suite (tests); None: the hidden suite
        self.warm_modes = tuple(warm_modes)  # what the embedded judges warm up for (the CLI: hidden only)
        self.holder = f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.cluster = None
        self.client = None
        self.allowed_failures = 1
        self.fault: BaseException | None = None
        self._jobs: dict[str, GradingJob] = {}  # dispatched here and not finished
        self._backlog: list[GradingJob] = []  # submitted before the client was connected
        self._futures: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._connected = threading.Event()
        self._closing = threading.Event()
        self._finisher = ThreadPoolExecutor(2, thread_name_prefix="grader-results")
        self._judges_cache = (0.0, 0)
        threading.Thread(target=self._start, name="grader-service-start", daemon=True).start()

    @classmethod
    def from_env(cls, *, store: Any = None, settings: GraderSettings | None = None) -> "GradingService":
        """Embedded, or the cluster at ``POSLAB_GRADER_SCHEDULER``; ``store``: where jobs are recorded."""
        return cls(store=store, settings=settings, service_settings=ServiceSettings.from_env())

    def __enter__(self) -> "GradingService":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- start-up --------------------------------------------------------------------------------

    def _start(self) -> None:
        try:
            from distributed import Client

            address = self.config.scheduler
            if address is None:
                from grader.service.embedded import EmbeddedCluster

                # The judges warm up with the settings the tasks carry (a --timeout of the CLI).
                environment = {"POSLAB_GRADER_TIMEOUT": repr(self.settings.timeout),
                               WARM_MODES_ENV: ",".join(self.warm_modes)}
                self.cluster = EmbeddedCluster(self.config.workers, environment)
                address = self.cluster.start()
            self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
            self.allowed_failures = self.client.run_on_scheduler(_allowed_failures)
        except BaseException as error:  # noqa: BLE001 - reported to every waiting job and to callers
            self.fault = error if isinstance(error, GraderFault) else GraderFault(f"the grading cluster did not start: {error}")
            logger.error("%s", self.fault)
            for job in self._backlog:
                job._settle(None, self.fault)
            return
        if self._closing.is_set():
            return
        with self._lock:
            self._connected.set()
            backlog, self._backlog = self._backlog, []
        for job in backlog:
            self._dispatch(job)
        if self.store is not None:
            self._claim_abandoned()
            threading.Thread(target=self._keep_leases, name="grader-leases", daemon=True).start()

    def judges(self) -> int:
        """Judges connected to the scheduler now (each joined once warm)."""
        if not self._connected.is_set() or self._closing.is_set():
            return 0
        checked, count = self._judges_cache
        if time.monotonic() - checked > 1.0:
            try:
                count = sum(self.client.nthreads().values())
            except Exception:  # noqa: BLE001 - a scheduler that went away: no judges
                count = 0
            self._judges_cache = (time.monotonic(), count)
        return count

    @property
    def starting(self) -> bool:
        """True until a warm judge has joined: the page says "starting the grader (about 10 s, once)"."""
        return self.fault is None and self.judges() == 0

    def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until a judge is warm; ``GraderFault`` if none can start within ``timeout`` s."""
        deadline = time.monotonic() + (self.config.start_seconds if timeout is None else timeout)
        while self.judges() == 0:
            fault = self.fault or (self.cluster.fault if self.cluster is not None else None)
            if fault is not None:
                raise fault
            if time.monotonic() > deadline:
                raise GraderFault("no grader judge became ready in time (see the workers' logs)")
            time.sleep(0.1)

    # -- submitting --------------------------------------------------------------------------------

    def submit(self, student: str, files: Mapping[str, str], exercises: Sequence[str] | None = None,
               mode: str = "hidden") -> GradingJob:
        """Queue one submission and return its job at once; ``SubmissionRejected`` says what to fix."""
        submission = load_submission(dict(files), submission_id=student, settings=self.settings)
        if submission.problems:
            raise SubmissionRejected(" ".join(submission.problems))
        return self.submit_submission(submission, exercises, mode, student=student)

    def submit_submission(self, submission: Submission, exercises: Sequence[str] | None = None,
                          mode: str = "hidden", *, student: str | None = None) -> GradingJob:
        """Queue a loaded submission as it is (one with problems is graded as not importable: the CLI)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if self._closing.is_set():
            raise ServiceClosed("the grading service is closed")
        chosen = selected_exercises(exercises)
        job = GradingJob(uuid.uuid4().hex, student or submission.submission_id, submission, chosen, mode,
                         recorded=self.store is not None)
        if job.recorded:
            self._record(job)
        self._dispatch(job)
        return job

    def run_public(self, files: Mapping[str, str], exercises: Sequence[str] | None = None, *,
                   student: str = "practice") -> GradingJob:
        """Grade ``files`` against the public tests (practice) and return the job at once.

        Nothing is recorded: no job in the store, no attempt, no lease, and it does not count as the
        student's pending submission. ``SubmissionRejected`` says what to fix.
        """
        submission = load_submission(dict(files), submission_id=student, settings=self.settings)
        if submission.problems:
            raise SubmissionRejected(" ".join(submission.problems))
        if self._closing.is_set():
            raise ServiceClosed("the grading service is closed")
        job = GradingJob(uuid.uuid4().hex, student, submission, selected_exercises(exercises), "public",
                         recorded=False)
        self._dispatch(job)
        return job

    def _record(self, job: GradingJob) -> None:
        try:
            self.store.add_grading_job(job.id, job.student, job.submission.files, job.exercises, job.mode,
                                       self.holder, self.config.lease_seconds)
        except self._pending_exists as pending:
            raise AlreadyPending(str(pending), pending.job.id) from None

    def _dispatch(self, job: GradingJob) -> None:
        with self._lock:
            self._jobs[job.id] = job
            if self.fault is not None:
                job._settle(None, self.fault)
                return
            if not self._connected.is_set():
                self._backlog.append(job)
                return
        task = task_for(job.submission, list(job.exercises), job.mode, self.settings, self.suite)
        kind = "grade" if job.recorded else "practice"
        future = self.client.submit(task_function(), task, key=f"{kind}-{job.id}", pure=False, retries=1)
        with self._lock:
            self._futures[job.id] = future
        future.add_done_callback(lambda done: self._finisher.submit(self._finish, job, done))

    # -- results -----------------------------------------------------------------------------------

    def _finish(self, job: GradingJob, future: Any) -> None:
        from distributed.scheduler import KilledWorker

        result, error = None, None
        try:
            result = SubmissionResult.from_dict(future.result())
        except KilledWorker:
            result = self._stopped_grader_result(job)
        except BaseException as raised:  # noqa: BLE001 - cancelled on close, or a grader fault
            if self._closing.is_set():
                return  # still queued in the store: the next start grades it
            error = raised if isinstance(raised, GraderFault) else GraderFault(f"{type(raised).__name__}: {raised}")
        try:
            if job.recorded:
                if result is not None:
                    self.store.finish_grading_job(job.id, result.to_dict(), attempts_of(
                        result, job.submission.files, job.exercises, self._attempt_type))
                else:
                    self.store.fail_grading_job(job.id, failure_sentence(error))
        except Exception:  # noqa: BLE001 - the lease runs out and another start grades it again
            logger.exception("could not record the result of job %s", job.id)
        finally:
            with self._lock:
                self._jobs.pop(job.id, None)
                self._futures.pop(job.id, None)
            job._settle(result, error)

    def _stopped_grader_result(self, job: GradingJob) -> SubmissionResult:
        import grader

        submission = job.submission
        return SubmissionResult(
            submission_id=submission.submission_id, status=STOPPED_GRADER_STATUS, tests=(), isolation="none",
            public_tests_only=job.mode == "public", submission_hash=submission.content_hash,
            suite_hash="", grader_version=grader.__version__, execution_time=time.monotonic() - job.submitted,
            messages=(stopped_grader_message(self.allowed_failures + 1),))

    # -- leases and jobs of stopped replicas ----------------------------------------------------------

    def _claim_abandoned(self) -> None:
        try:
            claimed = self.store.claim_abandoned_jobs(self.holder, self.config.lease_seconds)
        except Exception:  # noqa: BLE001 - try again at the next renewal
            logger.exception("could not claim abandoned grading jobs")
            return
        for record in claimed:
            if record.id in self._jobs:
                continue
            submission = load_submission(record.files, submission_id=record.student, settings=self.settings)
            logger.info("grading job %s of %s again (its service stopped before the result)", record.id, record.student)
            self._dispatch(GradingJob(record.id, record.student, submission, record.exercises, record.mode))

    def _keep_leases(self) -> None:
        while not self._closing.wait(self.config.lease_seconds / 3):
            try:
                with self._lock:
                    mine = [job.id for job in self._jobs.values() if job.recorded]
                self.store.renew_leases(self.holder, mine, self.config.lease_seconds)
            except Exception:  # noqa: BLE001 - a database blip; the next round renews
                logger.exception("could not renew grading leases")
            self._claim_abandoned()

    # -- what the page shows -------------------------------------------------------------------------

    def job(self, job_id: str) -> GradingJob | None:
        """The job if this service is grading it now (not after it finished)."""
        with self._lock:
            return self._jobs.get(job_id)

    def status(self, job_id: str) -> JobStatus:
        """Where a job is: starting, waiting (how many ahead), grading, done or failed.

        With a store, any replica's job, also after a reload (the result comes from the store).
        """
        if self.store is not None:
            record = self.store.grading_job(job_id)
            if record.status == "done":
                return JobStatus(job_id, "done", result=SubmissionResult.from_dict(record.result))
            if record.status == "failed":
                return JobStatus(job_id, "failed", message=record.message)
            ahead = self.store.jobs_ahead(job_id)
        else:
            job = self.job(job_id)
            if job is None:
                raise KeyError(f"no job {job_id!r} pending in this service")
            with self._lock:
                ahead = sum(other.submitted < job.submitted for other in self._jobs.values())
        if self.fault is not None:
            return JobStatus(job_id, "failed", message=failure_sentence(self.fault))
        judges = self.judges()
        if judges == 0:
            return JobStatus(job_id, "starting", ahead)
        if ahead < judges:
            return JobStatus(job_id, "grading")
        return JobStatus(job_id, "waiting", ahead - judges + 1)

    def wait(self, job_id: str, timeout: float) -> None:
        """Wait up to ``timeout`` s for a job this service is grading (returns at once for any other)."""
        job = self.job(job_id)
        if job is not None:
            job.wait(timeout)

    def pending_job_id(self, student: str) -> str | None:
        """The student's job still being graded (store only), to resume waiting after a reload."""
        if self.store is None:
            return None
        record = self.store.pending_grading_job(student)
        return None if record is None else record.id

    # -- stopping ---------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop; jobs without a result stay queued in the store and the next start grades them."""
        if self._closing.is_set():
            return
        self._closing.set()
        with self._lock:
            unfinished = list(self._jobs.values())
        if self.store is not None:
            try:
                self.store.release_leases(self.holder)
            except Exception:  # noqa: BLE001 - then their leases run out by themselves
                logger.exception("could not release grading leases")
        if self.client is not None:
            self.client.close(timeout=10)
        if self.cluster is not None:
            self.cluster.close()
        self._finisher.shutdown(wait=True, cancel_futures=False)
        for job in unfinished:
            job._settle(None, ServiceClosed("the grading service stopped before this job's result; "
                                            "with a store, the next start grades it"))


def failure_sentence(error: BaseException | None) -> str:
    return (f"The grader itself failed ({error}). This is not your code's fault: please submit again, "
            "and tell your instructor if it keeps happening.")


def as_completed(jobs: Iterable[GradingJob]) -> Iterator[GradingJob]:
    """Yield the jobs as their results arrive."""
    arrived: queue.Queue[GradingJob] = queue.Queue()
    jobs = list(jobs)
    for job in jobs:
        job.add_done_callback(arrived.put)
    for _ in jobs:
        yield arrived.get()
