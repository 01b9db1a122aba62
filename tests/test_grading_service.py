"""Grading from the app, without a grader: what a student may hand in (grader.submissions), the
feedback drawn from a result (app_pages.ui.exercise.feedback), and the page's helpers around the grading
service (app_pages.ui.exercise.grading). The service itself: test_service_store and test_service_dask."""

import io
import zipfile
from datetime import UTC, datetime, timedelta

import pytest

from app_pages.ui.exercise import grading, local_folder
from app_pages.ui.exercise.feedback import hidden_losses, score_line, summary, visible_failures, visible_passes
from grader import api
from grader.results import SubmissionResult, TestOutcome
from grader.submissions import SubmissionRejected, load_submission, source_from_paste, source_from_upload

# --- uploads -----------------------------------------------------------------------------------


def test_a_python_file_in_utf8_is_returned_as_text():
    source = "def f():\n    return 'é'\n"
    assert source_from_upload("rope.py", source.encode("utf-8")) == source


def test_a_byte_order_mark_is_dropped():
    assert source_from_upload("rope.py", b"\xef\xbb\xbfx = 1\n") == "x = 1\n"


@pytest.mark.parametrize("filename", ["rope.txt", "rope.ipynb", "rope", "rope.py.zip"])
def test_a_file_that_is_not_python_is_refused_by_name(filename):
    with pytest.raises(SubmissionRejected, match="not a Python file"):
        source_from_upload(filename, b"x = 1\n")


def test_the_size_limit_is_200_kb_inclusive():
    at_limit = b"#" * (200 * 1024)
    assert len(source_from_upload("big.py", at_limit)) == 200 * 1024
    with pytest.raises(SubmissionRejected, match="at most 200 KB"):
        source_from_upload("big.py", at_limit + b"#")


def test_latin1_bytes_are_refused_as_not_utf8():
    with pytest.raises(SubmissionRejected, match="not UTF-8"):
        source_from_upload("rope.py", "x = 'é'\n".encode("latin-1"))


def test_binary_data_is_refused():
    with pytest.raises(SubmissionRejected, match="binary"):
        source_from_upload("rope.py", b"x = 1\x00\x00")


@pytest.mark.parametrize("empty", [b"", b"  \n\n"])
def test_an_empty_upload_is_refused(empty):
    with pytest.raises(SubmissionRejected, match="empty"):
        source_from_upload("rope.py", empty)


def test_pasted_code_follows_the_same_rules():
    assert source_from_paste("x = 1\n") == "x = 1\n"
    with pytest.raises(SubmissionRejected, match="empty"):
        source_from_paste(None)
    with pytest.raises(SubmissionRejected, match="200 KB"):
        source_from_paste("é" * (200 * 1024 // 2 + 1))  # 2 bytes each in UTF-8


def test_the_grader_loads_folders_by_the_same_rules_and_lists_every_problem(tmp_path):
    (tmp_path / "rope.py").write_bytes(b"#" * (300 * 1024))
    (tmp_path / "alibi.py").write_bytes("x = 'é'\n".encode("latin-1"))
    (tmp_path / "learned.py").write_bytes(b"x = 1\x00")
    (tmp_path / "attention.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    submission = load_submission(tmp_path)
    assert submission.problems == () and sorted(submission.unread) == ["alibi.py", "learned.py", "rope.py"]
    rope, alibi, learned = (submission.unread[name] for name in ("rope.py", "alibi.py", "learned.py"))
    assert "at most 200 KB" in rope and "not UTF-8" in alibi and "binary data" in learned
    assert submission.files["attention.py"] == "x = 1\n"  # the byte-order mark dropped, as for an upload


def test_an_upload_and_the_loader_word_a_shared_problem_alike(tmp_path):
    (tmp_path / "rope.py").write_bytes(b"\xff\xfe not text")
    with pytest.raises(SubmissionRejected) as refused:
        source_from_upload("rope.py", b"\xff\xfe not text")
    (loaded,) = load_submission(tmp_path).unread.values()
    assert loaded == str(refused.value).replace("That file", "rope.py", 1)


# --- the feedback drawn from a result -----------------------------------------------------------------

RESULT = SubmissionResult(
    submission_id="s",
    status="graded",
    isolation="bwrap",
    public_tests_only=False,
    submission_hash="h",
    suite_hash="x",
    grader_version="0",
    execution_time=1.0,
    tests=(
        TestOutcome("rope: shapes", "rope", 2.0, 2.0, "passed", "Passed: shapes.", "visible", "shape"),
        TestOutcome("rope: secret property", "rope", 0.0, 3.0, "failed", "hidden detail", "hidden", "norm"),
        TestOutcome("rope: later", "rope", 0.0, 1.0, "failed", "after due", "after_due_date"),
        TestOutcome("alibi: slopes", "alibi", 0.0, 4.0, "failed", "Slopes are wrong.", "visible", "slopes"),
    ),
)


def test_only_visible_tests_of_the_chosen_exercises_are_named():
    assert [test.name for test in visible_passes(RESULT, ["rope"])] == ["rope: shapes"]
    assert visible_failures(RESULT, ["rope"]) == []  # the failed ones in rope are not visible
    assert [(test.name, test.output) for test in visible_failures(RESULT, ["rope", "alibi"])] == [
        ("alibi: slopes", "Slopes are wrong.")
    ]


def test_hidden_tests_count_as_points_lost_per_family_without_their_names():
    losses = {loss.family: (loss.failed, loss.points) for loss in hidden_losses(RESULT, ["rope"])}
    assert losses == {"norm": (1, 3.0), "": (1, 1.0)}  # "after_due_date" is hidden too
    assert summary(RESULT, "rope") == (
        "hidden tests: 1 about lengths failed, 3 points; 1 about other properties failed, 1 point"
    )
    assert summary(RESULT, "alibi") == "1 visible test failed, first alibi: slopes"


def test_score_lines_add_up_each_exercise():
    assert score_line(RESULT, "rope") == "2 / 6 points"
    assert score_line(RESULT, "attention") == "no tests ran for this exercise"


# --- the page's helpers around the service --------------------------------------------------------------


def test_the_zip_holds_the_folders_python_files_under_exercises(tmp_path):
    (tmp_path / "rope.py").write_text("def apply_rope(): ...\n")
    (tmp_path / "test_rope.py").write_text("def test_x(): pass\n")
    (tmp_path / "notes.txt").write_text("not python")
    with zipfile.ZipFile(io.BytesIO(local_folder.exercises_zip(tmp_path))) as archive:
        assert sorted(archive.namelist()) == ["exercises/rope.py", "exercises/test_rope.py"]
        assert archive.read("exercises/rope.py") == b"def apply_rope(): ...\n"


def test_grading_uses_public_mode_in_a_bundle_and_hidden_mode_otherwise(monkeypatch):
    monkeypatch.setattr(api, "running_in_bundle", lambda: True)
    assert grading.grading_mode() == "public"
    monkeypatch.setattr(api, "running_in_bundle", lambda: False)
    assert grading.grading_mode() == "hidden"


@pytest.mark.parametrize(("waited", "every"), [(0.0, 0.2), (2.5, 0.2), (5.0, 0.5), (60.0, 1.0)])
def test_a_pending_job_is_polled_fast_at_first_then_less_often(waited, every):
    assert grading.poll_seconds(datetime.now(UTC) - timedelta(seconds=waited)) == every


# --- the service's practice runs and a module reload (no cluster behind it) ----------------------------


@pytest.fixture
def unreachable_service(tmp_path):
    from grader.service import GradingService
    from poslab.store import Store

    store = Store(f"sqlite:///{tmp_path / 'jobs.db'}")
    service = GradingService(scheduler="tcp://127.0.0.1:9", store=store)
    yield service, store
    service.close()


def test_a_practice_run_refuses_bad_input_and_is_no_job_or_pending_submission(unreachable_service):
    service, store = unreachable_service
    with pytest.raises(SubmissionRejected, match="not a name Python can import"):
        service.run_public({"my-rope.py": "x = 1\n"}, ["rope"], student="ann")
    job = service.run_public({"rope.py": "x = 1\n"}, ["rope"], student="ann")
    assert (job.mode, job.exercises, job.recorded, job.kind) == ("public", ("rope",), False, "practice")
    assert store.grading_jobs() == ()
    service.submit("ann", {"rope.py": "x = 1\n"}, ["rope"])  # a practice run is not the pending submission


def test_the_task_function_is_the_one_imported_now_after_a_module_reload(monkeypatch):
    import sys

    import grader.service
    import grader.service.judge
    from grader.service import task_function

    before = grader.service.judge.grade_on_judge
    assert task_function() is before
    monkeypatch.delitem(sys.modules, "grader.service.judge")  # as Streamlit's file watcher evicts it
    monkeypatch.setattr(grader.service, "judge", grader.service.judge)  # the package's attribute, put back too
    reloaded = task_function()
    assert reloaded is sys.modules["grader.service.judge"].grade_on_judge and reloaded is not before


def test_a_submission_is_one_frozen_value_from_the_hand_in_to_the_judges_grader(monkeypatch):
    import dataclasses
    import json
    import pickle

    from grader.service.judge import Judge, JudgeTask
    from grader.settings import GraderSettings
    from grader.submissions import SourceFiles

    handed_in = {"rope.py": "x = 1\n"}
    submission = load_submission(handed_in, "ann")
    handed_in["rope.py"] = "changed after the hand-in"
    assert submission.files == {"rope.py": "x = 1\n"}
    with pytest.raises(TypeError):
        submission.files["rope.py"] = "y = 2\n"
    with pytest.raises(TypeError):
        submission.files.update(other="z")
    with pytest.raises(dataclasses.FrozenInstanceError):
        submission.files = {}
    task = JudgeTask(submission, ("rope",), "hidden", GraderSettings(timeout=3.0))
    sent = pickle.loads(pickle.dumps(task))  # as Dask carries it to a judge
    assert sent == task and isinstance(sent.submission.files, SourceFiles)
    assert json.loads(json.dumps({"files": sent.submission.files})) == {"files": {"rope.py": "x = 1\n"}}  # the wire
    graded = []

    class Recording:
        def grade(self, given, exercises):
            graded.append((given, exercises))
            return RESULT

    judge = Judge()
    monkeypatch.setattr(judge, "grader_for", lambda *key: Recording())
    assert judge.grade(sent) == RESULT.to_dict()
    assert graded == [(sent.submission, ("rope",))] and graded[0][0] is sent.submission


def test_the_documented_preload_grader_cluster_is_the_judge():
    import gc

    try:
        import grader.cluster  # it turns collections off until a judge's warm-up ends (dask_setup)
    finally:
        gc.enable()  # this process is no judge
    import grader.service.judge as judge

    assert grader.cluster.dask_setup is judge.dask_setup and grader.cluster.dask_teardown is judge.dask_teardown
    assert grader.cluster.load_suite is judge.load_suite  # the CLI's import


# --- what a judge warms up, and its warm sandbox worker shared by suites ------------------------------


@pytest.mark.parametrize(
    "raw, modes",
    [
        (None, ["hidden", "public"]),
        ("hidden", ["hidden"]),
        ("public, hidden", ["hidden", "public"]),
        ("nonsense", ["hidden"]),
    ],
)
def test_a_judge_warms_the_modes_its_environment_names(monkeypatch, raw, modes):
    from grader.service.judge import WARM_MODES_ENV, warm_modes

    if raw is None:
        monkeypatch.delenv(WARM_MODES_ENV, raising=False)
    else:
        monkeypatch.setenv(WARM_MODES_ENV, raw)
    assert warm_modes() == modes


def test_another_suite_on_a_judge_reuses_its_warm_sandbox_worker_of_the_same_mode_and_settings():
    from grader.service.judge import Judge
    from grader.settings import GraderSettings

    judge, settings = Judge(), GraderSettings(timeout=3.0)
    warm = object()  # stands for the started WorkerProcess: nothing here starts one
    judge.grader_for("hidden", settings, None).worker = warm
    assert judge.grader_for("hidden", settings, "tests.hostile._support:ProbeSuite").worker is warm
    assert judge.grader_for("public", settings, None).worker is None  # another mode: its own worker
    assert judge.grader_for("hidden", GraderSettings(timeout=5.0), None).worker is None  # other limits
