"""The assignments file: read into frozen values, every mistake one sentence naming file and key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from poslab.assignments import (
    AssignmentsError,
    FileExtensions,
    course_from_env,
    default_assignment,
    load_assignments,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "assignments.example.toml"
CHICAGO_CDT = timezone(timedelta(hours=-5))  # 10 March 2026 is after the switch to daylight time (8 March)


def test_the_shipped_example_reads_with_zones_policies_and_extensions():
    course = load_assignments(EXAMPLE)
    encodings, relative = course.assignments
    assert (encodings.id, encodings.title, dict(encodings.points)) == (
        "encodings",
        "Encodings 1",
        {"sinusoidal": 4.0, "rope": 6.0},
    )
    assert encodings.due == datetime(2026, 3, 10, 23, 59, tzinfo=CHICAGO_CDT)
    assert (encodings.late.kind, encodings.late.percent, encodings.late.unit, encodings.late.cap) == (
        "penalty",
        10,
        "day",
        30,
    )
    assert encodings.max_points == 10
    assert course.extensions.extensions("encodings") == {
        "ada@example.edu": datetime(2026, 3, 12, 23, 59, tzinfo=CHICAGO_CDT)
    }
    assert relative.late.kind == "until"
    assert relative.late.until == datetime(2026, 3, 26, 16, 0, tzinfo=UTC)
    assert course.get("relative") is relative


def test_without_a_file_there_is_one_assignment_of_every_exercise_at_its_suite_points(monkeypatch):
    monkeypatch.delenv("POSLAB_ASSIGNMENTS", raising=False)
    (only,) = course_from_env({"rope": 8.0, "attention": 4.0}).assignments
    assert dict(only.points) == {"attention": 4.0, "rope": 8.0} and only.due is None and only.late.kind == "none"
    assert default_assignment({"rope": 8.0}).max_points == 8.0


def test_the_environment_names_the_file(monkeypatch):
    monkeypatch.setenv("POSLAB_ASSIGNMENTS", str(EXAMPLE))
    assert [item.id for item in course_from_env({}).assignments] == ["encodings", "relative"]


def test_an_unknown_assignment_names_the_known_ones():
    with pytest.raises(
        AssignmentsError, match=r"There is no assignment 'hw9' in .*; its assignments are: encodings, relative\."
    ):
        load_assignments(EXAMPLE).get("hw9")


BASE = 'id = "a1"\ntitle = "A1"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id = \n", "is not valid TOML: .*line 1"),
        (
            f"[[assignment]]\n{BASE}due = 2026-03-10T23:59:00\n[assignment.exercises]\nrope = 5\n",
            r"assignment 'a1', due: 2026-03-10T23:59:00 has no time zone",
        ),
        (
            f"[[assignment]]\n{BASE}[assignment.exercises]\nrope = 5\nfourier = 2\n",
            r"assignment 'a1', exercises: unknown fourier",
        ),
        (
            f"[[assignment]]\n{BASE}[assignment.exercises]\nrope = -1\n",
            r"exercises\.rope: points must be a positive number",
        ),
        (
            f'[[assignment]]\n{BASE}due = 2026-03-10T23:59:00Z\nlate = {{ policy = "penalty", percent = 10, per = "week" }}\n[assignment.exercises]\nrope = 5\n',
            r"late\.per must be 'day' or 'hour'",
        ),
        (
            f'[[assignment]]\n{BASE}due = 2026-03-10T23:59:00Z\nlate = {{ policy = "until", until = 2026-03-01T00:00:00Z }}\n[assignment.exercises]\nrope = 5\n',
            r"late\.until must be after the assignment's due date",
        ),
        (
            f'[[assignment]]\n{BASE}late = {{ policy = "sometimes" }}\n[assignment.exercises]\nrope = 5\n',
            r"'policy' must be one of none, penalty, until",
        ),
        (
            f'[[assignment]]\n{BASE}timezone = "Mars/Olympus"\ndue = 2026-03-10T23:59:00\n[assignment.exercises]\nrope = 5\n',
            r"timezone 'Mars/Olympus' is not a known time zone",
        ),
        (
            f"[[assignment]]\n{BASE}[assignment.exercises]\nrope = 5\n[[assignment]]\n{BASE}[assignment.exercises]\nrope = 5\n",
            "the id is used twice",
        ),
        (
            f'[[assignment]]\n{BASE}[assignment.exercises]\nrope = 5\n[[assignment.extension]]\nstudent = "101"\ndays = 1\n',
            "extension 1: the assignment has no due date to extend",
        ),
        ("title = 'x'\n", r"has no \[\[assignment\]\] table"),
    ],
)
def test_a_mistake_is_one_sentence_naming_the_file_and_the_key(tmp_path, body, message):
    path = tmp_path / "course.toml"
    path.write_text(body)
    with pytest.raises(AssignmentsError, match=message) as refused:
        load_assignments(path)
    assert str(path) in str(refused.value)


def test_a_date_alone_is_the_end_of_that_day_and_extensions_add_days_and_hours(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(
        f'[[assignment]]\n{BASE}timezone = "UTC"\ndue = 2026-03-10\n[assignment.exercises]\nrope = 5\n'
        '[[assignment.extension]]\nstudent = "101"\ndays = 1\nhours = 12\n'
    )
    course = load_assignments(path)
    assert course.assignments[0].due == datetime(2026, 3, 10, 23, 59, 59, tzinfo=UTC)
    assert course.extensions.extensions("a1")["101"] == datetime(2026, 3, 12, 11, 59, 59, tzinfo=UTC)
    assert FileExtensions().extensions("a1") == {}
