"""The grading service: one queue of gradings for the app and the CLI, graded by warm judges on Dask.

    from grader.service import GradingService
    service = GradingService.from_env(store=store)    # starts nothing yet
    service.start()                                   # optional: the judges warm up in the background
    job = service.submit("ada", {"rope.py": source}, exercises=["rope"])   # returns at once; recorded first
    result = job.result(timeout=60)                   # grader.results.SubmissionResult
    service.close()

**Starting.** Building a service starts no thread and no process. ``start()`` does, once, in the
background, and returns at once: it is cheap to call from anywhere and from many threads (the
app calls it when it starts, so the judges are warm before the first submission). ``submit``,
``run_public`` and ``wait_ready`` start the service if nobody has; so does asking for the status
of a submission still queued.

**Where grading runs.** Embedded (the default): a Dask scheduler on 127.0.0.1 and
``POSLAB_GRADER_WORKERS`` judges (default: one per core), each its own interpreter started with
``subprocess`` (``embedded``); they stop with the service or when this process ends. With
``POSLAB_GRADER_SCHEDULER=tcp://host:8786`` the service uses that cluster, whose Dask workers run
``dask worker tcp://host:8786 --nthreads 1 --preload grader.cluster`` (``judge``). Each Dask task
is one grading's whole work on a warm judge; nothing of it runs here.

**One writer of outcomes.** The service, not the page, writes what a grading came to
(``outcomes``). With a store, ``submit`` records the job (queued, files, who, when) before it is
dispatched (``intake``), and its result is written as the job's state and one attempt per
exercise graded, in one transaction, exactly once. A practice run (``run_public``) is recorded as
the student's practice runs when its result comes, and as nothing else. The replica that
dispatched a job holds a lease on it (``leases``): when a service starts, and every
``lease_seconds / 3`` after, it claims and regrades the jobs whose lease ran out, i.e. those of a
stopped replica.

**Judges that die.** A judge grades one job at a time, so a judge that dies costs that job only:
Dask gives it to another judge. If that one dies too, the job ends with a result of status
``STOPPED_GRADER`` saying "Your code stopped the grader twice; nothing was graded." Only a
judge's death counts: a submission that crashes or hangs its sandboxed child is an ordinary
failed test. A grader fault (a sandbox worker that cannot start) is retried once and then fails
the job with a sentence.

**One pending submission per student** (with a store): a second one while the first is still
queued is refused with ``AlreadyPending``, whose message says so; it names the pending job.

**What the page asks.** ``status(job_id)`` is the one way to know where a job is
(``JobStatus``, ``WatchState``): a submission's or a practice run's, before and after it finished
(``status``). ``wait`` lets a page wait briefly for a result; after a reload, ``last_submission``
finds a student's last submission (then asked about with ``status``) and ``last_practice_run``
their last practice run of an exercise. The page never reads a job from the store itself. ``planned_isolation`` says how a judge on
this machine will keep submissions apart (bubblewrap or the fallback, and why).

Settings: one ``ServiceSettings`` (``settings``), its own and the graders' together.
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
