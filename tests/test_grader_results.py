"""SubmissionResult: JSON and Gradescope round trips, per-exercise sums, the gradebook row."""

from __future__ import annotations

import json

from grader.results import GRADEBOOK_HEADER, SubmissionResult, TestOutcome


def sample() -> SubmissionResult:
    tests = (
        TestOutcome("attention: shapes", "attention", 2.0, 2.0, "passed", "Passed.", "visible", "shape"),
        TestOutcome("rope: norm", "rope", 0.0, 3.0, "failed", "RoPE must keep norms.", "hidden", "norm"),
        TestOutcome("rope: shift", "rope", 1.5, 1.5, "passed", "Passed.", "after_due_date", "shift"),
    )
    return SubmissionResult(
        "alice",
        "import_failed",
        tests,
        "bwrap",
        False,
        "ab" * 32,
        "cd" * 32,
        "0.1.0",
        1.25,
        ("alibi.py could not be imported: SyntaxError on line 2: invalid syntax.",),
    )


def test_json_round_trip_is_exact():
    result = sample()
    assert SubmissionResult.from_json(result.to_json()) == result
    data = json.loads(result.to_json())
    assert data["tests"][1]["family"] == "norm"
    assert data["exercises"]["rope"] == {"score": 1.5, "max_score": 4.5}


def test_gradescope_format_and_its_round_trip():
    data = sample().to_gradescope()
    assert data["score"] == 3.5 and data["execution_time"] == 1.25
    assert data["tests"][1] == {
        "name": "rope: norm",
        "score": 0.0,
        "max_score": 3.0,
        "status": "failed",
        "output": "RoPE must keep norms.",
        "visibility": "hidden",
        "tags": ["rope"],
    }
    extra = data["extra_data"]
    assert (extra["isolation"], extra["grader_version"], extra["suite_hash"], extra["submission_hash"]) == (
        "bwrap",
        "0.1.0",
        "cd" * 32,
        "ab" * 32,
    )
    assert "SyntaxError on line 2" in data["output"]
    assert SubmissionResult.from_gradescope(json.loads(json.dumps(data))) == sample()


def test_scores_add_up_per_exercise_and_in_the_gradebook_row():
    result = sample()
    assert result.exercises["rope"].score == 1.5 and result.exercises["rope"].max_score == 4.5
    assert result.exercises["alibi"].max_score == 0
    assert GRADEBOOK_HEADER == (
        "id",
        "name",
        "lms_id",
        "late",
        "status",
        "attention",
        "sinusoidal",
        "learned",
        "rope",
        "alibi",
        "t5",
        "decode",
        "extend",
        "total",
        "max",
    )
    assert result.gradebook_row() == [
        "alice",
        "",
        "",
        "false",
        "import_failed",
        "2",
        "0",
        "0",
        "1.5",
        "0",
        "0",
        "0",
        "0",
        "3.5",
        "6.5",
    ]
    assert result.gradebook_row("Alice Liddell", "101", True)[:5] == [
        "alice",
        "Alice Liddell",
        "101",
        "true",
        "import_failed",
    ]
