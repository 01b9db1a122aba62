"""Scores set by hand: one row per student and exercise, the score an instructor gave and why.

An override wins over the attempts wherever the exercise's grade is counted (progress, the class
table, an assignment's grade, the grades sent to the LMS) and is shown as overridden. Setting one
again replaces it; clearing it gives the attempts back their say. Both are in the audit log, in
the same transaction. A reason is required: an override without one is refused.
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

from .audit import MAX_REASON_CHARS, checked_actor, record_action
from .columns import ID_CHARS, UtcDateTime, metadata
from .validation import MAX_NAME_CHARS, clean_score, clean_student

score_overrides = sa.Table(
    "score_overrides",
    metadata,
    sa.Column("student", sa.String(MAX_NAME_CHARS), primary_key=True),
    sa.Column("exercise", sa.String(ID_CHARS), primary_key=True),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("set_by", sa.String(MAX_NAME_CHARS), nullable=False),
    sa.Column("set_at", UtcDateTime, nullable=False),
    sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="override_in_range"),
)


@dataclass(frozen=True)
class ScoreOverride:
    student: str
    exercise: str
    score: float
    max_score: float
    reason: str
    set_by: str
    set_at: datetime

    @property
    def fraction(self) -> float:
        return self.score / self.max_score


def clean_reason(reason: object) -> str:
    """The reason, trimmed; ``ValueError`` says why an empty or overlong one is refused."""
    text = " ".join(reason.split()) if isinstance(reason, str) else ""
    if not text:
        raise ValueError("An override needs a reason: say why the score is set by hand (it is kept in the audit log).")
    if len(text) > MAX_REASON_CHARS:
        raise ValueError(f"The reason has {len(text):,} characters; please use at most {MAX_REASON_CHARS:,}.")
    return text


def read_overrides(conn: Connection, student: str | None = None) -> list[ScoreOverride]:
    query = sa.select(score_overrides).order_by(score_overrides.c.student, score_overrides.c.exercise)
    if student is not None:
        query = query.where(score_overrides.c.student == student)
    return [ScoreOverride(*row) for row in conn.execute(query)]


class OverridesMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` and ``catalogue`` are the store's."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    def set_override(
        self,
        student: str,
        exercise: str,
        score: float,
        max_score: float,
        reason: str,
        *,
        actor: Actor | str | None = None,
    ) -> None:
        """Set ``student``'s score in ``exercise`` by hand (replacing an earlier override)."""
        student, exercise = clean_student(student), self.catalogue.require_exercise(exercise)
        score, max_score = clean_score(score, max_score)
        reason = clean_reason(reason)
        who = checked_actor(actor, AuditAction.OVERRIDE)
        row = dict(student=student, exercise=exercise, score=score, max_score=max_score, reason=reason)
        mine = (score_overrides.c.student == student) & (score_overrides.c.exercise == exercise)

        def put(conn: Connection) -> None:
            conn.execute(sa.delete(score_overrides).where(mine))
            conn.execute(sa.insert(score_overrides).values(**row, set_by=who.name, set_at=datetime.now(UTC)))
            record_action(conn, who, AuditAction.OVERRIDE, student, f"{exercise}: {score:g}/{max_score:g}", reason)

        self._write(put)

    def clear_override(self, student: str, exercise: str, *, actor: Actor | str | None = None) -> bool:
        """Give the attempts back their say; whether there was an override."""
        student, exercise = clean_student(student), self.catalogue.require_exercise(exercise)
        who = checked_actor(actor, AuditAction.CLEAR_OVERRIDE)
        mine = (score_overrides.c.student == student) & (score_overrides.c.exercise == exercise)

        def clear(conn: Connection) -> bool:
            if not conn.execute(sa.delete(score_overrides).where(mine)).rowcount:
                return False
            record_action(conn, who, AuditAction.CLEAR_OVERRIDE, student, exercise)
            return True

        return bool(self._write(clear))

    def overrides(self, student: str | None = None) -> tuple[ScoreOverride, ...]:
        """The scores set by hand (one student's, or everyone's), by student and exercise."""
        student = None if student is None else clean_student(student)
        return tuple(self._read(lambda conn: read_overrides(conn, student)))

    def override_fractions(self) -> Mapping[str, Mapping[str, float]]:
        """{student: {exercise: fraction}}: what ``poslab.course_grades.class_grades`` counts instead."""
        found: dict[str, dict[str, float]] = {}
        for item in self.overrides():
            found.setdefault(item.student, {})[item.exercise] = item.fraction
        return found
