"""The Instructor page's regrade: every stored submission (or one student's) graded again by today's
hidden suite, on the app's grading service (``grader.regrade``). It runs in a thread of its own,
one at a time per process, so no page waits for it; the page says how far it is and, once done,
what changed. Instructors and TAs may start one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from app_pages.runtime.process import one_per_process
from app_pages.ui.grading_service import grading_service
from app_pages.ui.store_calls import store
from grader.regrade import GradeAll, RegradeReport, regrade
from grader.service import GradingService, as_completed
from poslab.roles import Actor
from poslab.store import Store

STUDENT_KEY = "regrade-student"


def service_grade_all(service: GradingService) -> GradeAll:
    """Grade on the app's judges, as the class's hand-ins are; nothing recorded as a hand-in."""

    def grade_all(submissions, on_result) -> None:
        jobs = [service.submit_submission(item, record=False) for item in submissions]
        for job in as_completed(jobs):
            on_result(job.result())

    return grade_all


@dataclass
class RegradeRun:
    """One regrade in its thread: who started it, for whom, and how it ended."""

    actor: Actor
    student: str | None
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    report: RegradeReport | None = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class RegradeRuns:
    """The process's last regrade (one at a time: two would grade the same attempts twice)."""

    last: RegradeRun | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, opened: Store, grade_all: GradeAll, actor: Actor, student: str | None) -> RegradeRun | None:
        with self.lock:
            if self.last is not None and not self.last.done.is_set():
                return None
            run = self.last = RegradeRun(actor, student)
        threading.Thread(target=_run, args=(run, opened, grade_all), name="regrade", daemon=True).start()
        return run


def _run(run: RegradeRun, opened: Store, grade_all: GradeAll) -> None:
    try:
        run.report = regrade(opened, grade_all, student=run.student, actor=run.actor)
    except Exception as error:  # noqa: BLE001 - said on the page, whatever broke
        run.error = f"{type(error).__name__}: {error}"
    finally:
        run.done.set()


@one_per_process
def regrade_runs(db_url: str) -> RegradeRuns:
    return RegradeRuns()


def _start(actor: Actor, keys: list[str], db_url: str) -> None:
    opened, service = store(), grading_service()
    if opened is None or service is None:
        return
    chosen = st.session_state.get(STUDENT_KEY)
    if (
        regrade_runs(db_url).start(opened, service_grade_all(service), actor, chosen if chosen in keys else None)
        is None
    ):
        st.session_state["regrade-busy"] = True


def changes_table(report: RegradeReport) -> pd.DataFrame:
    rows = [
        (item.student, item.exercise, f"{item.old_score:g}/{item.old_max:g}", f"{item.new_score:g}/{item.new_max:g}")
        for item in report.changes
    ]
    return pd.DataFrame(rows, columns=["student", "exercise", "old score", "new score"])


def regrade_section(actor: Actor, keys: list[str], db_url: str) -> None:
    st.header("Regrade")
    st.caption(
        "After a fix to the hidden suite: every stored submission (or one student's) is graded again, as it was "
        "handed in. The new score counts; the old one stays in the student's history. It runs on the grading "
        "service, beside the class's hand-ins."
    )
    st.selectbox("Only this student", keys, index=None, placeholder="Everyone", key=STUDENT_KEY)
    st.button("Regrade", icon=":material/restart_alt:", on_click=_start, args=(actor, keys, db_url), key="regrade")
    if st.session_state.pop("regrade-busy", False):
        st.warning("A regrade is already running; wait for it to finish.", icon=":material/hourglass:")
    run = regrade_runs(db_url).last
    if run is None:
        return
    who = run.student or "the whole class"
    if not run.done.is_set():
        st.info(f"Regrading {who} (started by {run.actor.label} at {run.started:%H:%M:%S} UTC)…")
        st.button("Refresh", icon=":material/refresh:", key="regrade-refresh")
    elif run.error is not None:
        st.error(f"The regrade of {who} stopped: {run.error}")
    elif run.report is not None:
        st.success(f"Regrade of {who}: {run.report.summary()}.", icon=":material/task_alt:")
        if run.report.changes:
            st.dataframe(changes_table(run.report), hide_index=True)
        for sentence in run.report.not_regraded:
            st.text(sentence)
