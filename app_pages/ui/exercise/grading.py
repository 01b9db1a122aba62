"""Grading from the app: the one grading service, handing work to it, and watching each job.

Every grading goes through ``grader.service.GradingService`` (one per app process, shared by the
server's start-up and the pages; app.py's lifespan starts its judges when the server starts, before
any page is opened, so they are warm for the first submission). The
service records a submission before it is graded, and writes every outcome itself: a submission's
result and attempts, and a practice run ("Run the public tests": the draft against the public
tests, never an attempt or a grade). A page only hands work in, keeps the job's id, and asks the
service where the job is, without blocking its script thread. The app never executes or parses a
submission.

What the page knows of a job is a ``Watch``: one for the session's submission (``JOB_KEY``), one
per exercise for its practice run (``PRACTICE_KEY``). Its ``status`` is the service's last answer
(``JobStatus``, whose ``state`` is a ``WatchState``). While a job is not settled the page polls
it: every 0.2 s at first, then less often the longer it waits (``POLL_STEPS``). The first look at
a job just handed in waits for it up to ``FIRST_LOOK_SECONDS``: a warm grading of one exercise
takes 0.1 to 0.3 s, so most answers come with the click's own run, with no poll at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import streamlit as st

from app_pages.runtime import sandbox_notice
from app_pages.runtime.run_gate import page_runs
from app_pages.ui.grading_service import _service, grading_service
from app_pages.ui.store_calls import off_the_gate, store_call
from grader import api
from grader.service import GradingService, JobStatus, SubmissionRejected, WatchState
from poslab.config import Settings
from poslab.exercises import Exercise
from poslab.store import DATABASE_ERRORS, StoreError
from poslab.vocabulary import AttemptKind, GradingMode

JOB_KEY = "grading_job"  # this session's submission: a Watch
LOOKED_UP_KEY = "grading_job_looked_up"  # the student whose last submission this session looked up
BY_EXERCISE_KEY = "grading_job_by_exercise"  # (student, exercise id) -> the Watch of its last submission, or None
PRACTICE_KEY = "practice_runs"  # exercise id -> the Watch of this session's practice run
START_ENV = "POSLAB_GRADER_START"  # "startup" (default): with the server; "on_demand": at the first submission (tests)
ON_DEMAND = "on_demand"

STARTING_TEXT = "Starting the grader (about 10 s, once)…"
# (seconds since the job was handed in, seconds between polls): a fast first look, then less often.
POLL_STEPS = ((3.0, 0.2), (15.0, 0.5), (float("inf"), 1.0))
FIRST_LOOK_SECONDS = 0.4


@dataclass
class Watch:
    """A job this session watches, a submission or a practice run, and what the page knows of it."""

    job_id: str
    kind: AttemptKind
    exercises: tuple[str, ...]
    handed_in: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: JobStatus | None = None  # the service's last answer; settled: it changes no more
    looked: bool = False  # the first look (which may wait FIRST_LOOK_SECONDS) is over
    drawn_by_poll: bool = False  # a poll drew the settled answer; its next run redraws the whole page

    @property
    def state(self) -> WatchState:
        return WatchState.STARTING if self.status is None else self.status.state

    @property
    def settled(self) -> bool:
        return self.status is not None and self.status.settled


def poll_seconds(handed_in: datetime) -> float:
    """How often the page asks about a job handed in at ``handed_in``."""
    waited = (datetime.now(UTC) - handed_in).total_seconds()
    return next(every for until, every in POLL_STEPS if waited < until)


def start_with_the_server() -> GradingService | None:
    """The server's start-up (app.py's lifespan, before any page): start the judges in the background,
    unless ``POSLAB_GRADER_START=on_demand`` (then the first submission starts them)."""
    sandbox_notice.sandbox_report()  # which sandbox will grade, said once in the log
    if os.environ.get(START_ENV, "startup").strip() == ON_DEMAND:
        return None
    return _service(Settings.from_env().db_url).start()


def started_service() -> GradingService | None:
    """The process's service if it was made (to close it when the server stops)."""
    return _service.made(Settings.from_env().db_url)


def in_student_bundle() -> bool:
    """A bundle made by ``python -m grader release``: no hidden suite, only the public tests."""
    return api.running_in_bundle()


def grading_mode() -> GradingMode:
    return GradingMode.PUBLIC if in_student_bundle() else GradingMode.HIDDEN


# -- watching a job ----------------------------------------------------------------------------------


def refresh(watch: Watch) -> JobStatus | None:
    """Ask the service where the job is (one question; the store's rows for a submission) and keep
    the answer in ``watch``; None when it could not be asked (``store_call`` has said why)."""
    if watch.settled:
        return watch.status
    service = grading_service()
    if service is None:
        return None
    status = store_call(
        "check on your submission" if watch.kind == AttemptKind.SUBMISSION else "check on your practice run",
        lambda _: service.status(watch.job_id),
        None,
    )
    if status is not None:
        watch.status = status
        watch.handed_in = status.handed_in or watch.handed_in
    return status


def first_look(watch: Watch) -> None:
    """Wait up to ``FIRST_LOOK_SECONDS`` for the job's answer, then ask where it is."""
    watch.looked = True
    service = grading_service()
    if service is not None:
        with page_runs().let_go():  # the judges work meanwhile: other students' pages go on
            service.wait(watch.job_id, FIRST_LOOK_SECONDS)
    refresh(watch)


def waiting_sentence(watch: Watch) -> str:
    """What the page says while the job is not settled (or why it failed)."""
    status = watch.status
    state = watch.state
    if state == WatchState.STARTING:
        return STARTING_TEXT
    if state == WatchState.FAILED:
        return status.message or "The grading failed."
    if watch.kind == AttemptKind.PRACTICE:
        return "Running the public tests on your draft…"
    if state == WatchState.WAITING:
        return f"In the queue: {status.ahead} submission{'s' if status.ahead != 1 else ''} before yours."
    if state == WatchState.GRADING:
        return "Grading your code in a sandbox…"
    return "Graded."


def watch_of(kind: AttemptKind, exercise_id: str) -> Watch | None:
    """This session's watch of its submission, or of its practice run of ``exercise_id``."""
    if kind == AttemptKind.SUBMISSION:
        return next(
            (watch for (_, exercise), watch in _by_exercise().items() if exercise == exercise_id and watch),
            st.session_state.get(JOB_KEY),
        )
    return practice_watches().get(exercise_id)


def _by_exercise() -> dict[tuple[str, str], Watch | None]:
    return st.session_state.setdefault(BY_EXERCISE_KEY, {})


def last_submission(student: str, exercise_id: str) -> Watch | None:
    """The student's last submission that graded ``exercise_id``: this session's, else (after a reload,
    in another tab) the store's, looked up once; never another exercise's ("Your last result")."""
    watches = _by_exercise()
    if (student, exercise_id) not in watches:
        service = grading_service()
        if service is None:
            return None
        found = store_call(
            "look for your last submission", lambda _: (service.last_submission(student, exercise_id),), None
        )
        if found is None:
            return None  # store_call has said why; the next run asks again
        last = found[0]
        watches[student, exercise_id] = None if last is None else Watch(last[0], AttemptKind.SUBMISSION, last[1])
    return watches[student, exercise_id]


def _watch_submission(student: str, watch: Watch) -> None:
    """This session's newest submission, and the last one of each exercise it grades."""
    st.session_state[JOB_KEY] = watch
    for exercise_id in watch.exercises:
        _by_exercise()[student, exercise_id] = watch


# -- submissions -------------------------------------------------------------------------------------


def pending_job(student: str) -> Watch | None:
    """This session's submission; else (after a reload, or in another tab) the student's last one, as
    the service finds it: still queued (the page waits for it) or with its result, shown again."""
    watch = st.session_state.get(JOB_KEY)
    if watch is not None:
        return watch
    if st.session_state.get(LOOKED_UP_KEY) == student:
        return None  # asked once this session: none yet (a new one is this session's own)
    service = grading_service()
    if service is None:
        return None
    found = store_call("look for your last submission", lambda _: (service.last_submission(student),), None)
    if found is None:
        return None  # store_call has said why; the next run asks again
    st.session_state[LOOKED_UP_KEY] = student
    if found[0] is None:
        return None
    watch = Watch(found[0][0], AttemptKind.SUBMISSION, found[0][1])
    st.session_state[JOB_KEY] = watch
    return watch


def submit(student: str, files: Mapping[str, str], exercises: tuple[str, ...]) -> bool:
    """Hand a submission to the service; it returns at once, and the page watches the job.

    True when a job is now pending; False when the page has said why not."""
    service = grading_service()
    if service is None:
        return False
    try:  # the job is recorded in the store: a busy store holds this student alone
        job = off_the_gate(
            "hand in your code", lambda: service.submit(student, files, exercises=exercises, mode=grading_mode())
        )
    except (StoreError, *DATABASE_ERRORS) as error:  # said, never lost in silence
        st.error(f"Handing in your code failed. {error}", icon=":material/block:")
        return False
    except ValueError as error:  # SubmissionRejected, or AlreadyPending, which names the pending job
        # By its job_id, not its class: a service made before a module reload raises the class it imported.
        pending_id = getattr(error, "job_id", None)
        if pending_id is None:
            st.error(str(error), icon=":material/block:")
            return False
        st.info(str(error), icon=":material/hourglass_top:")
        current = st.session_state.get(JOB_KEY)
        if current is None or current.job_id != pending_id:  # pending from another tab: watch that one
            _watch_submission(student, Watch(pending_id, AttemptKind.SUBMISSION, exercises))
        return True
    _watch_submission(student, Watch(job.id, AttemptKind.SUBMISSION, exercises))
    return True


# -- practice: the public tests against the draft -----------------------------------------------------


def practice_watches() -> dict[str, Watch]:
    return st.session_state.setdefault(PRACTICE_KEY, {})


def last_practice_run(student: str, exercise_id: str) -> JobStatus | None:
    """The student's last practice run of the exercise, as the service keeps it (after a reload, in another tab)."""
    service = grading_service()
    if service is None:
        return None
    return store_call("load your practice runs", lambda _: service.last_practice_run(student, exercise_id), None)


def start_practice(student: str, exercise: Exercise, draft: str) -> None:
    """Send the draft to a warm judge with the public tests; the service keeps the outcome."""
    service = grading_service()
    if service is None:
        return
    try:
        job = service.run_public({exercise.filename: draft}, [exercise.id], student=student)
    except (SubmissionRejected, ValueError) as error:
        st.error(str(error), icon=":material/block:")
        return
    practice_watches()[exercise.id] = Watch(job.id, AttemptKind.PRACTICE, (exercise.id,))
