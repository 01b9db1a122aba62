"""The grading service with its real parts: a `dask scheduler`, `dask worker --preload grader.cluster`
processes on 127.0.0.1, bubblewrap, and the store.

Each submission sleeps 1 s while it is imported, so a worker killed with SIGKILL after the first
results is surely grading one of them: that job must still arrive, graded by the other worker,
and be recorded once. Half the students hand in a rope that is missing (0 points), half the
reference (full marks), so a result given to the wrong student shows.

The three tests share one cluster (each start is a scheduler and two judges, each importing torch
and warming a sandbox worker): a judge a test killed is started again before the next test.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.service import GradingService, as_completed
from grader.service.cluster_config import dask_environment
from grader.service.judge import WARM_MODES_ENV
from poslab.config import PROJECT_ROOT
from poslab.store import Store
from tests.hostile._support import reference_submission, require_bwrap

STUDENTS = [f"student{index:02d}" for index in range(6)]
ROPE_POINTS = 20.0  # the hidden suite's rope tests, as its documentation (grader/suite/test_rope.py) adds up
START_SECONDS = 240.0
SLOW_IMPORT = "\nimport time\ntime.sleep(1)\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def source_for(student: str) -> str:
    source = reference_submission() + SLOW_IMPORT
    return source if int(student[-2:]) % 2 == 0 else source + "\ndel apply_rope\n"


def expected_rope(student: str) -> float:
    return ROPE_POINTS if int(student[-2:]) % 2 == 0 else 0.0


class DaskCluster:
    """`dask scheduler` and two `dask worker` processes, started here and killed at the end."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.folder = folder
        # The scheduler settings docs/scaling.md asks for; these judges grade hidden submissions only.
        self.env = {**dask_environment(), WARM_MODES_ENV: "hidden"}
        self.dask = str(Path(sys.executable).parent / "dask")
        self.started = 0  # judges started so far: each gets a name of its own
        self.scheduler = self._start(
            [self.dask, "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"],
            "scheduler.log",
        )
        self.workers = [self._start_worker() for _ in range(2)]

    def _start(self, command: list[str], log: str) -> subprocess.Popen:
        with open(self.folder / log, "wb") as stream:
            return subprocess.Popen(command, cwd=PROJECT_ROOT, env=self.env, stdout=stream, stderr=subprocess.STDOUT)

    def _start_worker(self) -> subprocess.Popen:
        name = f"w{self.started}"
        self.started += 1
        command = [
            self.dask,
            "worker",
            self.address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--memory-limit",
            "0",
            "--host",
            "127.0.0.1",
            "--preload",
            "grader.cluster",
            "--name",
            name,
        ]
        return self._start(command, f"{name}.log")

    def replace_dead_workers(self) -> None:
        """Start a new judge for each one a test killed (it joins once warm)."""
        self.workers = [self._start_worker() if worker.poll() is not None else worker for worker in self.workers]

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n" + path.read_text(errors="replace")[-3000:]
            for path in sorted(self.folder.glob("*.log"))
        )

    def wait_for_workers(self, client) -> None:
        deadline = time.monotonic() + START_SECONDS
        while len(client.nthreads()) < 2:
            assert time.monotonic() < deadline, "the two workers did not join in time\n" + self.logs()
            time.sleep(0.2)

    def kill_a_busy_worker(self, client) -> int:
        """SIGKILL a worker that is grading a job now; returns its pid."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = [address for address, keys in client.processing().items() if keys]
            if busy:
                pids = client.run(os.getpid, workers=busy[:1])
                pid = pids[busy[0]]
                assert pid in [worker.pid for worker in self.workers]  # one of ours, by its id
                os.kill(pid, signal.SIGKILL)
                return pid
            time.sleep(0.05)
        raise AssertionError("no worker was busy")

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def started_cluster(tmp_path_factory):
    require_bwrap()
    started = DaskCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def cluster(started_cluster):
    """The module's cluster with two judges again (joining as they warm): a test may have killed one."""
    started_cluster.replace_dead_workers()
    return started_cluster


def test_the_service_grades_every_submission_once_though_a_worker_is_killed(cluster, tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'jobs.db'}")
    with GradingService(scheduler=cluster.address, store=store) as service:
        service.wait_ready(START_SECONDS)
        cluster.wait_for_workers(service.client)
        jobs = [service.submit(student, {"rope.py": source_for(student)}, exercises=["rope"]) for student in STUDENTS]
        arrived = as_completed(jobs)
        first = next(arrived)
        killed = cluster.kill_a_busy_worker(service.client)
        results = {job.student: job.result(timeout=0) for job in [first, *arrived]}
    assert any(worker.pid == killed and worker.poll() is not None for worker in cluster.workers)
    assert sorted(results) == STUDENTS
    for student, result in results.items():
        assert result.status == "graded" and result.isolation == "bwrap", (student, result.messages)
        assert result.exercises["rope"].score == expected_rope(student), student
        assert result.exercises["rope"].max_score == ROPE_POINTS
        assert {test.exercise for test in result.tests} == {"rope"}  # the other exercises were not graded
    done = store.grading_jobs(status="done")
    assert sorted(job.student for job in done) == STUDENTS
    attempts = store.attempt_details()
    assert sorted(attempt.student for attempt in attempts) == STUDENTS  # exactly once each
    for attempt in attempts:
        assert attempt.exercise == "rope" and attempt.score == expected_rope(attempt.student)
        assert attempt.code == source_for(attempt.student)


def test_jobs_left_queued_by_a_stopped_service_are_graded_at_the_next_start(cluster, tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'jobs.db'}")
    students = ["ann", "bob", "cem"]
    source = reference_submission()
    first = GradingService(judges=1, store=store, warm_modes=["hidden"])
    ids = {student: first.submit(student, {"rope.py": source}, exercises=["rope"]).id for student in students}
    first.close()  # long before its judge is warm: nothing was graded
    assert sorted(job.student for job in store.grading_jobs(status="queued")) == students
    assert store.attempt_details() == ()
    # The next start grades on the module's cluster: what it must do is find the store's queued jobs.
    with GradingService(scheduler=cluster.address, store=store) as second:
        second.start()  # as the app does when it starts: nothing else asks this service anything
        deadline = time.monotonic() + START_SECONDS
        while store.grading_jobs(status="queued"):
            assert time.monotonic() < deadline, "the queued jobs were not graded after the restart"
            time.sleep(0.2)
        for student, job_id in ids.items():
            status = second.status(job_id)
            assert status.state == "done" and status.result.exercises["rope"].score == ROPE_POINTS, student
    attempts = store.attempt_details()
    assert sorted(attempt.student for attempt in attempts) == students
    assert all(attempt.score == ROPE_POINTS for attempt in attempts)


def test_the_cli_grades_on_the_cluster_though_a_worker_is_killed(cluster, tmp_path):
    from distributed import Client

    folder = tmp_path / "submissions"
    folder.mkdir()
    students = STUDENTS[:4]  # the CLI grades all seven exercises of each: four keep a worker busy to kill
    for student in students:
        (folder / f"{student}.py").write_text(source_for(student))
    out = tmp_path / "grades"
    with Client(cluster.address, set_as_default=False) as client:
        cluster.wait_for_workers(client)
        command = [
            sys.executable,
            "-m",
            "grader",
            "grade",
            *sorted(map(str, folder.glob("*.py"))),
            "--out",
            str(out),
            "--scheduler",
            cluster.address,
        ]
        run = subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + START_SECONDS
        while not list(out.glob("*/results.json")):
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        cluster.kill_a_busy_worker(client)
        stdout, stderr = run.communicate(timeout=START_SECONDS)
    assert run.returncode == 0, stdout[-2000:] + stderr[-3000:]
    assert f"{len(students)}/{len(students)}" in stderr  # the progress bar
    rows = {row["id"]: row for row in csv.DictReader((out / "gradebook.csv").open())}
    assert sorted(rows) == students
    for student, row in rows.items():
        assert row["status"] == "graded"
        assert float(row["rope"]) == expected_rope(student), student
        assert float(row["attention"]) > 0  # the CLI grades every exercise
