"""The course's lessons, their text and their quick checks, loaded from ``poslab/content``.

``LESSONS`` is the one list of lessons: ids, titles, order and quick-check ids. Lesson text is
Markdown kept in ``content/lessons/<id>.toml`` under ``[text]``, so pages stay thin and prose stays
out of code.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CONTENT_DIR = Path(__file__).parent / "content"


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    feedback: str  # why this answer is right, or the misconception behind it


@dataclass(frozen=True)
class QuickCheck:
    id: str
    question: str
    options: tuple[Option, ...]

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    icon: str
    group: str
    order: int
    text: dict[str, str]
    checks: tuple[QuickCheck, ...]
    exercise: str | None = None  # the exercise that practises this lesson, if one does

    @property
    def check_ids(self) -> tuple[str, ...]:
        return tuple(check.id for check in self.checks)

    @property
    def page_path(self) -> str:
        """The page script, relative to the project root: ``app_pages/<id with underscores>.py``."""
        return f"app_pages/{self.id.replace('-', '_')}.py"


def _load_check(raw: dict, lesson_id: str) -> QuickCheck:
    options = tuple(Option(o["text"], bool(o.get("correct", False)), o["feedback"]) for o in raw["options"])
    if sum(option.correct for option in options) != 1:
        raise ValueError(f"quick check {lesson_id}/{raw['id']} must have exactly one correct option")
    return QuickCheck(raw["id"], raw["question"], options)


def _load_lesson(raw: dict, order: int) -> Lesson:
    path = CONTENT_DIR / "lessons" / f"{raw['id']}.toml"
    body = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    checks = tuple(_load_check(check, raw["id"]) for check in body.get("checks", []))
    if len({check.id for check in checks}) != len(checks):
        raise ValueError(f"lesson {raw['id']} repeats a quick-check id")
    return Lesson(
        raw["id"], raw["title"], raw["icon"], raw["group"], order, body.get("text", {}), checks, raw.get("exercise")
    )


@cache
def _course() -> tuple[Lesson, ...]:
    raw = tomllib.loads((CONTENT_DIR / "course.toml").read_text(encoding="utf-8"))
    return tuple(_load_lesson(entry, order) for order, entry in enumerate(raw["lessons"]))


def all_lessons() -> tuple[Lesson, ...]:
    return _course()


def lesson_ids() -> tuple[str, ...]:
    return tuple(lesson.id for lesson in _course())


def get_lesson(lesson_id: str) -> Lesson:
    for lesson in _course():
        if lesson.id == lesson_id:
            return lesson
    raise KeyError(f"unknown lesson {lesson_id!r}; known: {', '.join(lesson_ids())}")


def lesson_text(lesson_id: str, key: str) -> str:
    """One Markdown block of a lesson; a missing block is a content bug, so it raises."""
    text = get_lesson(lesson_id).text
    if key not in text:
        raise KeyError(f"lesson {lesson_id!r} has no text block {key!r}; it has {sorted(text)}")
    return text[key]


def neighbours(lesson_id: str) -> tuple[Lesson | None, Lesson | None]:
    """The previous and next lesson in course order (None at either end)."""
    lessons = _course()
    index = lessons.index(get_lesson(lesson_id))
    previous = lessons[index - 1] if index > 0 else None
    following = lessons[index + 1] if index + 1 < len(lessons) else None
    return previous, following
