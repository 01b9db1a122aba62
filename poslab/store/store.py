"""``Store``: the course's progress, kept in any SQLAlchemy database (SQLite file by default).

One ``Store`` per process is meant to be shared by all threads (the app caches it): the engine's
connection pool is thread-safe, every call uses its own connection and transaction, and the
schema is upgraded to the head revision once, under a lock, on first use (``revisions``); a SQLite
store is first backed up beside its file when there is something to upgrade.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.config import Settings
from poslab.roles import Actor
from poslab.vocabulary import AttemptKind, AuditAction

from . import revisions, schema
from .attempts import AttemptsMixin
from .audit import AuditMixin, checked_actor, record_action
from .backup import backup_sqlite, beside, sqlite_file
from .catalogue import Catalogue
from .class_queries import ClassQueriesMixin
from .class_roster import RosterMixin
from .code_export import CodeExportMixin
from .engine import create_store_engine, run_transaction
from .extensions import ExtensionsMixin
from .jobs import GradingJobsMixin
from .limits import StoreLimits
from .overrides import OverridesMixin, read_overrides
from .password_failures import PasswordFailuresMixin
from .progress import ScoredAttempt, StudentActivity, class_table, student_progress
from .queued_writes import QueuedVisits
from .regrades import RegradesMixin
from .results import Comment, StudentProgress
from .signin import SignInMixin
from .validation import clean_comment, clean_student, require_bool, require_hint_tier, require_id
from .workspace import WorkspaceMixin

T = TypeVar("T")

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


class Store(
    AttemptsMixin,
    GradingJobsMixin,
    WorkspaceMixin,
    SignInMixin,
    RosterMixin,
    PasswordFailuresMixin,
    ClassQueriesMixin,
    ExtensionsMixin,
    OverridesMixin,
    RegradesMixin,
    AuditMixin,
    CodeExportMixin,
):
    """Progress of every student: visits, quick checks, lessons done, hints, attempts, comments.

    ``url``: any SQLAlchemy URL; default ``Settings.from_env().db_url``.
    ``catalogue``: the lesson, quick-check and exercise ids accepted; default: the course's.
    ``limits``: how long a call may wait (default ``StoreLimits.from_env()``); ``lock_wait_seconds``
    replaces its wait for a database held by another program (then ``StoreBusyError``).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        catalogue: Catalogue | None = None,
        lock_wait_seconds: float | None = None,
        limits: StoreLimits | None = None,
    ) -> None:
        limits = limits or StoreLimits.from_env()
        if lock_wait_seconds is not None:
            if lock_wait_seconds <= 0:
                raise ValueError(f"lock_wait_seconds must be greater than 0, got {lock_wait_seconds!r}")
            limits = replace(limits, wait_seconds=lock_wait_seconds)
        self.url = url or Settings.from_env().db_url
        self.limits = limits
        self.lock_wait_seconds = limits.wait_seconds
        self._fixed_catalogue = catalogue
        self._engine = create_store_engine(self.url, limits)
        self._schema_ready = False
        self._schema_lock = threading.Lock()
        self._queued_visits = QueuedVisits(self._write_visits)

    def __repr__(self) -> str:
        return f"Store({sa.make_url(self.url).render_as_string(hide_password=True)!r})"

    def close(self) -> None:
        """Close pooled connections; the store reconnects if used again."""
        self._engine.dispose()

    @property
    def catalogue(self) -> Catalogue:
        return self._fixed_catalogue or Catalogue.from_course()

    @property
    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at (the head, once the store was used)."""
        return self._read(revisions.found_revision)

    # -- transactions ---------------------------------------------------------------------------

    def _ensure_schema(self) -> None:
        if self._schema_ready:
            return
        with self._schema_lock:
            if not self._schema_ready:
                self._upgrade_schema()
                self._schema_ready = True

    def _upgrade_schema(self) -> None:
        where = sa.make_url(self.url).render_as_string(hide_password=True)
        path = sqlite_file(self.url)
        if path is not None and path.is_file():
            found, pending = self._run(
                lambda conn: (revisions.found_revision(conn), revisions.pending(conn)), write=False
            )
            revisions.require_known(found)
            if found is not None and pending:
                saved = beside(path, f"before-upgrade-from-{found.split()[0]}")
                backup_sqlite(path, saved)
                log.info("backed up the progress database %s to %s before upgrading it", where, saved)
        done = self._run(revisions.upgrade, write=True)
        if done.created:
            log.info("created the progress database %s at schema revision %s", where, done.after)
        elif done.before != done.after:
            log.info("upgraded the progress database %s from schema revision %s to %s", where, done.before, done.after)

    def _run(self, work: Callable[[Connection], T], *, write: bool) -> T:
        return run_transaction(self._engine, work, write=write, limits=self.limits)

    def _write(self, work: Callable[[Connection], T]) -> T:
        self._ensure_schema()
        return self._run(work, write=True)

    def _read(self, work: Callable[[Connection], T]) -> T:
        self._ensure_schema()
        return self._run(work, write=False)

    def _insert(self, table: sa.Table, **values: Any) -> int:
        values["at"] = _now()  # taken once, so a retried write keeps the time of the event
        statement = sa.insert(table).values(**values).returning(table.c.id)
        return self._write(lambda conn: conn.execute(statement).scalar_one())

    # -- writes -----------------------------------------------------------------------------------

    def record_visit(self, student: str, lesson: str) -> None:
        self._insert(schema.visits, student=clean_student(student), lesson=self.catalogue.require_lesson(lesson))

    def record_visit_soon(self, student: str, lesson: str) -> bool:
        """Queue the visit and return at once: a thread writes it when the store is free (``queued_writes``).
        False if the queue was full and it was dropped."""
        visit = (clean_student(student), self.catalogue.require_lesson(lesson))
        return self._queued_visits.add(visit, _now())

    def flush_queued_writes(self, timeout: float) -> bool:
        """Wait until the queued visits are written; False if ``timeout`` s passed first."""
        return self._queued_visits.flush(timeout)

    def _write_visits(self, visits: dict[tuple[str, str], datetime]) -> None:
        rows = [{"student": student, "lesson": lesson, "at": at} for (student, lesson), at in visits.items()]
        self._write(lambda conn: conn.execute(sa.insert(schema.visits), rows))

    def complete_lesson(self, student: str, lesson: str) -> None:
        """The student marks the lesson done."""
        student = clean_student(student)
        self._insert(schema.lesson_completions, student=student, lesson=self.catalogue.require_lesson(lesson))

    def record_check(self, student: str, lesson: str, check_id: str, correct: bool) -> None:
        """One answer to a quick check; every answer is kept."""
        student = clean_student(student)
        lesson = self.catalogue.require_lesson(lesson)
        check_id = self.catalogue.require_check(lesson, check_id)
        correct = require_bool(correct, "correct")
        self._insert(schema.check_answers, student=student, lesson=lesson, check_id=check_id, correct=correct)

    def record_hint(self, student: str, exercise: str, tier: int) -> None:
        student = clean_student(student)
        exercise = self.catalogue.require_exercise(exercise)
        self._insert(schema.hints, student=student, exercise=exercise, tier=require_hint_tier(tier))

    def add_comment(self, student: str, lesson: str, text: str) -> int:
        """Store a comment on a lesson; returns the new comment's id."""
        student = clean_student(student)
        lesson = self.catalogue.require_lesson(lesson)
        return self._insert(schema.comments, student=student, lesson=lesson, text=clean_comment(text))

    def delete_comment(self, comment_id: int, author: str | None = None, *, actor: Actor | str | None = None) -> None:
        """Delete one comment: with ``author``, only if it is theirs; without, as an instructor
        (``actor``; in the audit log). ``KeyError`` if there is none such."""
        comment_id = require_id(comment_id, "comment id")
        table = schema.comments
        where = [table.c.id == comment_id] + ([table.c.student == clean_student(author)] if author is not None else [])
        who = checked_actor(actor, AuditAction.DELETE_COMMENT) if author is None else None

        def delete(conn: Connection) -> int:
            found = conn.execute(sa.select(table.c.student, table.c.lesson, table.c.text).where(*where)).first()
            if found is None:
                return 0
            conn.execute(sa.delete(table).where(table.c.id == comment_id))
            if who is not None:
                detail = f"on {found.lesson}: {found.text[:200]}"
                record_action(conn, who, AuditAction.DELETE_COMMENT, found.student, detail)
            return 1

        deleted = self._write(delete)
        if deleted == 0:
            raise KeyError(f"no comment with id {comment_id}" + (f" by {author}" if author is not None else ""))

    # -- reads ------------------------------------------------------------------------------------

    def progress(self, student: str) -> StudentProgress:
        """One student's progress; a student with no activity gets all-zero progress."""
        student = clean_student(student)
        activity = self._read(lambda conn: _activities(conn, student)).get(student, StudentActivity())
        activity.visited.update(self._queued_visits.pending(student))  # queued, not yet written
        return student_progress(student, activity, self.catalogue)

    def class_progress(self) -> pd.DataFrame:
        """One row per student who did anything, sorted by name (see ``progress.class_table``)."""
        activities = self._read(lambda conn: _activities(conn, None))
        catalogue = self.catalogue
        progresses = [student_progress(student, activity, catalogue) for student, activity in activities.items()]
        return class_table(progresses, catalogue)

    def students(self) -> tuple[str, ...]:
        return tuple(sorted(self._read(lambda conn: _activities(conn, None))))

    def comments(self, lesson: str) -> tuple[Comment, ...]:
        """The lesson's comments, newest first."""
        lesson = self.catalogue.require_lesson(lesson)
        table = schema.comments
        query = (
            sa.select(table.c.id, table.c.student, table.c.lesson, table.c.text, table.c.at)
            .where(table.c.lesson == lesson)
            .order_by(table.c.at.desc(), table.c.id.desc())
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(Comment(row.id, row.student, row.lesson, row.text, row.at) for row in rows)


def _activities(conn: Connection, student: str | None) -> dict[str, StudentActivity]:
    """Every student's events (or one student's), aggregated in SQL where the rules allow."""
    activities: dict[str, StudentActivity] = defaultdict(StudentActivity)

    def grouped(table: sa.Table, *columns: sa.Column) -> sa.Select:
        query = sa.select(table.c.student, *columns, sa.func.max(table.c.at).label("last"), sa.func.count().label("n"))
        query = query.group_by(table.c.student, *columns)
        return query if student is None else query.where(table.c.student == student)

    for row in conn.execute(grouped(schema.visits, schema.visits.c.lesson)):
        activities[row.student].visited.add(row.lesson)
        activities[row.student].saw(row.last)
    for row in conn.execute(grouped(schema.lesson_completions, schema.lesson_completions.c.lesson)):
        activities[row.student].marked_done.add(row.lesson)
        activities[row.student].saw(row.last)
    answers = schema.check_answers
    for row in conn.execute(grouped(answers, answers.c.lesson, answers.c.check_id, answers.c.correct)):
        if row.correct:
            activities[row.student].right_checks.add((row.lesson, row.check_id))
        activities[row.student].saw(row.last)
    for row in conn.execute(grouped(schema.hints, schema.hints.c.exercise, schema.hints.c.tier)):
        activities[row.student].hint_tiers.setdefault(row.exercise, set()).add(row.tier)
        activities[row.student].saw(row.last)
    attempts = schema.attempts
    scored = grouped(
        attempts, attempts.c.exercise, attempts.c.score, attempts.c.max_score, attempts.c.public_tests_only
    )
    for row in conn.execute(scored.where(attempts.c.kind == AttemptKind.SUBMISSION)):  # practice never counts
        attempt = ScoredAttempt(row.exercise, row.score, row.max_score, row.public_tests_only)
        activities[row.student].attempts.extend([attempt] * row.n)  # equal attempts, grouped in SQL
        activities[row.student].saw(row.last)
    for row in conn.execute(grouped(schema.comments)):
        activities[row.student].saw(row.last)
    for item in read_overrides(conn, student):
        activities[item.student].overrides[item.exercise] = (item.score, item.max_score)
    return dict(activities)
