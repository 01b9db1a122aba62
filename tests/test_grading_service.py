"""poslab.grading_service: upload checks and the grading gate (no grader needed)."""

import threading
import time

import pytest

from poslab.grading_service import (
    MAX_UPLOAD_BYTES, AlreadyGrading, GraderBusy, GradingGate, SubmissionRejected, source_from_paste,
    source_from_upload)

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
    assert MAX_UPLOAD_BYTES == 204_800


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
        source_from_paste("é" * (MAX_UPLOAD_BYTES // 2 + 1))  # 2 bytes each in UTF-8


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
