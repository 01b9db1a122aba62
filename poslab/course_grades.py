"""What the app shows and exports of an assignment: the store's attempts counted in time.

Pure functions of plain values. ``timed_attempts`` turns the store's hidden-suite submissions into
``poslab.deadlines.Attempt``s (public-tests-only runs and practice never count);
``class_grades`` counts one assignment for every student, each at their own due date
(``merged_extensions``: the file's and the store's); ``assignment_roll`` turns the Instructor
page's class table into the assignment's (its exercises, points, total and "late").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import pandas as pd

from poslab.assignments import Assignment, ExtensionSource
from poslab.class_roll import ACTIVITY_COLUMNS, IDENTITY_COLUMNS
from poslab.deadlines import AssignmentGrade, Attempt, grade_assignment, student_due
from poslab.grade_totals import class_totals


class StoredAttempt(Protocol):
    """What is read of a store's attempt (``poslab.store.Attempt``)."""

    student: str
    exercise: str
    time: datetime
    score: float
    max_score: float
    public_tests_only: bool


@dataclass(frozen=True)
class MergedExtensions:
    """Several ``ExtensionSource``s as one: for a key named in more than one, the latest date."""

    sources: tuple[ExtensionSource, ...]

    def extensions(self, assignment_id: str) -> Mapping[str, datetime]:
        merged: dict[str, datetime] = {}
        for source in self.sources:
            for key, due in source.extensions(assignment_id).items():
                merged[key] = max(due, merged.get(key, due))
        return merged


def merged_extensions(*sources: ExtensionSource | None) -> MergedExtensions:
    return MergedExtensions(tuple(source for source in sources if source is not None))


def timed_attempts(attempts: Iterable[StoredAttempt]) -> list[Attempt]:
    """The hidden-suite submissions as fractions with their times (public-tests-only never counts)."""
    return [
        Attempt(item.exercise, item.score / item.max_score, item.time)
        for item in attempts
        if not item.public_tests_only and item.max_score > 0
    ]


def class_grades(
    attempts: Iterable[StoredAttempt],
    students: Mapping[str, Sequence[str]],
    assignment: Assignment,
    extensions: ExtensionSource | None,
    overrides: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, AssignmentGrade]:
    """{student key: their grade for ``assignment``}. ``students``: {key: every name an extension may
    use for them (key, email, LMS id, name)}; students seen in ``attempts`` but not there count too.
    ``overrides``: {key: {exercise: fraction}} set by hand (``Store.override_fractions``): they win."""
    overrides = overrides or {}
    mine: dict[str, list[StoredAttempt]] = {}
    for item in attempts:
        mine.setdefault(item.student, []).append(item)
    everyone = {
        **{key: (key,) for key in [*mine, *overrides]},
        **{key: tuple(names) for key, names in students.items()},
    }
    grades = {}
    for key, names in everyone.items():
        due = student_due(assignment, (key, *names), extensions)
        grades[key] = grade_assignment(assignment, timed_attempts(mine.get(key, ())), due, overrides.get(key))
    return grades


def assignment_roll(table: pd.DataFrame, grades: Mapping[str, AssignmentGrade], assignment: Assignment) -> pd.DataFrame:
    """The class table (``poslab.class_roll``) for one assignment: its exercises' points as counted
    (late work after its penalty), the total out of its points, and status "late" where an attempt was."""
    rows = []
    for row in table.to_dict("records"):
        grade = grades.get(row["key"])
        counted = {item.exercise: item for item in grade.exercises} if grade else {}
        out = {column: row[column] for column in IDENTITY_COLUMNS}
        for exercise, points in assignment.points.items():
            item = counted.get(exercise)
            out[exercise] = item.final if item else 0.0
            out[f"grade:{exercise}"] = item.final / points if item and item.counted != "nothing" else float("nan")
        if grade is not None and grade.late:
            out["status"] = "late"
        out.update({column: row[column] for column in ACTIVITY_COLUMNS})
        if grade is not None:  # this assignment's exercises set by hand
            out["overridden"] = ", ".join(item.exercise for item in grade.exercises if item.counted == "overridden")
        rows.append(out)
    exercises = list(assignment.points)
    shaped = pd.DataFrame(
        rows, columns=[*IDENTITY_COLUMNS, *exercises, *(f"grade:{ex}" for ex in exercises), *ACTIVITY_COLUMNS]
    )
    total, most = class_totals(shaped, assignment.points)
    shaped.insert(len(IDENTITY_COLUMNS) + len(exercises), "total", total)
    shaped.insert(len(IDENTITY_COLUMNS) + len(exercises) + 1, "max", most)
    return shaped


def feedback_line(assignment: Assignment, grade: AssignmentGrade) -> str:
    """One line for an LMS feedback column: the total and what each exercise counted, and why."""
    return f"{assignment.title}: {grade.summary()}." + (" Late." if grade.late else "")


@dataclass(frozen=True)
class KnownExtensions:
    """Extensions already read (e.g. from the store once per page run): {assignment: {student: due}}."""

    by_assignment: Mapping[str, Mapping[str, datetime]]

    def extensions(self, assignment_id: str) -> Mapping[str, datetime]:
        return self.by_assignment.get(assignment_id, {})


def student_due_next(
    assignments: Sequence[Assignment], keys: Sequence[str], extensions: ExtensionSource | None, now: datetime
) -> tuple[Assignment | None, datetime | None]:
    """The assignment due soonest after ``now`` at this student's own due dates, and that date."""
    dues = [(student_due(item, keys, extensions), item) for item in assignments]
    upcoming = [(due, item) for due, item in dues if due is not None and due >= now]
    if not upcoming:
        return None, None
    due, item = min(upcoming, key=lambda pair: pair[0])
    return item, due
