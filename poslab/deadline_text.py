"""The sentences a student reads about a deadline: when it is, how long is left, the late policy,
whether an attempt was late and what it counts for. Pure: times are shown in the zone given
(the student's browser's), always naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from poslab.assignments import Assignment
from poslab.deadlines import AssignmentStatus, late_penalty

SHOWN = "%Y-%m-%d %H:%M"


def when(moment: datetime, zone: tzinfo) -> str:
    local = moment.astimezone(zone)
    return f"{local.strftime(SHOWN)} {local.tzname()}"


def span(delta: timedelta) -> str:
    """A length of time in its two largest units: "3 days 4 hours", "5 minutes"."""
    minutes = int(abs(delta).total_seconds() // 60)
    days, hours, mins = minutes // (24 * 60), minutes // 60 % 24, minutes % 60
    parts = [(days, "day"), (hours, "hour"), (mins, "minute")]
    shown = [f"{n} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n][:2]
    return " ".join(shown) or "less than a minute"


def policy_text(assignment: Assignment, due: datetime | None, zone: tzinfo) -> str:
    late = assignment.late
    if late.kind == "none":
        return "late work is not accepted"
    if late.kind == "until":
        until = late.until + ((due or assignment.due) - assignment.due)
        return f"late work counts in full until {when(until, zone)}"
    cap = f", at most {late.cap:g}%" if late.cap < 100 else ""
    return f"late work loses {late.percent:g}% per {late.unit} late{cap}"


def deadline_sentence(status: AssignmentStatus, assignment: Assignment, zone: tzinfo) -> str:
    """Where the student stands with one assignment: its due date (theirs), the time left, the policy."""
    title = status.title
    if status.due is None:
        return f"{title}: no due date."
    extended = " (your extension)" if assignment.due is not None and status.due > assignment.due else ""
    due = f"{when(status.due, zone)}{extended}"
    policy = policy_text(assignment, status.due, zone)
    if status.accepting == "on_time":
        return f"{title} is due {due}: {span(status.time_left)} left. After it, {policy}."
    ago = span(status.time_left)
    if status.accepting == "late":
        return f"{title} was due {due}, {ago} ago: a submission now is late ({policy})."
    return f"{title} was due {due}, {ago} ago: a submission now no longer counts for it ({policy})."


def attempt_timing(at: datetime, assignment: Assignment, due: datetime | None) -> str:
    """Whether one attempt was on time and, if late, what its lateness costs."""
    if due is None:
        return "no due date"
    if at <= due:
        return "on time"
    percent, reckoning = late_penalty(assignment, due, at)
    return "late: not counted (" + reckoning + ")" if percent >= 100 else f"late: {reckoning}"


@dataclass(frozen=True)
class TimedAttempt:
    number: int  # 1 for the first attempt at the exercise
    at: datetime
    points: float  # its hidden-suite points, out of the exercise's points in the assignment
    timing: str  # attempt_timing


def timed_rows(
    attempts: Sequence[tuple[datetime, float]], assignment: Assignment, exercise: str, due: datetime | None
) -> list[TimedAttempt]:
    """Each (time, fraction) attempt at ``exercise``, oldest first: its points in the assignment and timing."""
    points = assignment.points[exercise]
    return [
        TimedAttempt(number, at, round(fraction * points, 2), attempt_timing(at, assignment, due))
        for number, (at, fraction) in enumerate(attempts, start=1)
    ]


def due_next_sentence(assignment: Assignment | None, due: datetime | None, now: datetime, zone: tzinfo) -> str:
    """The Progress page's "due next": the assignment due soonest and how long is left."""
    if assignment is None or due is None:
        return "Nothing is due: no assignment has a due date ahead."
    exercises = ", ".join(assignment.exercises)
    return f"Due next: {assignment.title} ({exercises}), {when(due, zone)}: {span(due - now)} left."
