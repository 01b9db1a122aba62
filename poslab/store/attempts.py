"""Attempts: every grading of one exercise that is kept, handed in or practice, in one table of one shape.

An attempt is one exercise's share of a grading: the code, the score and its maximum, the
grader's result (``details``, kept as given and never read by the store) and one ``TestRow`` per
test that ran. Its ``kind`` says why it was kept (``poslab.vocabulary.AttemptKind``):

* ``SUBMISSION``: handed in for grading. It counts: progress, the grade (its best hidden-suite
  score) and the per-test pass rates. ``public_tests_only`` marks one judged by the public tests
  (a student bundle): feedback, never the grade.
* ``PRACTICE``: a run of the public tests on the draft ("practice runs"). Feedback kept for the
  student; it never counts anywhere.

* ``SUPERSEDED``: a submission a regrade replaced (``regrades.RegradesMixin``): kept, with its
  score, as history; the regrade's own attempt (a submission, at the same hand-in time) names it
  in ``regrade_of`` and counts instead.

``insert_attempt`` is the one place an attempt is written; ``Store.record_attempt``,
``Store.record_practice_runs``, ``Store.finish_grading_job`` and ``Store.record_regrade`` all call
it, after ``checked_attempt`` has checked the attempt outside the transaction.

``AttemptsMixin`` is mixed into ``Store``; it uses the store's transactions and validation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.vocabulary import AttemptKind

from . import schema
from .catalogue import Catalogue
from .pass_rates import TestRow, pass_rates
from .results import Attempt
from .validation import clean_code, clean_score, clean_student, clean_test_rows, details_to_json, require_bool

ATTEMPT_COLUMNS = ["id", "student", "exercise", "time", "score", "max_score", "fraction", "public_tests_only"]


@dataclass(frozen=True)
class AttemptToRecord:
    """One exercise's attempt as its writer hands it over (the grading service builds them)."""

    exercise: str
    score: float
    max_score: float
    details: Any
    code: str | None
    public_tests_only: bool
    tests: tuple[TestRow, ...] = ()  # one per test that ran, for the per-test pass rates


@dataclass(frozen=True)
class CheckedAttempt:
    """An attempt's row (but its student and time) and its per-test rows, checked."""

    values: dict
    test_rows: list[tuple[str, bool]]


def checked_attempt(attempt: AttemptToRecord, kind: AttemptKind, catalogue: Catalogue) -> CheckedAttempt:
    """Check an attempt before any transaction opens: a bad one raises ``ValueError`` and writes nothing."""
    kind = AttemptKind(kind)
    exercise = catalogue.require_exercise(attempt.exercise)
    score, max_score = clean_score(attempt.score, attempt.max_score)
    code = clean_code(attempt.code)
    if code is None and kind == AttemptKind.PRACTICE:
        raise ValueError("a practice run needs the code it ran")
    values = dict(
        exercise=exercise,
        score=score,
        max_score=max_score,
        kind=kind,
        code=code,
        public_tests_only=require_bool(attempt.public_tests_only, "public_tests_only"),
        details=details_to_json(attempt.details),
    )
    return CheckedAttempt(values, clean_test_rows(attempt.tests, exercise))


def insert_attempt(
    conn: Connection, student: str, attempt: CheckedAttempt, at: datetime, regrade_of: int | None = None
) -> int:
    """Write one checked attempt and its per-test rows in the caller's transaction; returns its id."""
    statement = sa.insert(schema.attempts).values(student=student, at=at, regrade_of=regrade_of, **attempt.values)
    attempt_id = conn.execute(statement.returning(schema.attempts.c.id)).scalar_one()
    if attempt.test_rows:
        conn.execute(
            sa.insert(schema.attempt_tests),
            [{"attempt_id": attempt_id, "test": test, "passed": ok} for test, ok in attempt.test_rows],
        )
    return attempt_id


def _attempt(row: Any) -> Attempt:
    return Attempt(
        id=row.id,
        student=row.student,
        exercise=row.exercise,
        time=row.at,
        score=row.score,
        max_score=row.max_score,
        public_tests_only=row.public_tests_only,
        details=None if row.details is None else json.loads(row.details),
        code=row.code,
        kind=AttemptKind(row.kind),
        regrade_of=row.regrade_of,
    )


class AttemptsMixin:
    """Store methods of attempts (``Store`` provides ``_read``, ``_write`` and ``catalogue``)."""

    # -- writes -----------------------------------------------------------------------------------

    def record_attempt(
        self,
        student: str,
        exercise: str,
        score: float,
        max_score: float,
        details: Any = None,
        code: str | None = None,
        public_tests_only: bool = False,
        tests: Iterable[TestRow] = (),
    ) -> int:
        """Keep one graded attempt (a submission) with the grader's result and the code; returns its id.

        ``details`` is kept as given and never read by the store. ``tests``: one row per test
        that ran, of this exercise (``per_test_pass_rates`` counts them).
        ``public_tests_only``: the score comes from the public tests (a student bundle), not
        the hidden suite, so it is feedback and never counts as the grade.
        """
        attempt = AttemptToRecord(exercise, score, max_score, details, code, public_tests_only, tuple(tests))
        return self._record_attempts(student, [attempt], AttemptKind.SUBMISSION)[0]

    def record_practice_runs(self, student: str, attempts: Sequence[AttemptToRecord]) -> tuple[int, ...]:
        """Keep the exercises of one practice run (the grading service's), in one transaction; their ids."""
        return self._record_attempts(student, attempts, AttemptKind.PRACTICE)

    def _record_attempts(self, student: str, attempts: Sequence[AttemptToRecord], kind: AttemptKind) -> tuple[int, ...]:
        student = clean_student(student)
        checked = [checked_attempt(attempt, kind, self.catalogue) for attempt in attempts]
        at = datetime.now(UTC)  # taken once, so a retried write keeps the time of the event
        return self._write(lambda conn: tuple(insert_attempt(conn, student, item, at) for item in checked))

    # -- reads ------------------------------------------------------------------------------------

    def attempts(self, student: str, exercise: str | None = None) -> pd.DataFrame:
        """A student's submitted attempts in time order, for a chart (columns: ``ATTEMPT_COLUMNS``)."""
        rows = self.attempt_details(student, exercise)
        table = pd.DataFrame(
            [
                (a.id, a.student, a.exercise, a.time, a.score, a.max_score, a.score / a.max_score, a.public_tests_only)
                for a in rows
            ],
            columns=ATTEMPT_COLUMNS,
        )
        table["time"] = pd.to_datetime(table["time"], utc=True)
        return table

    def attempt_details(
        self,
        student: str | None = None,
        exercise: str | None = None,
        *,
        public_tests_only: bool | None = None,
        kind: AttemptKind = AttemptKind.SUBMISSION,
    ) -> tuple[Attempt, ...]:
        """Attempts of one kind (submissions unless asked) with the grader's details and the code,
        oldest first, optionally filtered."""
        table = schema.attempts
        query = sa.select(table).where(table.c.kind == AttemptKind(kind)).order_by(table.c.at, table.c.id)
        if student is not None:
            query = query.where(table.c.student == clean_student(student))
        if exercise is not None:
            query = query.where(table.c.exercise == self.catalogue.require_exercise(exercise))
        if public_tests_only is not None:
            query = query.where(table.c.public_tests_only == require_bool(public_tests_only, "public_tests_only"))
        return tuple(_attempt(row) for row in self._read(lambda conn: conn.execute(query).all()))

    def practice_runs(self, student: str, exercise: str | None = None) -> tuple[Attempt, ...]:
        """A student's practice runs (attempts of kind ``PRACTICE``), oldest first."""
        return self.attempt_details(clean_student(student), exercise, kind=AttemptKind.PRACTICE)

    def per_test_pass_rates(self, exercise: str | None = None, *, public_tests_only: bool = False) -> pd.DataFrame:
        """Each test's pass rate over all submitted attempts (hidden suite unless asked otherwise).

        Columns: exercise, test, pass_rate (0 to 1), n (attempts that ran the test).
        """
        attempts, tests = schema.attempts, schema.attempt_tests
        query = (
            sa.select(attempts.c.exercise, tests.c.test, tests.c.passed)
            .join(attempts, attempts.c.id == tests.c.attempt_id)
            .where(
                attempts.c.kind == AttemptKind.SUBMISSION,
                attempts.c.public_tests_only == require_bool(public_tests_only, "public_tests_only"),
            )
        )
        if exercise is not None:
            query = query.where(attempts.c.exercise == self.catalogue.require_exercise(exercise))
        rows = self._read(lambda conn: conn.execute(query).all())
        return pass_rates(TestRow(row.exercise, row.test, row.passed) for row in rows)
