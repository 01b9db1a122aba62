"""The grading service's life and its one writer of outcomes, with a stand-in for the Dask client.

Building a service starts nothing; ``start()`` starts it once, from any number of threads. The
stand-in client answers each task with a result of the test's choosing, when the test says so, so
the service's own path (dispatch, the finisher, the store, ``status``) runs as it does on Dask.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from grader.results import SubmissionResult, TestOutcome
from grader.service import GradingService, ServiceClosed, ServiceSettings
from grader.service.connection import ClusterConnection
from grader.service.judge import JudgeTask
from grader.settings import GraderSettings
from poslab.store import Store

CODE = "def apply_rope(x):\n    return x\n"


def child_processes() -> set[int]:
    """The pids whose parent is this process, read from /proc."""
    children = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                children.add(int(entry.name))
    return children


def result_for(task: JudgeTask, public: bool) -> dict:
    """What a judge would answer: rope 1 of 2 points (public) or 3 of 4 (hidden)."""
    tests = [
        TestOutcome("rope: a", "rope", 1.0, 1.0, "passed", "ok", "visible"),
        TestOutcome("rope: b", "rope", 0.0, 1.0, "failed", "no", "visible"),
    ]
    if not public:
        tests.insert(1, TestOutcome("rope: a2", "rope", 2.0, 2.0, "passed", "ok", "hidden", "values"))
    return SubmissionResult(
        task.submission.submission_id, "graded", tuple(tests), "bwrap", public, "h", "s", "v", 0.1
    ).to_dict()


class StandInClient:
    """Dask's ``Client.submit`` as the service uses it; each answer waits for ``release``."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.tasks: list[tuple[str, JudgeTask]] = []
        self.raises: BaseException | None = None  # what every task ends with instead of a result

    def submit(self, function, task, key, pure, retries):
        self.tasks.append((key, task))
        future = Future()

        def answer() -> None:
            self.release.wait(30)
            if self.raises is not None:
                future.set_exception(self.raises)
            else:
                future.set_result(result_for(task, task.mode == "public"))

        threading.Thread(target=answer, daemon=True).start()
        return future

    def nthreads(self) -> dict:
        return {"judge-0": 1}

    def close(self, timeout=None) -> None:
        pass


@pytest.fixture
def opened(monkeypatch):
    """Every ``ClusterConnection.open`` connects a stand-in client at once; the count of opens."""
    opens = []

    def open_stand_in(connection: ClusterConnection) -> None:
        connection.client = StandInClient()  # before the test, waiting on ``opens``, can see the connection
        opens.append(connection)
        connection.connected.set()

    monkeypatch.setattr(ClusterConnection, "open", open_stand_in)
    return opens


@pytest.fixture
def store(tmp_path):
    opened = Store(f"sqlite:///{tmp_path / 'service.db'}")
    yield opened
    opened.close()


def started_since(before: set[int]) -> list[str]:
    """Threads started since ``before``, but for the Dask client's loop of an earlier test's service still
    connecting to an address nobody answers (its start thread outlives that test, and opens its client late)."""
    names = {thread.name for thread in threading.enumerate()}
    return [
        thread.name
        for thread in threading.enumerate()
        if thread.ident not in before and not (thread.name == "IO loop" and "grader-service-start" in names)
    ]


def test_building_a_service_starts_no_thread_and_no_process(store):
    threads, children = {thread.ident for thread in threading.enumerate()}, child_processes()
    embedded = GradingService(store=store)  # an embedded cluster once started: a scheduler and judges
    from_env = GradingService.from_env(store=store)
    assert embedded.last_submission("ann") is None  # reading the store starts nothing either
    with pytest.raises(KeyError):
        embedded.status("no-such-job")
    time.sleep(0.3)
    assert started_since(threads) == []
    assert child_processes() == children
    assert not embedded.started and embedded.client is None and embedded.connection.embedded is None
    embedded.close()
    from_env.close()  # closing a service never started stops nothing, and says nothing
    assert started_since(threads) == []
    with pytest.raises(ServiceClosed):
        embedded.start()


def test_start_is_idempotent_and_safe_from_many_threads(opened, store):
    service = GradingService(store=store)
    barrier = threading.Barrier(16)
    returned = []

    def start() -> None:
        barrier.wait()
        returned.append(service.start())

    starters = [threading.Thread(target=start) for _ in range(16)]
    for thread in starters:
        thread.start()
    for thread in starters:
        thread.join()
    deadline = time.monotonic() + 10
    while not service.connection.connected.is_set():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert len(opens := opened) == 1 and opens[0] is service.connection
    assert returned == [service] * 16 and service.started
    service.start()
    assert len(opened) == 1
    service.close()


def test_one_settings_object_holds_the_services_and_the_graders_settings(store):
    service = GradingService(
        "tcp://127.0.0.1:9", judges=3, store=store, settings=GraderSettings(timeout=7.0), warm_modes=["hidden"]
    )
    assert service.settings == ServiceSettings(
        grader=GraderSettings(timeout=7.0), scheduler="tcp://127.0.0.1:9", judges=3, warm_modes=("hidden",)
    )
    assert not hasattr(service, "config")


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_service_records_a_practice_run_and_answers_its_status_before_and_after(opened, store):
    service = GradingService(store=store)
    job = service.run_public({"rope.py": CODE}, ["rope"], student="ann")
    wait_for(lambda: opened and opened[0].client.tasks)
    key, task = opened[0].client.tasks[0]
    assert key == f"practice-{job.id}" and task.mode == "public" and task.submission is job.submission
    assert task.submission.files == {"rope.py": CODE}
    assert service.status(job.id).state in ("grading", "waiting", "starting")
    assert store.practice_runs("ann") == ()
    opened[0].client.release.set()
    assert job.result(timeout=10).exercises["rope"].score == 1.0
    wait_for(lambda: service.job(job.id) is None)
    runs = store.practice_runs("ann", "rope")
    assert [(run.score, run.max_score, run.code, run.kind) for run in runs] == [(1.0, 2.0, CODE, "practice")]
    assert [test["name"] for test in runs[0].details["tests"]] == ["rope: a", "rope: b"]
    status = service.status(job.id)  # finished, and not in the store's jobs: the service still knows it
    assert status.state == "done" and status.result.exercises["rope"].max_score == 2.0
    assert store.attempt_details() == () and store.grading_jobs() == ()  # practice: no attempt, no job
    service.close()


def test_a_practice_run_without_a_student_is_recorded_nowhere(opened, store):
    service = GradingService(store=store)
    job = service.run_public({"rope.py": CODE}, ["rope"])
    wait_for(lambda: opened and opened[0].client.tasks)
    opened[0].client.release.set()
    job.result(timeout=10)
    wait_for(lambda: service.job(job.id) is None)
    assert store.class_progress().empty and store.practice_runs("practice") == ()
    service.close()


def test_the_service_records_a_submission_and_its_status_comes_from_the_store(opened, store):
    service = GradingService(store=store)
    job = service.submit("bob", {"rope.py": CODE}, ["rope"])
    assert store.grading_job(job.id).status == "queued"  # recorded before it was dispatched
    wait_for(lambda: opened and opened[0].client.tasks)
    opened[0].client.release.set()
    job.result(timeout=10)
    wait_for(lambda: service.job(job.id) is None)
    attempts = store.attempt_details("bob")
    assert [(a.exercise, a.score, a.max_score, a.code, a.kind) for a in attempts] == [
        ("rope", 3.0, 4.0, CODE, "submission")
    ]
    assert store.practice_runs("bob") == ()
    again = GradingService(store=store)  # another replica, or the app after a reload
    status = again.status(job.id)
    assert status.state == "done" and status.result.exercises["rope"].score == 3.0
    assert not again.started  # a finished job's status starts nothing
    service.close()
    again.close()


def test_a_submission_whose_judges_died_is_done_with_a_sentence_and_no_attempt(opened, store):
    from distributed.scheduler import KilledWorker

    service = GradingService(store=store)
    job = service.submit("cem", {"rope.py": CODE}, ["rope"])
    wait_for(lambda: opened and opened[0].client.tasks)
    opened[0].client.raises = KilledWorker(f"hidden-{job.id}", "tcp://127.0.0.1:1", 2)
    opened[0].client.release.set()
    result = job.result(timeout=10)
    assert (result.status, result.isolation, result.tests) == ("stopped_grader", "none", ())
    assert result.messages[0].startswith("Your code stopped the grader twice; nothing was graded.")
    wait_for(lambda: service.job(job.id) is None)
    record = store.grading_job(job.id)
    assert record.status == "done" and (record.result["status"], record.result["isolation"]) == (
        "stopped_grader",
        "none",
    )
    assert store.attempt_details("cem") == ()  # nothing was graded: no attempt
    assert service.status(job.id).result.status == "stopped_grader"
    service.close()
