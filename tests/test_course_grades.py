"""The app's side of assignments, pure: store attempts counted in time for a class, extensions
merged from the file and the store, the class table for one assignment, and the sentences a
student reads (deadline, time left, each attempt's timing, what is due next). Expected values
are worked out by hand from the times and points below."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pandas as pd
import pytest

from poslab.assignments import Assignment, Extension, FileExtensions, LatePolicy
from poslab.class_roll import class_roll
from poslab.course_grades import (
    KnownExtensions,
    assignment_roll,
    class_grades,
    feedback_line,
    merged_extensions,
    student_due_next,
    timed_attempts,
)
from poslab.deadline_text import attempt_timing, deadline_sentence, due_next_sentence, span, timed_rows
from poslab.deadlines import assignment_status

ZONE = timezone(timedelta(hours=1))
DUE = datetime(2026, 3, 10, 23, 59, tzinfo=ZONE)
PENALTY = Assignment("enc", "Encodings 1", {"sinusoidal": 4.0, "rope": 6.0}, DUE, LatePolicy("penalty", 10, "day", 30))
NONE = Assignment("rel", "Relative", {"alibi": 5.0}, DUE + timedelta(days=7))


@dataclass(frozen=True)
class Stored:
    student: str
    exercise: str
    time: datetime
    score: float
    max_score: float
    public_tests_only: bool = False


def test_timed_attempts_keep_hidden_suite_submissions_as_fractions_with_their_times():
    found = timed_attempts([Stored("a", "rope", DUE, 3, 4), Stored("a", "rope", DUE, 4, 4, public_tests_only=True)])
    assert [(item.exercise, item.fraction, item.at) for item in found] == [("rope", 0.75, DUE)]


def test_merged_extensions_take_the_latest_date_for_a_student_named_twice():
    file = FileExtensions((Extension("enc", "ann", DUE + timedelta(days=1)), Extension("enc", "bo", DUE)))
    stored = KnownExtensions({"enc": {"ann": DUE + timedelta(days=3)}, "rel": {"cy": DUE}})
    merged = merged_extensions(file, None, stored)
    assert merged.extensions("enc") == {"ann": DUE + timedelta(days=3), "bo": DUE}
    assert merged.extensions("rel") == {"cy": DUE}


def test_class_grades_count_each_student_at_their_own_due_date_by_any_of_their_names():
    attempts = [
        Stored("ann@uni.edu", "rope", DUE + timedelta(hours=30), 4, 4),  # 2 started days late: 20 % off 6
        Stored("bo", "rope", DUE + timedelta(hours=30), 4, 4),  # bo's extension (by LMS id) makes it on time
        Stored("bo", "alibi", DUE, 4, 4),  # not in the assignment
    ]
    extensions = KnownExtensions({"enc": {"77": DUE + timedelta(days=2)}})
    grades = class_grades(attempts, {"bo": ("bo", "", "77", "Bo"), "cy": ("cy",)}, PENALTY, extensions)
    assert grades["ann@uni.edu"].total == pytest.approx(4.8) and grades["ann@uni.edu"].late
    assert grades["bo"].total == pytest.approx(6.0) and not grades["bo"].late
    assert grades["cy"].total == 0.0  # on the roster, no attempt
    assert feedback_line(PENALTY, grades["ann@uni.edu"]) == (
        "Encodings 1: 4.8/10: sinusoidal 4 pts: no attempt, 0; rope 6 pts: late best 6 (2 days late, 20% off) = 4.8."
        " Late."
    )


@dataclass(frozen=True)
class Member:
    key: str
    name: str
    section: str


def test_the_class_table_of_an_assignment_has_its_exercises_total_and_late_status():
    progress = pd.DataFrame(
        [
            {
                "student": "ann",
                "grade:rope": 1.0,
                "grade:sinusoidal": 1.0,
                "grade:alibi": 1.0,
                "percent": 50.0,
                "lessons_done": 1,
                "exercises_graded": 3,
                "last_active": DUE,
            }
        ]
    )
    table = class_roll(progress, [Member("ann", "Ann", "A"), Member("bo", "Bo", "B")], {"rope": 6, "alibi": 5})
    attempts = [Stored("ann", "rope", DUE + timedelta(days=5), 4, 4), Stored("ann", "sinusoidal", DUE, 2, 4)]
    grades = class_grades(attempts, {"ann": ("ann",), "bo": ("bo",)}, PENALTY, None)
    rows = assignment_roll(table, grades, PENALTY).set_index("key")
    assert list(rows.columns[:6]) == ["name", "section", "roster", "status", "sinusoidal", "rope"]
    # rope 5 days late: 50 % capped at 30 % off 6 = 4.2; sinusoidal on time at the due minute: 2 of 4
    assert rows.loc["ann", "rope"] == pytest.approx(4.2) and rows.loc["ann", "sinusoidal"] == pytest.approx(2.0)
    assert rows.loc["ann", "total"] == pytest.approx(6.2) and rows.loc["ann", "max"] == 10.0
    assert rows.loc["ann", "status"] == "late" and rows.loc["bo", "status"] == "not started"
    assert rows.loc["bo", "total"] == 0.0 and pd.isna(rows.loc["bo", "grade:rope"])


def test_time_spans_read_in_their_two_largest_units():
    assert span(timedelta(days=3, hours=4, minutes=5)) == "3 days 4 hours"
    assert span(timedelta(hours=1, minutes=1)) == "1 hour 1 minute"
    assert span(-timedelta(minutes=90)) == "1 hour 30 minutes"
    assert span(timedelta(seconds=20)) == "less than a minute"


def test_the_deadline_sentence_before_after_and_with_an_extension():
    before = assignment_status([], PENALTY, DUE - timedelta(days=2, hours=3), DUE)
    assert deadline_sentence(before, PENALTY, UTC) == (
        "Encodings 1 is due 2026-03-10 22:59 UTC: 2 days 3 hours left. "
        "After it, late work loses 10% per day late, at most 30%."
    )
    after = assignment_status([], NONE, NONE.due + timedelta(hours=5), NONE.due)
    assert deadline_sentence(after, NONE, ZONE) == (
        "Relative was due 2026-03-17 23:59 UTC+01:00, 5 hours ago: a submission now no longer counts for it "
        "(late work is not accepted)."
    )
    extended = assignment_status([], PENALTY, DUE, DUE + timedelta(days=1))
    assert "due 2026-03-11 22:59 UTC (your extension): 1 day left" in deadline_sentence(extended, PENALTY, UTC)
    open_ended = Assignment("all", "Position Lab", {"rope": 1.0}, None)
    assert deadline_sentence(assignment_status([], open_ended, DUE), open_ended, UTC) == "Position Lab: no due date."


def test_each_attempt_says_whether_it_was_late_and_what_that_costs():
    assert attempt_timing(DUE, PENALTY, DUE) == "on time"
    assert attempt_timing(DUE + timedelta(hours=25), PENALTY, DUE) == "late: 2 days late, 20% off"
    assert attempt_timing(DUE + timedelta(minutes=1), NONE, DUE) == "late: not counted (late work is not accepted)"
    rows = timed_rows([(DUE, 0.5), (DUE + timedelta(days=9), 1.0)], PENALTY, "rope", DUE)
    assert [(row.number, row.points, row.timing) for row in rows] == [
        (1, 3.0, "on time"),
        (2, 6.0, "late: 9 days late, 30% off (the cap)"),
    ]


def test_due_next_is_the_soonest_ahead_at_the_students_own_dates():
    now = DUE + timedelta(hours=1)  # PENALTY has passed for everyone but ann (extended by 2 days)
    extensions = KnownExtensions({"enc": {"ann": DUE + timedelta(days=2)}})
    assert student_due_next([PENALTY, NONE], ("ann",), extensions, now) == (PENALTY, DUE + timedelta(days=2))
    assert student_due_next([PENALTY, NONE], ("bo",), extensions, now) == (NONE, NONE.due)
    assert student_due_next([PENALTY], ("bo",), extensions, now) == (None, None)
    assert due_next_sentence(NONE, NONE.due, NONE.due - timedelta(days=1), UTC) == (
        "Due next: Relative (alibi), 2026-03-17 22:59 UTC: 1 day left."
    )
    assert due_next_sentence(None, None, now, UTC) == "Nothing is due: no assignment has a due date ahead."
