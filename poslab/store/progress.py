"""Progress computed from stored events: pure functions, no database.

The rules live here: a lesson is done when marked done or when each of its quick checks has been
answered right at some point; an exercise's grade is its best hidden-suite score, or the score an
instructor set by hand (an override wins); the overall
percentage counts every lesson and every exercise equally.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from .catalogue import Catalogue
from .results import ExerciseProgress, LessonProgress, StudentProgress


@dataclass(frozen=True)
class ScoredAttempt:
    exercise: str
    score: float
    max_score: float
    public_tests_only: bool


@dataclass
class StudentActivity:
    """One student's events, gathered from the tables before progress is worked out."""

    visited: set[str] = field(default_factory=set)
    marked_done: set[str] = field(default_factory=set)
    right_checks: set[tuple[str, str]] = field(default_factory=set)  # (lesson, check id)
    hint_tiers: dict[str, set[int]] = field(default_factory=dict)
    attempts: list[ScoredAttempt] = field(default_factory=list)
    overrides: dict[str, tuple[float, float]] = field(default_factory=dict)  # exercise -> (score, max) set by hand
    last_active: datetime | None = None

    def saw(self, time: datetime | None) -> None:
        if time is not None and (self.last_active is None or time > self.last_active):
            self.last_active = time


def lesson_progress(lesson_id: str, check_ids: tuple[str, ...], activity: StudentActivity) -> LessonProgress:
    right = tuple(check for check in check_ids if (lesson_id, check) in activity.right_checks)
    marked = lesson_id in activity.marked_done
    # A lesson without checks cannot be finished by answering; only marking counts for it.
    all_checks_right = bool(check_ids) and len(right) == len(check_ids)
    return LessonProgress(
        lesson=lesson_id,
        visited=lesson_id in activity.visited,
        checks_right=right,
        checks_total=len(check_ids),
        marked_done=marked,
        done=marked or all_checks_right,
    )


def _best(attempts: list[ScoredAttempt]) -> tuple[float | None, float | None]:
    """Score and maximum of the attempt with the highest fraction (a larger maximum breaks ties)."""
    if not attempts:
        return None, None
    best = max(attempts, key=lambda attempt: (attempt.score / attempt.max_score, attempt.max_score))
    return best.score, best.max_score


def exercise_progress(exercise_id: str, activity: StudentActivity) -> ExerciseProgress:
    mine = [attempt for attempt in activity.attempts if attempt.exercise == exercise_id]
    graded = [attempt for attempt in mine if not attempt.public_tests_only]
    public = [attempt for attempt in mine if attempt.public_tests_only]
    best_score, max_score = _best(graded)
    best_public, public_max = _best(public)
    overridden = exercise_id in activity.overrides
    if overridden:
        best_score, max_score = activity.overrides[exercise_id]
    return ExerciseProgress(
        exercise=exercise_id,
        attempts=len(mine),
        graded_attempts=len(graded),
        best_score=best_score,
        max_score=max_score,
        best_public_score=best_public,
        public_max_score=public_max,
        hints_used=len(activity.hint_tiers.get(exercise_id, ())),
        overridden=overridden,
    )


def student_progress(student: str, activity: StudentActivity, catalogue: Catalogue) -> StudentProgress:
    lessons = tuple(lesson_progress(lesson_id, checks, activity) for lesson_id, checks in catalogue.lessons)
    exercises = tuple(exercise_progress(exercise_id, activity) for exercise_id in catalogue.exercises)
    items = len(lessons) + len(exercises)
    earned = sum(lesson.done for lesson in lessons) + sum(exercise.best_fraction for exercise in exercises)
    percent = 100.0 * earned / items if items else 0.0
    return StudentProgress(student, lessons, exercises, percent, activity.last_active)


def class_table(progresses: list[StudentProgress], catalogue: Catalogue) -> pd.DataFrame:
    """One row per student, sorted by name; ``grade:<exercise>`` is the best hidden-suite fraction."""
    grade_columns = [f"grade:{exercise_id}" for exercise_id in catalogue.exercises]
    columns = [
        "student", "percent", "lessons_visited", "lessons_done", "lessons_total",
        "exercises_attempted", "exercises_graded", "hints_used", "last_active", "overridden", *grade_columns,
    ]  # fmt: skip
    rows = [_class_row(progress) for progress in sorted(progresses, key=lambda item: item.student)]
    table = pd.DataFrame(rows, columns=columns)
    table["last_active"] = pd.to_datetime(table["last_active"], utc=True)
    return table


def _class_row(progress: StudentProgress) -> dict[str, object]:
    row: dict[str, object] = {
        "student": progress.student,
        "percent": progress.percent,
        "lessons_visited": sum(lesson.visited for lesson in progress.lessons),
        "lessons_done": progress.lessons_done,
        "lessons_total": len(progress.lessons),
        "exercises_attempted": sum(exercise.attempts > 0 for exercise in progress.exercises),
        "exercises_graded": sum(exercise.graded_attempts > 0 for exercise in progress.exercises),
        "hints_used": sum(exercise.hints_used for exercise in progress.exercises),
        "last_active": progress.last_active,
        "overridden": ", ".join(exercise.exercise for exercise in progress.exercises if exercise.overridden),
    }
    for exercise in progress.exercises:
        counted = exercise.graded_attempts or exercise.overridden
        row[f"grade:{exercise.exercise}"] = exercise.best_fraction if counted else float("nan")
    return row
