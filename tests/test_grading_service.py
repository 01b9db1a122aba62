"""Grading from the app: what a student may hand in (grader.submissions), the grading gate, results
for the student and the store, and the call into grader.api (app_pages.ui; the grader is replaced
by a stand-in here, the real one runs in test_app_exercise)."""

import io
import threading
import time
import zipfile

import pytest

from app_pages.ui.feedback import hidden_test_count, score_line, visible_failures, visible_tests
from app_pages.ui.gate import AlreadyGrading, GraderBusy, GradingError, GradingGate
from app_pages.ui.grading import attempt_details, exercises_zip, grade, save_attempts
from grader import api
from grader.results import SubmissionResult, TestOutcome
from grader.submissions import SubmissionRejected, load_submission, source_from_paste, source_from_upload
from poslab.store import Store

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
    assert len(submission.problems) == 3
    rope, alibi, learned = (next(p for p in submission.problems if p.startswith(name)) for name in
                            ("rope.py", "alibi.py", "learned.py"))
    assert "at most 200 KB" in rope and "not UTF-8" in alibi and "binary data" in learned
    assert submission.files["attention.py"] == "x = 1\n"  # the byte-order mark dropped, as for an upload


def test_an_upload_and_the_loader_word_a_shared_problem_alike(tmp_path):
    (tmp_path / "rope.py").write_bytes(b"\xff\xfe not text")
    with pytest.raises(SubmissionRejected) as refused:
        source_from_upload("rope.py", b"\xff\xfe not text")
    loaded, = load_submission(tmp_path).problems
    assert loaded == str(refused.value).replace("That file", "rope.py", 1)


# --- the gate ----------------------------------------------------------------------------------


def test_a_student_cannot_grade_twice_at_once_but_can_afterwards():
    gate = GradingGate(max_at_once=2)
    with gate.slot("ann"):
        assert gate.running() == 1
        with pytest.raises(AlreadyGrading, match="already have a grading running"):
            with gate.slot("ann"):
                pass
        with gate.slot("bob"):  # someone else is not blocked
            assert gate.running() == 2
    assert gate.running() == 0
    with gate.slot("ann"):
        pass


def test_a_failed_grading_frees_the_student_and_the_slot():
    gate = GradingGate(max_at_once=1, wait_seconds=0.1)
    with pytest.raises(RuntimeError):
        with gate.slot("ann"):
            raise RuntimeError("grader crashed")
    with gate.slot("ann"):  # neither the student nor the slot leaked
        assert gate.running() == 1


def test_over_the_bound_a_student_is_told_to_wait_and_then_runs():
    gate = GradingGate(max_at_once=1, wait_seconds=5)
    first_started, release_first = threading.Event(), threading.Event()

    def first():
        with gate.slot("ann"):
            first_started.set()
            release_first.wait(5)

    worker = threading.Thread(target=first)
    worker.start()
    first_started.wait(5)
    messages: list[str] = []
    threading.Timer(0.2, release_first.set).start()
    started = time.monotonic()
    with gate.slot("bob", on_wait=messages.append):
        waited = time.monotonic() - started
    worker.join(5)
    assert len(messages) == 1 and "busy" in messages[0] and "1 gradings are running" in messages[0]
    assert 0.15 < waited < 4


def test_a_student_who_waits_too_long_gets_a_clear_error_not_a_stall():
    gate = GradingGate(max_at_once=1, wait_seconds=0.2)
    with gate.slot("ann"):
        started = time.monotonic()
        with pytest.raises(GraderBusy, match="submit again"):
            with gate.slot("bob"):
                pass
        assert time.monotonic() - started < 2
    assert gate.running() == 0


def test_the_bound_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        GradingGate(max_at_once=0)


# --- results, the store and the grader call (no sandbox) ------------------------------------------

RESULT = SubmissionResult(
    submission_id="s", status="graded", isolation="bwrap", public_tests_only=False,
    submission_hash="h", suite_hash="x", grader_version="0", execution_time=1.0,
    tests=(
        TestOutcome("rope: shapes", "rope", 2.0, 2.0, "passed", "Passed: shapes.", "visible"),
        TestOutcome("rope: secret property", "rope", 0.0, 3.0, "failed", "hidden detail", "hidden"),
        TestOutcome("rope: later", "rope", 0.0, 1.0, "failed", "after due", "after_due_date"),
        TestOutcome("alibi: slopes", "alibi", 0.0, 4.0, "failed", "Slopes are wrong.", "visible"),
    ),
)


def test_only_visible_tests_of_the_chosen_exercises_are_shown():
    table = visible_tests(RESULT, ["rope"])
    assert list(table["test"]) == ["rope: shapes"]
    assert list(table["points"]) == ["2 / 2"] and list(table["message"]) == ["Passed: shapes."]
    assert "hidden detail" not in table.to_string() and "secret" not in table.to_string()
    assert hidden_test_count(RESULT, ["rope"]) == 2  # "hidden" and "after_due_date" alike
    assert hidden_test_count(RESULT, ["rope", "alibi"]) == 2
    assert list(visible_tests(RESULT, ["rope", "alibi"])["exercise"]) == ["rope", "alibi"]


def test_only_failed_visible_tests_are_listed_with_their_messages():
    assert visible_failures(RESULT, ["rope"]) == []  # the failed ones in rope are not visible
    assert visible_failures(RESULT, ["rope", "alibi"]) == [("alibi: slopes", "Slopes are wrong.")]


def test_score_lines_add_up_each_exercise():
    assert score_line(RESULT, "rope") == "2 / 6 points"
    assert score_line(RESULT, "attention") == "no tests ran for this exercise"


def test_attempts_are_saved_per_exercise_with_their_own_tests_and_code(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    saved = save_attempts(store, "ann", RESULT, {"rope": "code r", "alibi": None, "attention": "code a"})
    assert saved == ["rope", "alibi"]  # attention had no tests: nothing to record
    rope, = store.attempt_details("ann", "rope")
    assert (rope.score, rope.max_score, rope.code) == (2.0, 6.0, "code r")
    assert [test["name"] for test in rope.details["tests"]] == ["rope: shapes", "rope: secret property", "rope: later"]
    assert attempt_details(RESULT, "alibi")["tests"][0]["name"] == "alibi: slopes"
    assert store.progress("ann").exercise("alibi").best_score == 0.0


def test_the_zip_holds_the_folders_python_files_under_exercises(tmp_path):
    (tmp_path / "rope.py").write_text("def apply_rope(): ...\n")
    (tmp_path / "test_rope.py").write_text("def test_x(): pass\n")
    (tmp_path / "notes.txt").write_text("not python")
    with zipfile.ZipFile(io.BytesIO(exercises_zip(tmp_path))) as archive:
        assert sorted(archive.namelist()) == ["exercises/rope.py", "exercises/test_rope.py"]
        assert archive.read("exercises/rope.py") == b"def apply_rope(): ...\n"


def test_a_grader_fault_becomes_a_sentence_and_frees_the_slot(monkeypatch):
    def broken(submission, mode):
        raise api.GraderFault("the worker did not start")

    monkeypatch.setattr(api, "grade_submission", broken)
    gate = GradingGate(max_at_once=1)
    with pytest.raises(GradingError, match="not your code's fault"):
        grade(gate, "ann", {"rope.py": "x = 1\n"})
    assert gate.running() == 0


def test_grading_uses_public_mode_in_a_bundle_and_hidden_mode_otherwise(monkeypatch):
    modes = []
    monkeypatch.setattr(api, "grade_submission", lambda submission, mode: modes.append(mode) or RESULT)
    monkeypatch.setattr(api, "running_in_bundle", lambda: True)
    assert grade(GradingGate(1), "ann", {"rope.py": ""}) is RESULT
    monkeypatch.setattr(api, "running_in_bundle", lambda: False)
    grade(GradingGate(1), "ann", {"rope.py": ""})
    assert modes == ["public", "hidden"]
