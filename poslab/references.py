"""The reading list of the links page: primary sources and explanations, filterable.

The entries live in ``content/lessons/links.toml`` under ``[[links]]``; this module loads them once
and filters them by kind ("paper" / "explanation") and by the lesson they belong to.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from poslab.lessons import CONTENT_DIR, get_lesson, lesson_ids

KINDS = ("paper", "explanation")


@dataclass(frozen=True)
class Reading:
    title: str
    authors: str
    year: int
    kind: str
    url: str
    topics: tuple[str, ...]  # lesson ids
    read_for: str

    @property
    def markdown(self) -> str:
        """One list item: linked title, who and when, and what to read it for."""
        return f"- **[{self.title}]({self.url})**, {self.authors}, {self.year}.  \n  *Read it for:* {self.read_for}"


@cache
def readings() -> tuple[Reading, ...]:
    raw = tomllib.loads((CONTENT_DIR / "lessons" / "links.toml").read_text(encoding="utf-8"))
    entries = tuple(Reading(**{**entry, "topics": tuple(entry["topics"])}) for entry in raw["links"])
    for entry in entries:
        if entry.kind not in KINDS:
            raise ValueError(f"link {entry.title!r} has kind {entry.kind!r}; expected one of {KINDS}")
        for topic in entry.topics:
            get_lesson(topic)  # an unknown lesson id is a content bug: KeyError names it
    return entries


def topics() -> tuple[str, ...]:
    """Lesson ids that have at least one reading, in course order."""
    used = {topic for entry in readings() for topic in entry.topics}
    return tuple(lesson_id for lesson_id in lesson_ids() if lesson_id in used)


def select_readings(kind: str | None = None, topic: str | None = None) -> tuple[Reading, ...]:
    """Readings of one kind and/or one lesson (None: any); papers first, each group by year."""
    chosen = [
        entry
        for entry in readings()
        if (kind is None or entry.kind == kind) and (topic is None or topic in entry.topics)
    ]
    return tuple(sorted(chosen, key=lambda entry: (KINDS.index(entry.kind), entry.year)))
