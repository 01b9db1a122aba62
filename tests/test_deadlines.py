"""The grade of an attempt in time, checked against values worked out by hand.

Assignment HW: rope 6 points, alibi 4 points, due 10 March 2026 23:59 UTC. Each expected value is
written as its arithmetic.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from poslab.assignments import Assignment, Extension, FileExtensions, LatePolicy
from poslab.deadlines import Attempt, assignment_status, due_next, grade_assignment, late_penalty, student_due

DUE = datetime(2026, 3, 10, 23, 59, tzinfo=UTC)
POINTS = {"rope": 6.0, "alibi": 4.0}
PENALTY = LatePolicy("penalty", percent=10, unit="day", cap=30)
HOURLY = LatePolicy("penalty", percent=2, unit="hour", cap=50)
UNTIL = LatePolicy("until", until=DUE + timedelta(days=2))


def hw(late: LatePolicy = PENALTY, due: datetime | None = DUE) -> Assignment:
    return Assignment("hw", "Homework", POINTS, due, late)


def at(days: float = 0, hours: float = 0) -> datetime:
    return DUE + timedelta(days=days, hours=hours)


def test_the_best_on_time_attempt_counts_and_one_exercise_missing_is_zero():
    grade = grade_assignment(
        hw(), [Attempt("rope", 0.5, at(-2)), Attempt("rope", 0.75, at(-1)), Attempt("rope", 0.25, at(0))]
    )
    rope, alibi = grade.exercises
    assert (rope.counted, rope.final, rope.on_time) == ("on_time", 4.5, 0.75)  # 0.75 * 6
    assert (alibi.counted, alibi.final) == ("nothing", 0.0)
    assert grade.total == 4.5 and grade.max_points == 10 and not grade.late


@pytest.mark.parametrize(
    ("late_by", "percent"),
    [
        (timedelta(seconds=1), 10),  # a started day: 1 * 10 %
        (timedelta(days=1), 10),  # exactly one day
        (timedelta(days=1, seconds=1), 20),  # 2 started days * 10 %
        (timedelta(days=2, hours=5), 30),  # 3 days * 10 % = 30 %, the cap
        (timedelta(days=9), 30),  # 9 * 10 % = 90 %, capped at 30 %
    ],
)
def test_the_penalty_per_started_day_up_to_the_cap(late_by, percent):
    assert late_penalty(hw(), DUE, DUE + late_by)[0] == percent


def test_an_hourly_penalty():
    assert late_penalty(hw(HOURLY), DUE, at(hours=3.5))[0] == 8  # 4 started hours * 2 %
    assert late_penalty(hw(HOURLY), DUE, at(days=3))[0] == 50  # 72 * 2 % = 144 %, capped at 50 %


def test_a_late_attempt_counts_with_its_penalty_when_it_beats_the_on_time_best():
    attempts = [Attempt("rope", 0.5, at(-1)), Attempt("rope", 1.0, at(1.5))]
    (rope, _) = grade_assignment(hw(), attempts).exercises
    # on time: 0.5 * 6 = 3; late: 2 started days, 20 % off: 1.0 * 6 * 0.8 = 4.8 > 3
    assert (rope.counted, rope.final, rope.on_time, rope.late, rope.penalty) == ("late", 4.8, 0.5, 1.0, 20)
    assert rope.why == "rope 6 pts: late best 6 (2 days late, 20% off) = 4.8, more than the on-time best 3"


def test_the_on_time_best_stays_when_the_late_one_is_worth_less_after_its_penalty():
    attempts = [Attempt("rope", 0.9, at(-1)), Attempt("rope", 1.0, at(0.5))]
    (rope, _) = grade_assignment(hw(), attempts).exercises
    # on time: 0.9 * 6 = 5.4; late: 1.0 * 6 * 0.9 = 5.4, not more
    assert (rope.counted, rope.final) == ("on_time", 5.4)
    assert "a late attempt counts 5.4" in rope.why


def test_late_past_the_cap_still_counts_at_the_cap():
    (rope, alibi) = grade_assignment(hw(), [Attempt("rope", 1.0, at(20)), Attempt("alibi", 0.5, at(20))]).exercises
    assert rope.final == 4.2  # 1.0 * 6 * (1 - 0.30)
    assert alibi.final == 1.4  # 0.5 * 4 * 0.7
    assert "(the cap)" in rope.why


def test_no_late_work_scores_a_late_attempt_zero():
    (rope, _) = grade_assignment(hw(LatePolicy()), [Attempt("rope", 1.0, at(0, 1))]).exercises
    assert (rope.final, rope.penalty) == (0.0, 100)
    assert grade_assignment(hw(LatePolicy()), [Attempt("rope", 1.0, at(0, 1))]).late


def test_until_a_second_date_late_work_counts_in_full_then_nothing():
    in_time, too_late = (grade_assignment(hw(UNTIL), [Attempt("rope", 1.0, at(d))]) for d in (1.9, 2.1))
    assert in_time.total == 6.0 and too_late.total == 0.0


def test_an_extension_moves_the_due_date_and_the_second_date_with_it():
    extensions = FileExtensions((Extension("hw", "101", at(3)), Extension("other", "101", at(30))))
    due = student_due(hw(UNTIL), ["ada_101", "101"], extensions)
    assert due == at(3)
    assert grade_assignment(hw(UNTIL), [Attempt("rope", 1.0, at(2.5))], due).total == 6.0  # before 13 March
    assert grade_assignment(hw(UNTIL), [Attempt("rope", 1.0, at(4.5))], due).total == 6.0  # until 13 + 2 days
    assert grade_assignment(hw(UNTIL), [Attempt("rope", 1.0, at(5.5))], due).total == 0.0
    assert student_due(hw(UNTIL), ["102"], extensions) == DUE


def test_a_late_mark_without_a_time_costs_one_unit_and_an_extension_outweighs_it():
    marked = [Attempt("rope", 1.0, None, late_mark=True)]
    assert grade_assignment(hw(), marked).total == 5.4  # 6 * (1 - 0.10): one day's penalty
    assert grade_assignment(hw(LatePolicy()), marked).total == 0.0
    assert grade_assignment(hw(), marked, due=at(2)).total == 6.0  # an extension on file: on time


def test_without_a_deadline_every_attempt_is_on_time():
    grade = grade_assignment(hw(due=None, late=LatePolicy()), [Attempt("rope", 1.0, at(100))])
    assert grade.total == 6.0 and not grade.late


def test_the_status_shown_to_a_student_before_and_after_the_due_date():
    attempts = [Attempt("rope", 1.0, at(-1))]
    before = assignment_status(attempts, hw(), at(hours=-2))
    assert (before.accepting, before.time_left, before.grade.total) == ("on_time", timedelta(hours=2), 6.0)
    assert assignment_status(attempts, hw(), at(1)).accepting == "late"
    assert assignment_status(attempts, hw(LatePolicy()), at(1)).accepting == "closed"
    assert assignment_status(attempts, hw(UNTIL), at(3)).accepting == "closed"
    assert assignment_status(attempts, hw(due=None), at(1)).accepting == "open"


def test_the_next_due_assignment():
    later = Assignment("b", "B", POINTS, at(7))
    assert due_next([later, hw(), hw(due=None)], at(-1)).id == "hw"
    assert due_next([later, hw()], at(1)).id == "b" and due_next([hw()], at(1)) is None
