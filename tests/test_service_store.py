"""The grading service's jobs in the store, and what `submit` refuses, without starting Dask."""

from __future__ import annotations

import time

import pytest

from grader.results import SubmissionResult, TestOutcome
from grader.service import AlreadyPending, GradingService, SubmissionRejected, attempts_of, stopped_grader_message
from poslab.store import Store
from poslab.store.jobs import AttemptToRecord, PendingJobExists

FILES = {"rope.py": "def apply_rope(x):\n    return x\n"}


@pytest.fixture
def store(tmp_path):
    return Store(f"sqlite:///{tmp_path / 'jobs.db'}")


def add(store, job_id, student="ann", holder="replica-a", lease_seconds=60.0):
    return store.add_grading_job(job_id, student, FILES, ["rope"], "hidden", holder, lease_seconds)


def test_a_job_is_recorded_queued_with_its_code_student_and_time(store):
    job = add(store, "j1")
    assert (job.status, job.student, job.files, job.exercises, job.mode) == (
        "queued",
        "ann",
        FILES,
        ("rope",),
        "hidden",
    )
    assert job.submitted_at.tzinfo is not None and job.lease_holder == "replica-a"
    assert [pending.id for pending in store.grading_jobs("ann", "queued")] == ["j1"]


def test_a_student_has_one_pending_job_at_a_time(store):
    add(store, "j1")
    with pytest.raises(PendingJobExists, match="already have a submission being graded") as refused:
        add(store, "j2")
    assert refused.value.job.id == "j1"
    add(store, "j3", student="bob")  # another student is not held up
    store.finish_grading_job("j1", {"ok": True}, [])
    add(store, "j4")  # once the first has its result


def test_finishing_records_the_attempts_once(store):
    add(store, "j1")
    attempt = AttemptToRecord("rope", 15.0, 20.0, {"tests": []}, FILES["rope.py"], False)
    assert store.finish_grading_job("j1", {"score": 15}, [attempt]) is True
    assert store.finish_grading_job("j1", {"score": 15}, [attempt]) is False  # a second grading of the same job
    attempts = store.attempt_details("ann")
    assert [(a.exercise, a.score, a.max_score, a.code) for a in attempts] == [("rope", 15.0, 20.0, FILES["rope.py"])]
    assert store.grading_job("j1").status == "done" and store.grading_job("j1").result == {"score": 15}


def test_a_graded_job_counts_in_the_per_test_pass_rates_and_a_failed_import_does_not(store):
    def outcome(name, exercise, status):
        return TestOutcome(name, exercise, 2.0 if status == "passed" else 0.0, 2.0, status, "", "hidden", "values")

    graded = SubmissionResult(
        "ann",
        "graded",
        (outcome("rope: norm", "rope", "passed"), outcome("rope: values", "rope", "failed")),
        "bwrap",
        False,
        "s",
        "h",
        "1",
        0.1,
    )
    add(store, "j1")
    store.finish_grading_job("j1", graded.to_dict(), attempts_of(graded, FILES, ["rope"]))
    unimportable = SubmissionResult(
        "bob",
        "import_failed",
        (outcome("rope: norm", "rope", "did_not_import"),),
        "bwrap",
        False,
        "s",
        "h",
        "1",
        0.1,
        ("rope.py could not be imported.",),
    )
    add(store, "j2", student="bob")
    store.finish_grading_job("j2", unimportable.to_dict(), attempts_of(unimportable, FILES, ["rope"]))
    rates = store.per_test_pass_rates("rope").set_index("test")
    assert rates.loc["rope: norm", "pass_rate"] == 1.0 and rates.loc["rope: norm", "n"] == 1  # bob's run not counted
    assert rates.loc["rope: values", "pass_rate"] == 0.0


def test_only_jobs_whose_lease_ran_out_are_claimed_by_another_replica(store):
    add(store, "alive", student="ann", holder="replica-a", lease_seconds=60)
    add(store, "abandoned", student="bob", holder="replica-b", lease_seconds=0.01)
    time.sleep(0.05)
    claimed = store.claim_abandoned_jobs("replica-c", 60)
    assert [job.id for job in claimed] == ["abandoned"]
    assert store.grading_job("abandoned").lease_holder == "replica-c"
    assert store.claim_abandoned_jobs("replica-d", 60) == ()  # now held again
    store.release_leases("replica-a")  # replica-a stops cleanly: its jobs are free at once
    assert [job.id for job in store.claim_abandoned_jobs("replica-d", 60)] == ["alive"]


def test_the_queue_position_counts_the_jobs_handed_in_before(store):
    for index, student in enumerate(["ann", "bob", "cem"]):
        add(store, f"j{index}", student=student)
    assert [store.jobs_ahead(f"j{index}") for index in range(3)] == [0, 1, 2]
    store.finish_grading_job("j0", {}, [])
    assert store.jobs_ahead("j2") == 1


def test_a_failed_job_keeps_its_sentence_and_records_no_attempt(store):
    add(store, "j1")
    assert store.fail_grading_job("j1", "The grader itself failed.") is True
    assert store.grading_job("j1").message == "The grader itself failed."
    assert store.attempt_details() == ()


def test_attempts_are_cut_to_each_asked_for_exercise():
    tests = (
        TestOutcome("rope: a", "rope", 2.0, 2.0, "passed", "ok", "visible"),
        TestOutcome("alibi: a", "alibi", 0.0, 3.0, "failed", "no", "visible"),
    )
    result = SubmissionResult("ann", "graded", tests, "bwrap", False, "h", "s", "v", 0.1)
    attempts = attempts_of(result, {"rope.py": "R", "alibi.py": "A"}, ["rope", "alibi", "learned"])
    assert [(a.exercise, a.score, a.max_score, a.code) for a in attempts] == [
        ("rope", 2.0, 2.0, "R"),
        ("alibi", 0.0, 3.0, "A"),
    ]
    assert [test["name"] for test in attempts[0].details["tests"]] == ["rope: a"]


def test_the_stopped_grader_sentence_counts_the_judges_that_died():
    assert stopped_grader_message(2).startswith("Your code stopped the grader twice; nothing was graded.")


@pytest.fixture
def unreachable_service(store):
    # No cluster behind it: refusals happen before anything is dispatched.
    service = GradingService(scheduler="tcp://127.0.0.1:9", store=store)
    yield service
    service.close()


def test_submit_refuses_bad_input_with_a_sentence(unreachable_service, store):
    with pytest.raises(SubmissionRejected, match="not a name Python can import"):
        unreachable_service.submit("ann", {"my-rope.py": "x = 1\n"})
    with pytest.raises(SubmissionRejected, match="no .py file"):
        unreachable_service.submit("ann", {})
    with pytest.raises(ValueError, match="exercises must be some of"):
        unreachable_service.submit("ann", FILES, exercises=["transformers"])
    assert store.grading_jobs() == ()


def test_a_second_submission_while_one_is_pending_is_refused(unreachable_service, store):
    first = unreachable_service.submit("ann", FILES, exercises=["rope"])
    with pytest.raises(AlreadyPending, match="already have a submission being graded") as refused:
        unreachable_service.submit("ann", FILES, exercises=["rope"])
    assert refused.value.job_id == first.id
    assert unreachable_service.last_submission("ann") == (first.id, ("rope",))
    assert unreachable_service.last_submission("ann", "rope") == (first.id, ("rope",))
    assert unreachable_service.last_submission("ann", "decode") is None  # never another exercise's
    assert [job.id for job in store.grading_jobs()] == [first.id]


def test_the_page_finds_the_last_practice_run_through_the_service(unreachable_service, store):
    assert unreachable_service.last_practice_run("ann", "rope") is None
    result = SubmissionResult("ann", "graded", (), "fallback", True, "s", "p", "1", 0.1)
    kept = AttemptToRecord("rope", 1.0, 2.0, result.to_dict(), FILES["rope.py"], True)
    store.record_practice_runs("ann", [kept])
    status = unreachable_service.last_practice_run("ann", "rope")
    assert status.state == "done" and status.result == result and status.handed_in is not None
    assert unreachable_service.last_practice_run("ann", "alibi") is None and not unreachable_service.started


def test_the_scheduler_address_is_read_only_once_its_file_is_written_whole(tmp_path):
    from grader.service.embedded import _written_address

    scheduler_file = tmp_path / "scheduler.json"
    assert _written_address(scheduler_file) is None  # not there yet
    scheduler_file.write_text("")  # created, nothing written yet: the race seen in a browser test
    assert _written_address(scheduler_file) is None
    scheduler_file.write_text('{"address": "tcp://127.0.0.1:4')  # half written
    assert _written_address(scheduler_file) is None
    scheduler_file.write_text('{"type": "Scheduler", "address": "tcp://127.0.0.1:40123"}')
    assert _written_address(scheduler_file) == "tcp://127.0.0.1:40123"
