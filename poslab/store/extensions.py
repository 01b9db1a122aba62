"""Per-student extensions set from the Instructor page: one row per assignment and student, the
student's own due date, who set it and when. ``Store.extensions(assignment_id)`` is an
``ExtensionSource`` (``poslab.assignments``), merged with the assignments file's by
``poslab.course_grades.merged_extensions``. Setting one again replaces it (the last word wins).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .columns import ID_CHARS, UtcDateTime, metadata
from .validation import MAX_NAME_CHARS, clean_student

MAX_SETTER_CHARS = 64

extensions_table = sa.Table(
    "extensions",
    metadata,
    sa.Column("assignment", sa.String(ID_CHARS), primary_key=True),
    sa.Column("student", sa.String(MAX_NAME_CHARS), primary_key=True),
    sa.Column("due", UtcDateTime, nullable=False),
    sa.Column("set_by", sa.String(MAX_SETTER_CHARS), nullable=False),  # "instructor", or who unlocked the page
    sa.Column("set_at", UtcDateTime, nullable=False),
)


@dataclass(frozen=True)
class GrantedExtension:
    assignment: str
    student: str
    due: datetime
    set_by: str
    set_at: datetime


def _assignment_id(value: str) -> str:
    value = str(value).strip()
    if not value or len(value) > ID_CHARS:
        raise ValueError(f"an assignment id must have 1 to {ID_CHARS} characters, not {value!r}")
    return value


class ExtensionsMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` are the store's transactions."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    def grant_extension(self, assignment: str, student: str, due: datetime, set_by: str = "instructor") -> None:
        """Give ``student`` their own due date for ``assignment`` (replacing one given before)."""
        assignment, student = _assignment_id(assignment), clean_student(student)
        if due.tzinfo is None:
            raise ValueError("an extension's due date needs a time zone")
        table, now = extensions_table, datetime.now(UTC)
        row = dict(assignment=assignment, student=student, due=due, set_by=set_by[:MAX_SETTER_CHARS], set_at=now)

        def grant(conn: Connection) -> None:
            mine = (table.c.assignment == assignment) & (table.c.student == student)
            conn.execute(sa.delete(table).where(mine))
            conn.execute(sa.insert(table).values(**row))

        self._write(grant)

    def withdraw_extension(self, assignment: str, student: str) -> bool:
        """Remove a student's extension; whether there was one."""
        table = extensions_table
        mine = (table.c.assignment == _assignment_id(assignment)) & (table.c.student == clean_student(student))
        return bool(self._write(lambda conn: conn.execute(sa.delete(table).where(mine)).rowcount))

    def granted_extensions(self, assignment: str | None = None) -> tuple[GrantedExtension, ...]:
        """The extensions set in the app (of one assignment, or all), by assignment and student."""
        table = extensions_table
        query = sa.select(table).order_by(table.c.assignment, table.c.student)
        if assignment is not None:
            query = query.where(table.c.assignment == _assignment_id(assignment))
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(GrantedExtension(row.assignment, row.student, row.due, row.set_by, row.set_at) for row in rows)

    def extensions(self, assignment_id: str) -> Mapping[str, datetime]:
        """{student key: their due date} for one assignment: an ``ExtensionSource``."""
        return {item.student: item.due for item in self.granted_extensions(assignment_id)}
