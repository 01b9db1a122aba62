"""Regrades kept in the store: a stored submission graded again, by today's suite.

The new grading is an attempt of its own (a submission, at the original's hand-in time, so a
deadline counts it as the original was counted) whose ``regrade_of`` names the original; the
original becomes ``SUPERSEDED`` in the same transaction and keeps its score, as history. That
update names the kind it expects: of two regrades of one attempt at once, one is kept. A changed
score is one row of the audit log. ``grader.regrade`` does the grading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.roles import Actor
from poslab.vocabulary import AttemptKind, AuditAction

from . import schema
from .attempts import AttemptToRecord, _attempt, checked_attempt, insert_attempt
from .audit import checked_actor, record_action
from .results import Attempt
from .validation import clean_student, require_id


class RegradesMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` and ``catalogue`` are the store's."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    def record_regrade(
        self, original_id: int, attempt: AttemptToRecord, *, actor: Actor | str | None = None
    ) -> int | None:
        """Keep ``attempt`` as the regrade of submission ``original_id``; its id, or None when that
        submission is no longer the current one (another regrade came first)."""
        original_id = require_id(original_id, "attempt id")
        who = checked_actor(actor, AuditAction.REGRADE)
        checked = checked_attempt(attempt, AttemptKind.SUBMISSION, self.catalogue)
        table = schema.attempts

        def regrade(conn: Connection) -> int | None:
            old = conn.execute(sa.select(table).where(table.c.id == original_id)).first()
            if old is None:
                raise KeyError(f"no attempt with id {original_id}")
            if old.exercise != checked.values["exercise"] or old.public_tests_only:
                raise ValueError(f"attempt {original_id} is not a hidden-suite submission of {attempt.exercise}")
            superseded = conn.execute(
                sa.update(table)
                .where(table.c.id == original_id, table.c.kind == AttemptKind.SUBMISSION)
                .values(kind=AttemptKind.SUPERSEDED)
            ).rowcount
            if not superseded:
                return None
            new_id = insert_attempt(conn, old.student, checked, old.at, regrade_of=original_id)
            new_score, new_max = checked.values["score"], checked.values["max_score"]
            if (new_score, new_max) != (old.score, old.max_score):
                change = f"{old.exercise}: {old.score:g}/{old.max_score:g} -> {new_score:g}/{new_max:g}"
                record_action(conn, who, AuditAction.REGRADE, old.student, f"{change} (attempt {original_id})")
            return new_id

        return self._write(regrade)

    def attempt_history(self, student: str, exercise: str | None = None) -> tuple[Attempt, ...]:
        """A student's submissions with the ones regrades superseded, oldest first (a regrade right
        after the attempt it replaced)."""
        table = schema.attempts
        kinds = (AttemptKind.SUBMISSION, AttemptKind.SUPERSEDED)
        query = (
            sa.select(table)
            .where(table.c.kind.in_(kinds), table.c.student == clean_student(student))
            .order_by(table.c.at, sa.func.coalesce(table.c.regrade_of, table.c.id), table.c.id)
        )
        if exercise is not None:
            query = query.where(table.c.exercise == self.catalogue.require_exercise(exercise))
        return tuple(_attempt(row) for row in self._read(lambda conn: conn.execute(query).all()))
