"""``python -m grader gradescope OUT.zip --assignment ID``: what the package carries, and how the
autograder on Gradescope counts a result for the assignment (by hand: rope 6 + alibi 4 points)."""

from __future__ import annotations

import json

import pytest

from grader.cli.common import UsageError
from grader.cli.gradescope import assignment_files
from grader.gradescope.assignment import ASSIGNMENT_FILES, chosen_assignment, counted, with_assignment
from grader.gradescope.run import GradescopePaths
from grader.results import SubmissionResult, TestOutcome

COURSE = """
[[assignment]]
id = "encodings"
title = "Encodings 1"
due = 2026-03-01T12:00:00Z
late = { policy = "penalty", percent = 5, per = "hour", cap = 40 }
exercises = { rope = 6, alibi = 4 }

[[assignment.extension]]
student = "ada@example.edu"
hours = 24
"""

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
        TestOutcome("rope: a", "rope", 3.0, 3.0, "passed", "ok", "visible", "values"),
        TestOutcome("rope: b", "rope", 0.0, 1.0, "failed", "no", "hidden", "values"),
        TestOutcome("alibi: a", "alibi", 2.0, 2.0, "passed", "ok", "visible", "slopes"),
    ),
)


@pytest.fixture
def autograder(tmp_path, monkeypatch):
    (tmp_path / "course.toml").write_text(COURSE)
    monkeypatch.setenv("POSLAB_ASSIGNMENTS", str(tmp_path / "course.toml"))
    (tmp_path / "source").mkdir()
    for name, text in assignment_files("encodings").items():
        (tmp_path / "source" / name).write_text(text)
    return GradescopePaths(tmp_path)


def metadata(paths: GradescopePaths, created_at: str, email: str) -> None:
    data = {"id": 1, "created_at": created_at, "users": [{"email": email, "name": "A", "sid": "1"}]}
    (paths.root / "submission_metadata.json").write_text(json.dumps(data))


def test_the_package_carries_the_course_file_and_the_id(autograder):
    assert sorted(ASSIGNMENT_FILES) == sorted(p.name for p in (autograder.source).iterdir())
    assignment, _ = chosen_assignment(autograder)
    assert assignment.exercises == ("rope", "alibi")


def test_an_unknown_id_or_no_file_is_a_usage_error(autograder, monkeypatch):
    with pytest.raises(UsageError, match="There is no assignment 'hw9'"):
        assignment_files("hw9")
    monkeypatch.delenv("POSLAB_ASSIGNMENTS")
    with pytest.raises(UsageError, match="set POSLAB_ASSIGNMENTS"):
        assignment_files("encodings")


def test_a_late_submission_is_scored_by_its_created_at(autograder):
    metadata(autograder, "2026-03-01T14:30:00.5+00:00", "zoe@example.edu")
    grade = counted(autograder, RESULT, *chosen_assignment(autograder))
    # rope 3/4 of 6 = 4.5, alibi 2/2 of 4 = 4: 8.5; 2.5 h late: 3 started hours x 5 % = 15 % off
    assert grade.total == 7.225  # 8.5 x 0.85
    data = json.loads(with_assignment(json.dumps({"score": 5.0, "output": "x", "extra_data": {}}), grade))
    assert data["score"] == 7.225 and data["output"].startswith("encodings: 7.225/10: ")
    assert "Late." in data["output"] and data["extra_data"]["assignment"] == {
        "id": "encodings",
        "total": 7.225,
        "max": 10,
    }


def test_an_extension_by_email_counts_it_on_time(autograder):
    metadata(autograder, "2026-03-02T11:00:00-00:00", "ADA@example.edu")
    assert counted(autograder, RESULT, *chosen_assignment(autograder)).total == 8.5  # 4.5 + 4, before 2 March 12:00
