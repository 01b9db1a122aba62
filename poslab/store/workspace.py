"""The student's workspace in the store: drafts and quick-check choices.

A draft is what the editor on the Exercises page holds, one per student and exercise, saved as
the student types. Each save counts a revision and names the browser session (tab) that made it,
so a tab whose view is older than the stored draft can say so. A save that started from an older
revision than another tab's newer save is held back (``overwrite_newer=False``, what the page
asks) so that the student chooses before anything is replaced, or goes through and reports what
it replaced (``DraftSaved``).

A check choice is the option a quick-check answer chose, so a reloaded lesson shows the answer
and its feedback again. (A run of the public tests on a draft, a practice run, is an attempt of
its own kind: ``attempts``.)

``WorkspaceMixin`` is mixed into ``Store``; it uses the store's transactions and validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from . import schema
from .validation import clean_code, clean_student, require_id

MAX_SESSION_CHARS = schema.ID_CHARS


@dataclass(frozen=True)
class Draft:
    student: str
    exercise: str
    code: str
    revision: int  # 1 for the first save, one more for each save after it
    saved_at: datetime
    saved_by: str  # the browser session that saved it


@dataclass(frozen=True)
class DraftSaved:
    draft: Draft  # the stored draft after the call: this save's, or the newer one it was held back by
    replaced: Draft | None  # another session's save newer than the one this save started from
    held_back: bool = False  # nothing written: another session saved since this one's base revision


def _now() -> datetime:
    return datetime.now(UTC)


def _session(saved_by: object) -> str:
    if not isinstance(saved_by, str) or not 0 < len(saved_by) <= MAX_SESSION_CHARS:
        raise ValueError(f"a session id is 1 to {MAX_SESSION_CHARS} characters, got {saved_by!r}")
    return saved_by


def _draft(row: Any) -> Draft:
    return Draft(row.student, row.exercise, row.code, row.revision, row.saved_at, row.saved_by)


class WorkspaceMixin:
    """Store methods of the Exercises page's workspace (``Store`` provides ``_read``, ``_write``, ``catalogue``)."""

    # -- drafts -----------------------------------------------------------------------------------

    def draft(self, student: str, exercise: str) -> Draft | None:
        """The student's saved draft of this exercise, or None if they never typed in it."""
        student, exercise = clean_student(student), self.catalogue.require_exercise(exercise)
        table = schema.drafts
        query = sa.select(table).where(table.c.student == student, table.c.exercise == exercise)
        row = self._read(lambda conn: conn.execute(query).first())
        return None if row is None else _draft(row)

    def save_draft(
        self,
        student: str,
        exercise: str,
        code: str,
        *,
        saved_by: str,
        base_revision: int = 0,
        overwrite_newer: bool = True,
    ) -> DraftSaved:
        """Save the editor's text.

        ``base_revision``: the revision this session last loaded or saved (0: none). If another
        session saved after it, that draft is newer than what this session started from: with
        ``overwrite_newer`` it is overwritten and returned as ``replaced``; without, nothing is
        written and it is returned as ``draft``, with ``held_back`` set.
        """
        student, exercise = clean_student(student), self.catalogue.require_exercise(exercise)
        code = clean_code(code)
        if code is None:
            raise ValueError("a draft is text, not None")
        saved_by, base_revision = _session(saved_by), require_id(base_revision, "base revision")
        table = schema.drafts
        now = _now()
        mine = (table.c.student == student) & (table.c.exercise == exercise)

        def save(conn: Connection) -> DraftSaved:
            row = conn.execute(sa.select(table).where(mine)).first()
            before = None if row is None else _draft(row)
            newer = (
                before
                if before is not None
                and before.revision > base_revision
                and before.saved_by != saved_by
                and before.code != code  # the same text from two places is no conflict
                else None
            )
            if newer is not None and not overwrite_newer:
                return DraftSaved(newer, None, held_back=True)
            revision = 1 if before is None else before.revision + 1
            values = dict(code=code, revision=revision, saved_at=now, saved_by=saved_by)
            if before is None:
                conn.execute(sa.insert(table).values(student=student, exercise=exercise, **values))
            else:
                conn.execute(sa.update(table).where(mine).values(**values))
            return DraftSaved(Draft(student, exercise, code, revision, now, saved_by), newer)

        try:
            return self._write(save)
        except IntegrityError:  # another replica inserted the first draft between our read and insert
            return self._write(save)

    # -- quick-check choices -------------------------------------------------------------------------

    def record_check_choice(self, student: str, lesson: str, check_id: str, choice: int) -> None:
        """Which option an answer to a quick check chose (``record_check`` keeps whether it was right)."""
        student = clean_student(student)
        lesson = self.catalogue.require_lesson(lesson)
        check_id = self.catalogue.require_check(lesson, check_id)
        choice = require_id(choice, "choice")
        if choice < 0:
            raise ValueError(f"choice must be 0 or more, got {choice}")
        statement = sa.insert(schema.check_choices).values(
            student=student, lesson=lesson, check_id=check_id, choice=choice, at=_now()
        )
        self._write(lambda conn: conn.execute(statement))

    def check_choices(self, student: str, lesson: str) -> dict[str, int]:
        """The option of each quick check's latest answer in this lesson: {check id: option index}."""
        student, lesson = clean_student(student), self.catalogue.require_lesson(lesson)
        table = schema.check_choices
        query = (
            sa.select(table.c.check_id, table.c.choice)
            .where(table.c.student == student, table.c.lesson == lesson)
            .order_by(table.c.at, table.c.id)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return {row.check_id: row.choice for row in rows}  # later answers overwrite earlier ones
