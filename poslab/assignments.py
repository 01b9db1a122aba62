"""Assignments, defined once: which exercises, their points, the due date and the late policy.

The course's assignments file is TOML, its path in ``POSLAB_ASSIGNMENTS`` (the repository's
``docs/assignments.example.toml`` shows every key). ``load_assignments(path)`` reads it into frozen
``Assignment`` values; ``AssignmentsError`` names the file and the key (or line) that is wrong.
Without a file, ``default_assignment(maxima)`` is the one assignment of the app as it always was:
every exercise at its suite points, no deadline. Per-student extensions come from an
``ExtensionSource``: the file's ``[[assignment.extension]]`` tables (``FileExtensions``), or any
other source with the same one method (a store table, later).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Literal, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from poslab.exercises import EXERCISE_IDS

ENV_VAR = "POSLAB_ASSIGNMENTS"
DEFAULT_ID = "course"
LatePolicyKind = Literal["none", "penalty", "until"]
LATE_POLICY_KINDS: tuple[LatePolicyKind, ...] = ("none", "penalty", "until")
PenaltyUnit = Literal["day", "hour"]
UNIT_LENGTH: dict[PenaltyUnit, timedelta] = {"day": timedelta(days=1), "hour": timedelta(hours=1)}


class AssignmentsError(ValueError):
    """The assignments file cannot be used; the message names the file and the key or line."""


@dataclass(frozen=True)
class LatePolicy:
    """No late work; ``percent`` off per started ``unit`` late, at most ``cap`` percent; or full
    credit until ``until`` (the due date plus the same time for a student with an extension)."""

    kind: LatePolicyKind = "none"
    percent: float = 0.0
    unit: PenaltyUnit = "day"
    cap: float = 100.0
    until: datetime | None = None


@dataclass(frozen=True)
class Assignment:
    id: str
    title: str
    points: Mapping[str, float]  # exercise id -> points, in course order
    due: datetime | None  # time-zone aware; None: no deadline
    late: LatePolicy = field(default_factory=LatePolicy)

    @property
    def exercises(self) -> tuple[str, ...]:
        return tuple(self.points)

    @property
    def max_points(self) -> float:
        return sum(self.points.values())


@dataclass(frozen=True)
class Extension:
    assignment: str
    student: str  # an LMS id, an email, a gradebook id or the app's student key
    due: datetime


class ExtensionSource(Protocol):
    """Where per-student extensions come from: the assignments file, or a store table."""

    def extensions(self, assignment_id: str) -> Mapping[str, datetime]:
        """{student key: that student's due date} for one assignment."""
        ...


@dataclass(frozen=True)
class FileExtensions:
    granted: tuple[Extension, ...] = ()

    def extensions(self, assignment_id: str) -> Mapping[str, datetime]:
        return {item.student: item.due for item in self.granted if item.assignment == assignment_id}


@dataclass(frozen=True)
class Course:
    assignments: tuple[Assignment, ...]
    extensions: FileExtensions = field(default_factory=FileExtensions)
    source: str = ""  # the file it was read from ("" for the default)

    def get(self, assignment_id: str) -> Assignment:
        for assignment in self.assignments:
            if assignment.id == assignment_id:
                return assignment
        known = ", ".join(item.id for item in self.assignments) or "none"
        where = f" in {self.source}" if self.source else ""
        raise AssignmentsError(f"There is no assignment {assignment_id!r}{where}; its assignments are: {known}.")


def default_assignment(maxima: Mapping[str, float]) -> Assignment:
    """Every exercise at its suite points, no deadline: the course as it is without a file."""
    points = {exercise: float(maxima[exercise]) for exercise in EXERCISE_IDS if exercise in maxima}
    return Assignment(DEFAULT_ID, "Position Lab", points, None)


def course_from_env(maxima: Mapping[str, float]) -> Course:
    """The course of ``POSLAB_ASSIGNMENTS``, or the default assignment when it is unset."""
    path = os.environ.get(ENV_VAR, "").strip()
    if not path:
        return Course((default_assignment(maxima),))
    return load_assignments(path)


def load_assignments(path: str | Path) -> Course:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise AssignmentsError(f"{path} cannot be read ({error.strerror or error}).") from None
    except UnicodeDecodeError:
        raise AssignmentsError(f"{path} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as error:
        raise AssignmentsError(f"{path} is not valid TOML: {error}.") from None
    tables = data.get("assignment")
    if not isinstance(tables, list) or not tables:
        raise AssignmentsError(f"{path} has no [[assignment]] table: see docs/assignments.example.toml.")
    assignments, granted = [], []
    for number, table in enumerate(tables, start=1):
        where = f"{path}, assignment {table.get('id', number)!r}"
        assignment = _assignment(table, where)
        if any(other.id == assignment.id for other in assignments):
            raise AssignmentsError(f"{where}: the id is used twice; each assignment needs its own.")
        assignments.append(assignment)
        granted += _extensions(table, assignment, where)
    return Course(tuple(assignments), FileExtensions(tuple(granted)), str(path))


def _assignment(table: dict, where: str) -> Assignment:
    unknown = sorted(set(table) - {"id", "title", "exercises", "due", "timezone", "late", "extension"})
    if unknown:
        raise AssignmentsError(f"{where}: unknown key(s) {', '.join(unknown)}.")
    ident, title = _text(table, "id", where), _text(table, "title", where)
    exercises = table.get("exercises")
    if not isinstance(exercises, dict) or not exercises:
        raise AssignmentsError(f"{where}: 'exercises' must be a table of exercise = points, e.g. rope = 10.")
    bad = sorted(set(exercises) - set(EXERCISE_IDS))
    if bad:
        raise AssignmentsError(f"{where}, exercises: unknown {', '.join(bad)}; known: {', '.join(EXERCISE_IDS)}.")
    for exercise, value in exercises.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise AssignmentsError(f"{where}, exercises.{exercise}: points must be a positive number, not {value!r}.")
    points = {exercise: float(exercises[exercise]) for exercise in EXERCISE_IDS if exercise in exercises}
    zone = table.get("timezone")
    due = _moment(table.get("due"), zone, f"{where}, due") if "due" in table else None
    late = _policy(table.get("late", {"policy": "none"}), zone, due, f"{where}, late")
    return Assignment(ident, title, points, due, late)


def _policy(table: object, zone: object, due: datetime | None, where: str) -> LatePolicy:
    if not isinstance(table, dict) or table.get("policy") not in LATE_POLICY_KINDS:
        raise AssignmentsError(f"{where}: 'policy' must be one of {', '.join(LATE_POLICY_KINDS)}.")
    kind = table["policy"]
    expected = {"none": {"policy"}, "penalty": {"policy", "percent", "per", "cap"}, "until": {"policy", "until"}}[kind]
    unknown = sorted(set(table) - expected)
    if unknown:
        raise AssignmentsError(f"{where}: {', '.join(unknown)} do(es) not apply to policy {kind!r}.")
    if kind == "none":
        return LatePolicy()
    if kind == "until":
        until = _moment(table.get("until"), zone, f"{where}.until")
        if due is None or until <= due:
            raise AssignmentsError(f"{where}.until must be after the assignment's due date.")
        return LatePolicy("until", until=until)
    percent, cap = table.get("percent"), table.get("cap", 100)
    for name, value in (("percent", percent), ("cap", cap)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 100:
            raise AssignmentsError(f"{where}.{name} must be a number of percent above 0, at most 100, not {value!r}.")
    unit = table.get("per", "day")
    if unit not in UNIT_LENGTH:
        raise AssignmentsError(f"{where}.per must be 'day' or 'hour', not {unit!r}.")
    if due is None:
        raise AssignmentsError(f"{where}: a late penalty needs the assignment's due date.")
    return LatePolicy("penalty", float(percent), unit, float(cap))


def _extensions(table: dict, assignment: Assignment, where: str) -> list[Extension]:
    found = []
    for number, item in enumerate(table.get("extension", []), start=1):
        here = f"{where}, extension {number}"
        if not isinstance(item, dict) or set(item) - {"student", "due", "days", "hours"}:
            raise AssignmentsError(f"{here}: give 'student' and either 'due' or 'days' (or 'hours').")
        student = _text(item, "student", here)
        if assignment.due is None:
            raise AssignmentsError(f"{here}: the assignment has no due date to extend.")
        if "due" in item:
            due = _moment(item["due"], table.get("timezone"), f"{here}, due")
        else:
            days, hours = item.get("days", 0), item.get("hours", 0)
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in (days, hours)):
                raise AssignmentsError(f"{here}: days and hours must be numbers of at least 0.")
            due = assignment.due + timedelta(days=days, hours=hours)
        found.append(Extension(assignment.id, student, due))
    return found


def _text(table: dict, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AssignmentsError(f"{where}: '{key}' must be a non-empty string.")
    return value.strip()


def _moment(value: object, zone: object, where: str) -> datetime:
    """A time-zone aware date-time: TOML's 2026-03-10T23:59:00-05:00, or a local one with ``timezone``."""
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(23, 59, 59))  # a date alone: the end of that day
    if not isinstance(value, datetime):
        raise AssignmentsError(f"{where}: expected a date and time such as 2026-03-10T23:59:00-05:00, not {value!r}.")
    if value.tzinfo is not None:
        return value
    if not isinstance(zone, str):
        raise AssignmentsError(
            f"{where}: {value.isoformat()} has no time zone: write it with an offset "
            '(2026-03-10T23:59:00-05:00) or give the assignment a timezone = "America/Chicago".'
        )
    try:
        return value.replace(tzinfo=ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        raise AssignmentsError(f"{where}: timezone {zone!r} is not a known time zone (e.g. Europe/Paris).") from None
