"""The map of the course shown on the home page: lessons in order, grouped, with one line each.

The lesson list comes from ``poslab.lessons`` (the registry); the one-line summaries and the home
page's text come from ``content/home.toml``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from poslab.lessons import CONTENT_DIR, all_lessons


@dataclass(frozen=True)
class Stop:
    number: int  # 1-based position in the course
    lesson_id: str
    title: str
    icon: str
    group: str
    page_path: str
    summary: str  # "" when home.toml has no line for the lesson

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}"


@cache
def _home() -> dict:
    return tomllib.loads((CONTENT_DIR / "home.toml").read_text(encoding="utf-8"))


def home_text(key: str) -> str:
    text = _home()["text"]
    if key not in text:
        raise KeyError(f"home.toml has no text block {key!r}; it has {sorted(text)}")
    return text[key]


def course_map() -> tuple[tuple[str, tuple[Stop, ...]], ...]:
    """((group, stops), ...) in course order; a group appears where its first lesson does."""
    summaries = _home().get("summaries", {})
    groups: dict[str, list[Stop]] = {}
    for number, lesson in enumerate(all_lessons(), start=1):
        groups.setdefault(lesson.group, []).append(
            Stop(
                number,
                lesson.id,
                lesson.title,
                lesson.icon,
                lesson.group,
                lesson.page_path,
                summaries.get(lesson.id, ""),
            )
        )
    return tuple((group, tuple(stops)) for group, stops in groups.items())
