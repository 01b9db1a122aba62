"""Reads for the Instructor page: the class's graded attempts without their code, and one
student's drafts. ``ClassQueriesMixin`` is mixed into ``Store`` (it provides ``_read``, ``catalogue``)."""

from __future__ import annotations

import json

import sqlalchemy as sa

from poslab.vocabulary import AttemptKind

from . import schema
from .results import Attempt
from .validation import clean_student
from .workspace import Draft, _draft


class ClassQueriesMixin:
    def graded_submissions(self) -> tuple[Attempt, ...]:
        """Every hidden-suite submission of the class, oldest first, with the grader's details but
        without the code (``code`` is None): what pass rates by student are counted from."""
        table = schema.attempts
        columns = [column for column in table.c if column.name != "code"]
        query = (
            sa.select(*columns)
            .where(table.c.kind == AttemptKind.SUBMISSION, table.c.public_tests_only.is_(False))
            .order_by(table.c.at, table.c.id)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(
            Attempt(
                id=row.id,
                student=row.student,
                exercise=row.exercise,
                time=row.at,
                score=row.score,
                max_score=row.max_score,
                public_tests_only=row.public_tests_only,
                details=None if row.details is None else json.loads(row.details),
                code=None,
            )
            for row in rows
        )

    def drafts(self, student: str) -> tuple[Draft, ...]:
        """The student's saved drafts, one per exercise they typed in, in course order."""
        table = schema.drafts
        query = sa.select(table).where(table.c.student == clean_student(student))
        found = {row.exercise: _draft(row) for row in self._read(lambda conn: conn.execute(query).all())}
        return tuple(found[exercise] for exercise in self.catalogue.exercises if exercise in found)
