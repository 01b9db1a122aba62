"""The audit log: one row per action taken on the class (``poslab.vocabulary.AuditAction``): who,
when (UTC), what, on whom, and the reason where one was given. Rows are written once, never
updated, in the transaction of the action itself (``record_action``), so an action and its row are
kept together or not at all. ``checked_actor`` checks the actor's role (``poslab.roles.require``)
before any transaction opens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.roles import Actor, require
from poslab.vocabulary import AuditAction

from .columns import UtcDateTime, metadata
from .validation import MAX_NAME_CHARS

MAX_TARGET_CHARS = 255
MAX_DETAIL_CHARS = 2_000
MAX_REASON_CHARS = 2_000

audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", UtcDateTime, nullable=False, index=True),
    sa.Column("actor", sa.String(MAX_NAME_CHARS), nullable=False),
    sa.Column("role", sa.String(16), nullable=True),  # a poslab.roles.Role; None: a script
    sa.Column("action", sa.String(32), nullable=False),  # an AuditAction
    sa.Column("target", sa.String(MAX_TARGET_CHARS), nullable=False),  # whom or what: keys, an exercise
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
)


@dataclass(frozen=True)
class Who:
    """An actor checked for one action: the name and role its row records."""

    name: str
    role: str | None


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    actor: str
    role: str | None
    action: AuditAction
    target: str
    detail: str
    reason: str | None


def checked_actor(actor: Actor | str | None, action: AuditAction) -> Who:
    """``actor`` may do ``action`` (else ``poslab.roles.ActionRefused``): whom to record."""
    name = require(actor, action)[:MAX_NAME_CHARS]
    return Who(name, actor.role.value if isinstance(actor, Actor) else None)


def record_action(
    conn: Connection,
    who: Who,
    action: AuditAction,
    target: str,
    detail: str = "",
    reason: str | None = None,
) -> None:
    """One row of the log, in the caller's transaction."""
    conn.execute(
        sa.insert(audit_log).values(
            at=datetime.now(UTC),
            actor=who.name,
            role=who.role,
            action=AuditAction(action).value,
            target=target[:MAX_TARGET_CHARS],
            detail=detail[:MAX_DETAIL_CHARS],
            reason=None if reason is None else reason[:MAX_REASON_CHARS],
        )
    )


def keys_target(keys: set[str] | list[str]) -> str:
    """Whom an action on several students names: the keys, sorted, shortened with a count."""
    ordered = sorted(keys)
    shown = ", ".join(ordered[:10])
    return shown + (f" and {len(ordered) - 10} more" if len(ordered) > 10 else "")


class AuditMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` are the store's transactions."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    def log_action(
        self,
        action: AuditAction,
        target: str,
        detail: str = "",
        *,
        actor: Actor | str | None = None,
        reason: str | None = None,
    ) -> None:
        """One row for an action that has no store method of its own (a regrade's summary, an
        export); ``poslab.roles.ActionRefused`` when the actor's role does not allow it."""
        who = checked_actor(actor, AuditAction(action))
        self._write(lambda conn: record_action(conn, who, action, target, detail, reason))

    def record_export(self, what: str, detail: str = "", *, actor: Actor | str | None = None) -> None:
        """Log that ``what`` (the class's code, its grades) was taken out of the app: instructors only."""
        self.log_action(AuditAction.EXPORT, what, detail, actor=actor)

    def audit_entries(self, limit: int = 500) -> tuple[AuditEntry, ...]:
        """The log, newest first (at most ``limit`` rows)."""
        table = audit_log
        query = sa.select(table).order_by(table.c.at.desc(), table.c.id.desc()).limit(limit)
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(
            AuditEntry(row.id, row.at, row.actor, row.role, AuditAction(row.action), row.target, row.detail, row.reason)
            for row in rows
        )
