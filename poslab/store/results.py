"""What the store returns: frozen dataclasses; ``StudentProgress`` round-trips through JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from poslab.vocabulary import AttemptKind


@dataclass(frozen=True)
class LessonProgress:
    lesson: str
    visited: bool
    checks_right: tuple[str, ...]  # quick checks answered right at some point, in lesson order
    checks_total: int
    marked_done: bool
    done: bool  # marked done, or every quick check answered right (a lesson needs checks for that)


@dataclass(frozen=True)
class ExerciseProgress:
    exercise: str
    attempts: int  # every attempt, hidden suite and public tests alike
    graded_attempts: int  # attempts judged by the hidden suite
    best_score: float | None  # best hidden-suite score: the grade (None: never graded)
    max_score: float | None  # the maximum of that best attempt
    best_public_score: float | None  # best public-tests-only score: feedback, not a grade
    public_max_score: float | None
    hints_used: int  # distinct hint tiers revealed
    overridden: bool = False  # best_score is a score set by hand (``Store.set_override``)

    @property
    def best_fraction(self) -> float:
        """The grade as a fraction of its maximum; 0 when never graded."""
        return self.best_score / self.max_score if self.best_score is not None and self.max_score else 0.0


@dataclass(frozen=True)
class StudentProgress:
    student: str
    lessons: tuple[LessonProgress, ...]  # course order
    exercises: tuple[ExerciseProgress, ...]
    percent: float  # lessons done and exercise grades, each counting equally, 0 to 100
    last_active: datetime | None

    @property
    def lessons_done(self) -> int:
        return sum(lesson.done for lesson in self.lessons)

    def lesson(self, lesson_id: str) -> LessonProgress:
        return next(item for item in self.lessons if item.lesson == lesson_id)

    def exercise(self, exercise_id: str) -> ExerciseProgress:
        return next(item for item in self.exercises if item.exercise == exercise_id)

    def to_json(self) -> str:
        data = asdict(self)
        data["last_active"] = self.last_active.isoformat() if self.last_active else None
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> StudentProgress:
        data: dict[str, Any] = json.loads(text)
        return cls(
            student=data["student"],
            lessons=tuple(
                LessonProgress(**{**item, "checks_right": tuple(item["checks_right"])}) for item in data["lessons"]
            ),
            exercises=tuple(ExerciseProgress(**item) for item in data["exercises"]),
            percent=data["percent"],
            last_active=datetime.fromisoformat(data["last_active"]) if data["last_active"] else None,
        )


@dataclass(frozen=True)
class Comment:
    id: int
    student: str
    lesson: str
    text: str
    time: datetime


@dataclass(frozen=True)
class Attempt:
    """One exercise's grading as kept: handed in (a submission) or a practice run (see ``kind``)."""

    id: int
    student: str
    exercise: str
    time: datetime
    score: float
    max_score: float
    public_tests_only: bool
    details: Any  # the grader's JSON-able result, as given
    code: str | None
    kind: AttemptKind = AttemptKind.SUBMISSION
    regrade_of: int | None = None  # the attempt this regrade superseded (kept, of kind SUPERSEDED)

    @property
    def result(self) -> Any:
        """``details``, by the name a practice run's result had."""
        return self.details


PracticeRun = Attempt  # a practice run is an attempt of kind PRACTICE (the store's name for it before)
