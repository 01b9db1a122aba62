"""Dispatch: the jobs in flight on this service, each sent to the judges as one Dask task.

Jobs handed in before the client is connected wait in a backlog and go when it is. Each task is
one grading's whole work on a judge (``grader.service.judge.grade_on_judge``), retried once on a
grader fault (``retries=1``); Dask gives a task whose judge died to another judge, up to the
scheduler's ``allowed-failures``.

**Module reloads.** A process that reloads this package's modules (Streamlit's file watcher)
keeps a service made before: the task function is looked up by name at each dispatch, so Dask
sends it by reference (the function object made before a reload would be pickled by value, and
fails).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from grader.service.connection import ClusterConnection
from grader.service.job import GradingJob
from grader.service.judge import JudgeTask
from grader.service.settings import ServiceSettings

TASK_MODULE, TASK_FUNCTION = "grader.service.judge", "grade_on_judge"  # each Dask task: one grading


def task_function() -> Callable[[JudgeTask], dict]:
    """The Dask task function as imported now (so Dask sends it by reference, also after a reload)."""
    return getattr(importlib.import_module(TASK_MODULE), TASK_FUNCTION)


class Dispatcher:
    """The jobs this service is grading now. Thread-safe. ``finished(job, future)`` is called once each."""

    def __init__(
        self, connection: ClusterConnection, settings: ServiceSettings, finished: Callable[[GradingJob, Any], None]
    ) -> None:
        self.connection = connection
        self.settings = settings
        self.finished = finished
        self._jobs: dict[str, GradingJob] = {}
        self._backlog: list[GradingJob] = []
        self._futures: dict[str, Any] = {}
        self._lock = threading.RLock()

    def dispatch(self, job: GradingJob) -> None:
        with self._lock:
            self._jobs[job.id] = job
            if not self.connection.connected.is_set():
                self._backlog.append(job)
                return
        self._send(job)

    def connected(self) -> None:
        """The client is connected: send the backlog."""
        with self._lock:
            backlog, self._backlog = self._backlog, []
        for job in backlog:
            self._send(job)

    def fail_backlog(self, fault: BaseException) -> list[GradingJob]:
        """The cluster did not start: the jobs that waited for it, now out of flight."""
        with self._lock:
            backlog, self._backlog = self._backlog, []
            for job in backlog:
                self._jobs.pop(job.id, None)
        return backlog

    def _send(self, job: GradingJob) -> None:
        task = JudgeTask(job.submission, job.exercises, job.mode, self.settings.grader, self.settings.suite)
        future = self.connection.client.submit(task_function(), task, key=f"{job.kind}-{job.id}", pure=False, retries=1)
        with self._lock:
            self._futures[job.id] = future
        future.add_done_callback(lambda done: self.finished(job, done))

    def forget(self, job: GradingJob) -> None:
        with self._lock:
            self._jobs.pop(job.id, None)
            self._futures.pop(job.id, None)

    def job(self, job_id: str) -> GradingJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def in_flight(self) -> list[GradingJob]:
        with self._lock:
            return list(self._jobs.values())

    def ahead_of(self, job: GradingJob) -> int:
        """Jobs in flight here that were handed in before this one."""
        with self._lock:
            return sum(other.submitted < job.submitted for other in self._jobs.values())
