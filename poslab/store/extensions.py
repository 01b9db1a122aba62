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

from poslab.roles import Actor
from poslab.vocabulary import AuditAction

from .audit import checked_actor, record_action
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

    def grant_extension(
        self, assignment: str, student: str, due: datetime, set_by: Actor | str | None = "instructor"
    ) -> None:
        """Give ``student`` their own due date for ``assignment`` (replacing one given before);
        ``set_by``: who (an ``Actor`` is checked for the right to)."""
        assignment, student = _assignment_id(assignment), clean_student(student)
        if due.tzinfo is None:
            raise ValueError("an extension's due date needs a time zone")
        who = checked_actor(set_by, AuditAction.EXTENSION)
        table, now = extensions_table, datetime.now(UTC)
        row = dict(assignment=assignment, student=student, due=due, set_by=who.name[:MAX_SETTER_CHARS], set_at=now)

        def grant(conn: Connection) -> None:
            mine = (table.c.assignment == assignment) & (table.c.student == student)
            conn.execute(sa.delete(table).where(mine))
            conn.execute(sa.insert(table).values(**row))
            record_action(conn, who, AuditAction.EXTENSION, student, f"{assignment}: due {due.isoformat()}")

        self._write(grant)

    def withdraw_extension(self, assignment: str, student: str, *, actor: Actor | str | None = None) -> bool:
        """Remove a student's extension; whether there was one."""
        table, who = extensions_table, checked_actor(actor, AuditAction.WITHDRAW_EXTENSION)
        assignment, student = _assignment_id(assignment), clean_student(student)
        mine = (table.c.assignment == assignment) & (table.c.student == student)

        def withdraw(conn: Connection) -> bool:
            if not conn.execute(sa.delete(table).where(mine)).rowcount:
                return False
            record_action(conn, who, AuditAction.WITHDRAW_EXTENSION, student, assignment)
            return True

        return bool(self._write(withdraw))

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
