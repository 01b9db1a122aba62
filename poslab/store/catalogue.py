"""The ids the store accepts: lessons (with their quick-check ids, in course order) and exercises.

By default they are read from ``poslab.lessons`` and ``poslab.exercises`` each time they are
needed, so a quick check added to the course counts without touching the store. Tests and
instructors' scripts may pass their own ``Catalogue``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Catalogue:
    lessons: tuple[tuple[str, tuple[str, ...]], ...]  # (lesson id, its quick-check ids), course order
    exercises: tuple[str, ...]

    @classmethod
    def from_course(cls) -> Catalogue:
        # Imported here so that a content error surfaces when the store is used, with its own message.
        from poslab.exercises import EXERCISE_IDS
        from poslab.lessons import all_lessons

        return cls(tuple((lesson.id, lesson.check_ids) for lesson in all_lessons()), EXERCISE_IDS)

    @property
    def lesson_ids(self) -> tuple[str, ...]:
        return tuple(lesson_id for lesson_id, _ in self.lessons)

    def check_ids(self, lesson_id: str) -> tuple[str, ...]:
        for known_id, check_ids in self.lessons:
            if known_id == lesson_id:
                return check_ids
        raise ValueError(f"unknown lesson {lesson_id!r}; known lessons: {', '.join(self.lesson_ids)}")

    def require_lesson(self, lesson_id: object) -> str:
        if not isinstance(lesson_id, str) or lesson_id not in self.lesson_ids:
            raise ValueError(f"unknown lesson {lesson_id!r}; known lessons: {', '.join(self.lesson_ids)}")
        return lesson_id

    def require_check(self, lesson_id: str, check_id: object) -> str:
        known = self.check_ids(lesson_id)
        if not isinstance(check_id, str) or check_id not in known:
            choices = ", ".join(known) if known else "none (this lesson has no quick checks)"
            raise ValueError(f"unknown quick check {check_id!r} for lesson {lesson_id!r}; known: {choices}")
        return check_id

    def require_exercise(self, exercise_id: object) -> str:
        if not isinstance(exercise_id, str) or exercise_id not in self.exercises:
            raise ValueError(f"unknown exercise {exercise_id!r}; known exercises: {', '.join(self.exercises)}")
        return exercise_id
