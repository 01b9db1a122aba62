"""The grade of an attempt in time: what an assignment counts of a student's attempts, and why.

Pure functions of plain values. ``grade_assignment`` takes each attempt's fraction of an exercise
(0 to 1), when it was handed in (or only the LMS's late mark, when the time is unknown) and the
student's due date (``student_due``: the assignment's, or an extension's); per exercise it counts
the best on-time attempt, or the best late one after the policy's penalty if that is more, and says
so in a sentence. ``assignment_status`` is what the app shows a student before and after the due date.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from poslab.assignments import UNIT_LENGTH, Assignment, ExtensionSource

Counted = Literal["on_time", "late", "nothing", "overridden"]  # overridden: a score set by hand


@dataclass(frozen=True)
class Attempt:
    exercise: str
    fraction: float  # of the exercise's points, 0 to 1
    at: datetime | None = None  # when it was handed in; None: unknown
    late_mark: bool = False  # the LMS marked it late (Canvas's LATE): used when ``at`` is None


@dataclass(frozen=True)
class ExerciseGrade:
    exercise: str
    points: float  # the assignment's points for the exercise
    on_time: float | None  # the best on-time fraction; None: no on-time attempt
    late: float | None  # the best late fraction, before its penalty; None: no late attempt counted
    penalty: float  # percent taken off that late attempt (100: late work not accepted)
    counted: Counted
    final: float  # points counted
    why: str  # the sentence the gradebook row and the student see


@dataclass(frozen=True)
class AssignmentGrade:
    assignment: str
    due: datetime | None  # this student's (extension included)
    exercises: tuple[ExerciseGrade, ...]
    late: bool  # some attempt was late

    @property
    def total(self) -> float:
        return round(sum(item.final for item in self.exercises), 6)

    @property
    def max_points(self) -> float:
        return sum(item.points for item in self.exercises)

    def summary(self) -> str:
        """One line: the total, then each exercise's sentence."""
        parts = "; ".join(item.why for item in self.exercises)
        return f"{self.total:g}/{self.max_points:g}: {parts}"


def has_counted(grade: AssignmentGrade) -> bool:
    """Whether anything was counted (else the student has no grade to send: left blank in the LMS)."""
    return any(item.counted != "nothing" for item in grade.exercises)


def student_due(assignment: Assignment, keys: Iterable[str], extensions: ExtensionSource | None) -> datetime | None:
    """The student's due date: the latest extension granted to any of their keys, else the assignment's."""
    if assignment.due is None or extensions is None:
        return assignment.due
    granted = {key.strip().casefold(): due for key, due in extensions.extensions(assignment.id).items()}
    found = [granted[key.strip().casefold()] for key in keys if key and key.strip().casefold() in granted]
    return max([assignment.due, *found])


def late_penalty(assignment: Assignment, due: datetime, at: datetime | None) -> tuple[float, str]:
    """Percent off a late attempt (100: not accepted) and how it was reckoned. ``at`` None: late, time unknown."""
    policy = assignment.late
    if policy.kind == "none":
        return 100.0, "late work is not accepted"
    if policy.kind == "until":
        until = policy.until + (due - assignment.due)  # an extension moves the second date as well
        if at is None:
            return 0.0, f"late, accepted until {until:%Y-%m-%d %H:%M %Z} (the LMS gives no time)"
        if at <= until:
            return 0.0, f"late, accepted until {until:%Y-%m-%d %H:%M %Z}"
        return 100.0, f"handed in after {until:%Y-%m-%d %H:%M %Z}, the last date for late work"
    if at is None:
        units = 1  # the least any late attempt costs: the LMS marked it late without a time
        reckoned = "the LMS gives no time: one " + policy.unit
    else:
        units = math.ceil((at - due) / UNIT_LENGTH[policy.unit])
        reckoned = f"{units} {policy.unit}{'' if units == 1 else 's'} late"
    percent = min(policy.cap, units * policy.percent)
    capped = " (the cap)" if percent == policy.cap and units * policy.percent > policy.cap else ""
    return percent, f"{reckoned}, {percent:g}% off{capped}"


def is_late(attempt: Attempt, due: datetime | None, extended: bool) -> bool:
    if due is None:
        return False
    if attempt.at is not None:
        return attempt.at > due
    return attempt.late_mark and not extended  # an extension on file outweighs a mark with no time


def grade_assignment(
    assignment: Assignment,
    attempts: Sequence[Attempt],
    due: datetime | None = None,
    overrides: Mapping[str, float] | None = None,
) -> AssignmentGrade:
    """Per exercise of the assignment: the best on-time attempt, or the best late one after its
    penalty if that is more; a score set by hand (``overrides``: exercise -> fraction) instead.
    ``due``: the student's due date (default: the assignment's)."""
    due = assignment.due if due is None else due
    extended = due is not None and assignment.due is not None and due > assignment.due
    grades, any_late = [], False
    for exercise, points in assignment.points.items():
        mine = [item for item in attempts if item.exercise == exercise]
        on_time = [item.fraction for item in mine if not is_late(item, due, extended)]
        late = [item for item in mine if is_late(item, due, extended)]
        any_late = any_late or bool(late)
        if overrides and exercise in overrides:
            final = round(overrides[exercise] * points, 6)
            why = f"{exercise} {points:g} pts: set by hand to {final:g} (overridden)"
            grades.append(ExerciseGrade(exercise, points, None, None, 0.0, "overridden", final, why))
            continue
        grades.append(_exercise_grade(assignment, exercise, points, max(on_time, default=None), late, due))
    return AssignmentGrade(assignment.id, due, tuple(grades), any_late)


def _exercise_grade(
    assignment: Assignment,
    exercise: str,
    points: float,
    on_time: float | None,
    late: list[Attempt],
    due: datetime | None,
) -> ExerciseGrade:
    on_time_points = round((on_time or 0.0) * points, 6)
    best_late = None  # (points after penalty, fraction, percent, reckoning)
    for attempt in late:
        percent, reckoning = late_penalty(assignment, due, attempt.at)
        value = round(attempt.fraction * points * (100.0 - percent) / 100.0, 6)
        if best_late is None or value > best_late[0]:
            best_late = (value, attempt.fraction, percent, reckoning)
    shown = f"{exercise} {points:g} pts"
    if best_late is not None and (on_time is None or best_late[0] > on_time_points):
        value, fraction, percent, reckoning = best_late
        why = f"{shown}: late best {fraction * points:g} ({reckoning}) = {value:g}"
        if on_time is not None:
            why += f", more than the on-time best {on_time_points:g}"
        return ExerciseGrade(exercise, points, on_time, fraction, percent, "late", value, why)
    if on_time is None:
        return ExerciseGrade(exercise, points, None, None, 0.0, "nothing", 0.0, f"{shown}: no attempt, 0")
    why = f"{shown}: on-time best {on_time_points:g}"
    if best_late is not None:
        why += f" (a late attempt counts {best_late[0]:g}: {best_late[3]})"
    late_fraction, late_percent = (best_late[1], best_late[2]) if best_late else (None, 0.0)
    return ExerciseGrade(exercise, points, on_time, late_fraction, late_percent, "on_time", on_time_points, why)


@dataclass(frozen=True)
class AssignmentStatus:
    """What a student's exercise and Progress pages show of one assignment at ``now``."""

    assignment: str
    title: str
    due: datetime | None  # the student's own (extension included)
    time_left: timedelta | None  # until the due date; negative once it has passed; None: no deadline
    accepting: Literal["on_time", "late", "closed", "open"]  # what an attempt now would count as
    grade: AssignmentGrade  # what the attempts so far count for


def assignment_status(
    student_attempts: Sequence[Attempt], assignment: Assignment, now: datetime, due: datetime | None = None
) -> AssignmentStatus:
    due = assignment.due if due is None else due
    grade = grade_assignment(assignment, student_attempts, due)
    if due is None:
        return AssignmentStatus(assignment.id, assignment.title, None, None, "open", grade)
    if now <= due:
        accepting = "on_time"
    else:
        percent, _ = late_penalty(assignment, due, now)
        accepting = "closed" if percent >= 100 else "late"
    return AssignmentStatus(assignment.id, assignment.title, due, due - now, accepting, grade)


def due_next(assignments: Sequence[Assignment], now: datetime) -> Assignment | None:
    """The assignment due soonest after ``now`` (for the Progress page), or None."""
    upcoming = [item for item in assignments if item.due is not None and item.due >= now]
    return min(upcoming, key=lambda item: item.due, default=None)
