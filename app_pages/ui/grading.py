"""Grading from the app: the one grading service, submitting to it, and the runs of the public tests.

Every grading goes through ``grader.service.GradingService`` (one per app process, started by
app.py when the app starts, so the judges are warm before the first submission). The service
records a submission before it is graded and writes its result and attempts itself: a page only
submits, keeps the job id, and asks for the job's status without blocking its script thread. The
app never executes or parses a submission.

"Run the public tests" sends the draft to the same warm judges (``GradingService.run_public``,
which records nothing) and keeps the result as a practice run (``Store.record_practice_run``),
never as an attempt.

While a job is pending the page polls it: every 0.2 s at first, then less often the longer it
waits (``POLL_STEPS``). The first look at a job just handed in waits for it up to
``FIRST_LOOK_SECONDS``: a warm grading of one exercise takes 0.1 to 0.3 s, so most answers come
with the click's own run, with no poll at all. Between polls the script thread is free.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Mapping

import streamlit as st

from app_pages.ui.store_calls import store, store_call
from grader import api
from grader.results import SubmissionResult
from grader.service import GradingJob, GradingService, JobStatus, SubmissionRejected
from poslab.config import PROJECT_ROOT, Settings
from poslab.exercises import Exercise

JOB_KEY = "grading_job"  # this session's pending or last job: a PendingJob
PRACTICE_KEY = "practice_runs"  # exercise id -> PendingPractice of this session
LOCAL_WORKSPACE_ENV = "POSLAB_LOCAL_WORKSPACE"
START_ENV = "POSLAB_GRADER_START"  # "startup" (default) or "on_demand": at the first submission (tests)

STARTING_TEXT = "Starting the grader (about 10 s, once)…"
# (seconds since the job was handed in, seconds between polls): a fast first look, then less often.
POLL_STEPS = ((3.0, 0.2), (15.0, 0.5), (float("inf"), 1.0))
FIRST_LOOK_SECONDS = 0.4


@dataclass
class PendingJob:
    job_id: str
    exercises: tuple[str, ...]
    finished: JobStatus | None = None  # set once done or failed, to show it in this session
    handed_in: datetime = field(default_factory=lambda: datetime.now(UTC))
    looked: bool = False  # the first look (which may wait FIRST_LOOK_SECONDS) is over
    drawn_by: str = ""  # "poll" once a poll drew the result, then "page" once the page's own run did


@dataclass
class PendingPractice:
    exercise: str
    code: str
    job: GradingJob  # of GradingService.run_public
    shown: bool = False
    handed_in: datetime = field(default_factory=lambda: datetime.now(UTC))
    looked: bool = False  # the first look (which may wait FIRST_LOOK_SECONDS) is over


def poll_seconds(handed_in: datetime) -> float:
    """How often the page asks about a job handed in at ``handed_in``."""
    waited = (datetime.now(UTC) - handed_in).total_seconds()
    return next(every for until, every in POLL_STEPS if waited < until)


@st.cache_resource(show_spinner=False)
def _service(db_url: str) -> GradingService:
    opened = store()
    return GradingService.from_env(store=opened)


def grading_service() -> GradingService | None:
    """The app's one grading service (cached per database); None, after saying why, without a store."""
    if store() is None:
        return None  # store() has said why: without a store a submission could be lost
    return _service(Settings.from_env().db_url)


def start_at_startup() -> None:
    """Called by app.py on every run: the first run of the app starts the service in the background."""
    if os.environ.get(START_ENV, "startup").strip() != "on_demand":
        grading_service()


def in_student_bundle() -> bool:
    """A bundle made by ``python -m grader release``: no hidden suite, only the public tests."""
    return api.running_in_bundle()


def grading_mode() -> str:
    return "public" if api.running_in_bundle() else "hidden"


def local_workspace() -> bool:
    """Whether the exercises/ folder next to the app is this student's own (a course on their laptop).

    ``POSLAB_LOCAL_WORKSPACE=1`` or ``0`` decides; unset, it is on in a student bundle (which a
    student runs on their own machine) and off in a checkout, which may serve a class: there the
    folder is the server's, not the student's.
    """
    raw = os.environ.get(LOCAL_WORKSPACE_ENV, "").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    return in_student_bundle()


def exercises_folder() -> Path | None:
    """The checkout's or bundle's ``exercises/`` folder with the student's files, if there is one."""
    folder = PROJECT_ROOT / "exercises"
    return folder if folder.is_dir() and any(folder.glob("*.py")) else None


def exercises_zip(folder: Path) -> bytes:
    """The stubs and public tests of ``folder`` as a zip (``exercises/<name>.py``), for download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.glob("*.py")):
            archive.write(path, f"exercises/{path.name}")
    return buffer.getvalue()


# -- graded submissions ----------------------------------------------------------------------------

def pending_job(student: str) -> PendingJob | None:
    """This session's job, else (after a reload or in another tab) the student's job still queued."""
    job = st.session_state.get(JOB_KEY)
    if job is not None:
        return job
    # Straight from the store: a page that only looks must not start the grading service.
    record = store_call("look for your submission being graded",
                        lambda opened: opened.pending_grading_job(student), None)
    if record is None:
        return None
    job = PendingJob(record.id, record.exercises, handed_in=record.submitted_at)
    st.session_state[JOB_KEY] = job
    return job


def submit(student: str, files: Mapping[str, str], exercises: tuple[str, ...]) -> bool:
    """Hand a submission to the service; it returns at once, and the page polls the job.

    True when a job is now pending; False when the page has said why not."""
    service = grading_service()
    if service is None:
        return False
    try:
        job = service.submit(student, dict(files), exercises=list(exercises), mode=grading_mode())
    except ValueError as error:  # SubmissionRejected, or AlreadyPending, which names the pending job
        # By its job_id, not its class: a service made before a module reload raises the class it imported.
        pending_id = getattr(error, "job_id", None)
        if pending_id is None:
            st.error(str(error), icon=":material/block:")
            return False
        st.info(str(error), icon=":material/hourglass_top:")
        current = st.session_state.get(JOB_KEY)
        if current is None or current.job_id != pending_id:  # pending from another tab: watch that one
            st.session_state[JOB_KEY] = PendingJob(pending_id, exercises)
        return True
    st.session_state[JOB_KEY] = PendingJob(job.id, exercises)
    return True


def submit_folder(student: str, folder: Path, exercises: tuple[Exercise, ...]) -> bool:
    """Grade the student's exercises/ folder as it is on disk: every exercise file found there."""
    files = {item.filename: (folder / item.filename).read_text(encoding="utf-8", errors="replace")
             for item in exercises if (folder / item.filename).is_file()}
    if not files:
        st.error(f"No exercise files in {folder}.")
        return False
    return submit(student, files, tuple(item.id for item in exercises if item.filename in files))


def job_status(job: PendingJob) -> JobStatus | None:
    service = grading_service()
    if service is None:
        return None
    return store_call("check on your submission", lambda _: service.status(job.job_id), None)


def first_look(job: PendingJob) -> None:
    """Wait up to ``FIRST_LOOK_SECONDS`` for the job's result; keep it in ``job.finished`` if it came."""
    job.looked = True
    service = grading_service()
    if service is None:
        return
    service.wait(job.job_id, FIRST_LOOK_SECONDS)
    status = job_status(job)
    if settled(status):
        job.finished = status


def status_sentence(status: JobStatus) -> str:
    if status.state == "starting":
        return STARTING_TEXT
    if status.state == "waiting":
        ahead = status.ahead
        return f"In the queue: {ahead} submission{'s' if ahead != 1 else ''} before yours."
    if status.state == "grading":
        return "Grading your code in a sandbox…"
    if status.state == "failed":
        return status.message or "The grading failed."
    return "Graded."


def settled(status: JobStatus | None) -> bool:
    return status is not None and status.state in ("done", "failed")


# -- practice: the public tests against the draft -----------------------------------------------------

def practice_runs() -> dict[str, PendingPractice]:
    return st.session_state.setdefault(PRACTICE_KEY, {})


def start_practice(student: str, exercise: Exercise, code: str) -> None:
    """Send the draft to a warm judge with the public tests; the page polls the run."""
    service = grading_service()
    if service is None:
        return
    try:
        job = service.run_public({exercise.filename: code}, [exercise.id], student=student)
    except (SubmissionRejected, ValueError) as error:
        st.error(str(error), icon=":material/block:")
        return
    practice_runs()[exercise.id] = PendingPractice(exercise.id, code, job)


def practice_waiting_sentence() -> str:
    service = grading_service()
    if service is not None and service.starting:
        return STARTING_TEXT
    return "Running the public tests on your draft…"


def practice_result(student: str, run: PendingPractice) -> SubmissionResult | str | None:
    """The run's result once it came (stored as a practice run), a sentence if it failed, else None.

    The first look waits up to ``FIRST_LOOK_SECONDS`` for it."""
    if not run.looked:
        run.looked = True
        run.job.wait(FIRST_LOOK_SECONDS)
    if not run.job.done():
        return None
    try:
        result = run.job.result(timeout=0)
    except Exception as error:  # noqa: BLE001 - the grader's fault, said in a sentence
        return (f"The grader itself failed ({type(error).__name__}). This is not your code's fault: "
                "please try again.")
    score = result.exercises.get(run.exercise)
    if not run.shown and score is not None and score.max_score > 0:
        store_call("save your practice run", lambda opened: opened.record_practice_run(
            student, run.exercise, score.score, score.max_score, run.code, result.to_dict()), None)
    run.shown = True
    return result
