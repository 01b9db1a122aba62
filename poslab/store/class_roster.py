"""The class's roster in the store: replaced as a whole (a student left off loses their links and
sign-ins, never their work), removed, and listed with each student's live link. Replacing it is
in the audit log, in the same transaction. ``RosterMixin`` is mixed into ``Store``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.roles import Actor
from poslab.vocabulary import AuditAction

from . import signin_links as links
from .audit import checked_actor, record_action
from .columns import ID_CHARS
from .signin_schema import MAX_EMAIL_CHARS, MAX_SECTION_CHARS, roster_students, signin_links
from .validation import MAX_NAME_CHARS, clean_student


def _now() -> datetime:
    return datetime.now(UTC)


class RosterEntry(Protocol):
    """A roster's student as ``poslab.roster.RosterStudent`` gives it."""

    name: str
    email: str
    lms_id: str
    section: str
    key: str


@dataclass(frozen=True)
class RosterMember:
    key: str
    name: str
    email: str
    lms_id: str
    section: str
    link_expires: datetime | None  # the student's live link (not revoked, not expired), if any
    link_used: datetime | None  # when that link last signed a browser in


@dataclass(frozen=True)
class RosterChange:
    added: int
    removed: int  # their links are revoked and their sign-ins ended; their work stays in the store
    kept: int


class RosterMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` are the store's transactions."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    # -- the roster ------------------------------------------------------------------------------

    def replace_roster(self, students: Iterable[RosterEntry], *, actor: Actor | str | None = None) -> RosterChange:
        """Make ``students`` the roster; a student no longer on it loses their links and sign-ins."""
        who, rows = checked_actor(actor, AuditAction.ROSTER), {}
        for student in students:
            key = clean_student(student.key)
            rows[key] = {
                "key": key,
                "name": (student.name.strip() or key)[:MAX_NAME_CHARS],
                "email": student.email[:MAX_EMAIL_CHARS],
                "lms_id": student.lms_id[:ID_CHARS],
                "section": student.section[:MAX_SECTION_CHARS],
            }
        now = _now()

        def replace(conn: Connection) -> RosterChange:
            before = set(conn.execute(sa.select(roster_students.c.key)).scalars())
            removed = before - set(rows)
            links.withdraw(conn, removed, now)
            conn.execute(sa.delete(roster_students))
            if rows:
                conn.execute(sa.insert(roster_students), [{**row, "added_at": now} for row in rows.values()])
            change = RosterChange(len(set(rows) - before), len(removed), len(before & set(rows)))
            detail = f"{len(rows)} students: {change.added} added, {change.kept} kept, {change.removed} removed"
            record_action(conn, who, AuditAction.ROSTER, "the roster" if rows else "the roster (removed)", detail)
            return change

        return self._write(replace)

    def clear_roster(self, *, actor: Actor | str | None = None) -> RosterChange:
        """No roster: back to typed names; every link is revoked and every sign-in ended."""
        return self.replace_roster((), actor=actor)

    def roster_members(self) -> tuple[RosterMember, ...]:
        """The roster by name, each with their live link's expiry and last use."""
        now = _now()
        live = (
            sa.select(
                signin_links.c.student,
                sa.func.max(signin_links.c.expires_at).label("expires"),
                sa.func.max(signin_links.c.last_used_at).label("used"),
            )
            .where(signin_links.c.revoked_at.is_(None), signin_links.c.expires_at > now)
            .group_by(signin_links.c.student)
            .subquery()
        )
        query = (
            sa.select(roster_students, live.c.expires, live.c.used)
            .join(live, live.c.student == roster_students.c.key, isouter=True)
            .order_by(roster_students.c.name, roster_students.c.key)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(
            RosterMember(row.key, row.name, row.email, row.lms_id, row.section, row.expires, row.used) for row in rows
        )
