"""Tables of the progress store and the migrations that create them, with a recorded version.

Most tables are events: each visit, answer, hint, attempt and comment is a row of its own,
written once and never updated (a comment may be deleted by its id), so concurrent writers never
update the same row and progress is computed from the rows when read. Two tables are updated in
place, each under a rule that keeps concurrent writers apart:

* ``drafts``: one row per student and exercise, overwritten at each save; the last save wins, and
  a revision counts the saves so a tab can tell that another saved after it;
* ``grading_jobs``: a job's status, lease and result change as it is graded; every update names
  the state it expects (``queued``), so a job is finished once and claimed by one replica.

Version 6's tables (the roster, sign-in links and sessions, the password limit) are in
``signin_schema``; every table shares ``columns.metadata``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from poslab.vocabulary import AttemptKind, JobState, TestStatus

from .columns import ID_CHARS, UtcDateTime, metadata, retired  # noqa: F401 (re-exported: schema.UtcDateTime)
from .errors import SchemaVersionError
from .signin_schema import create_version_6
from .validation import MAX_COMMENT_CHARS, MAX_NAME_CHARS, MAX_TEST_NAME_CHARS


def _event_table(name: str, *columns: sa.Column | sa.Constraint, of: sa.MetaData = metadata) -> sa.Table:
    """A table of events: id, student, time, then its own columns."""
    return sa.Table(
        name,
        of,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
        sa.Column("at", UtcDateTime, nullable=False),
        *columns,
    )


schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("applied_at", UtcDateTime, nullable=False),
)

visits = _event_table("visits", sa.Column("lesson", sa.String(ID_CHARS), nullable=False))

lesson_completions = _event_table("lesson_completions", sa.Column("lesson", sa.String(ID_CHARS), nullable=False))

check_answers = _event_table(
    "check_answers",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False),
    sa.Column("check_id", sa.String(ID_CHARS), nullable=False),
    sa.Column("correct", sa.Boolean, nullable=False),
)

hints = _event_table(
    "hints",
    sa.Column("exercise", sa.String(ID_CHARS), nullable=False),
    sa.Column("tier", sa.Integer, nullable=False),
    sa.CheckConstraint("tier >= 1", name="hint_tier_positive"),
)

attempts = _event_table(
    "attempts",
    sa.Column("exercise", sa.String(ID_CHARS), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("public_tests_only", sa.Boolean, nullable=False),
    sa.Column("details", sa.Text, nullable=True),  # the grader's result as JSON text
    sa.Column("code", sa.Text, nullable=True),
    # A second guard behind validation: a score outside its range is never stored.
    sa.CheckConstraint("max_score > 0 AND score >= 0 AND score <= max_score", name="score_in_range"),
    # Handed in, or a practice run (version 5; AttemptKind): only submissions count.
    sa.Column("kind", sa.String(16), nullable=False, server_default=AttemptKind.SUBMISSION.value),
)

comments = _event_table(
    "comments",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False, index=True),
    sa.Column("text", sa.String(MAX_COMMENT_CHARS), nullable=False),
)

# One row per test that ran in an attempt, as handed to its writer: pass rates are counted
# from these, never read out of the grader's details.
attempt_tests = sa.Table(
    "attempt_tests",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("attempt_id", sa.Integer, sa.ForeignKey("attempts.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("test", sa.String(MAX_TEST_NAME_CHARS), nullable=False),
    sa.Column("passed", sa.Boolean, nullable=False),
)

# Version 1's tables, listed by name so that tables added later are created by their own migration.
_VERSION_1_TABLES = (visits, lesson_completions, check_answers, hints, attempts, comments)

# Submissions handed to the grading service (grader.service), recorded before they are dispatched so
# that none is lost when the app stops; a job is held by one service replica at a time (a lease).
PENDING_JOB_STATUS = JobState.QUEUED.value
grading_jobs = sa.Table(
    "grading_jobs",
    metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("student", sa.String(MAX_NAME_CHARS), nullable=False, index=True),
    sa.Column("at", UtcDateTime, nullable=False, index=True),  # submitted
    sa.Column("mode", sa.String(16), nullable=False),  # a GradingMode
    sa.Column("exercises", sa.Text, nullable=False),  # JSON list of exercise ids
    sa.Column("files", sa.Text, nullable=False),  # JSON {file name: source}
    sa.Column("status", sa.String(16), nullable=False),  # a JobState
    sa.Column("lease_holder", sa.String(128), nullable=True),
    sa.Column("lease_until", UtcDateTime, nullable=True),
    sa.Column("result", sa.Text, nullable=True),  # the grader's SubmissionResult as JSON
    sa.Column("message", sa.Text, nullable=True),  # why it failed, in a sentence
    sa.Column("finished_at", UtcDateTime, nullable=True),
    # One pending submission per student, enforced by the database too (replicas race otherwise).
    sa.Index(
        "one_pending_job_per_student",
        "student",
        unique=True,
        sqlite_where=sa.text(f"status = '{PENDING_JOB_STATUS}'"),
        postgresql_where=sa.text(f"status = '{PENDING_JOB_STATUS}'"),
    ),
)


def _create_version_1(conn: Connection) -> None:
    metadata.create_all(conn, tables=list(_VERSION_1_TABLES))


def _create_version_2(conn: Connection) -> None:
    metadata.create_all(conn, tables=[grading_jobs])


def _version_1_test_rows(details_json: str) -> list[tuple[str, bool]]:
    """(test, passed) pairs of an attempt stored before version 3, which kept them only in its details."""
    details = json.loads(details_json)
    tests = details.get("tests") if isinstance(details, dict) else None
    pairs = []
    for test in tests if isinstance(tests, list) else ():
        if not isinstance(test, dict) or not isinstance(test.get("name"), str) or not test["name"]:
            continue
        if isinstance(test.get("passed"), bool):
            pairs.append((test["name"][:MAX_TEST_NAME_CHARS], test["passed"]))
        elif isinstance(test.get("status"), str):
            pairs.append((test["name"][:MAX_TEST_NAME_CHARS], test["status"] == TestStatus.PASSED))
    return pairs


def _create_version_3(conn: Connection) -> None:
    """Per-test rows, filled once from the details of the attempts already stored."""
    metadata.create_all(conn, tables=[attempt_tests])
    stored = conn.execute(sa.select(attempts.c.id, attempts.c.details).where(attempts.c.details.is_not(None)))
    rows = [
        {"attempt_id": attempt_id, "test": test, "passed": passed}
        for attempt_id, details in stored
        for test, passed in _version_1_test_rows(details)
    ]
    if rows:
        conn.execute(sa.insert(attempt_tests), rows)


# The student's workspace (the Exercises page): one draft per student and exercise, the runs of
# the public tests (version 4's practice_runs; attempts of their own kind since version 5) and
# which option each quick-check answer chose. A draft's row is updated at each save: a draft is
# saved every few seconds of typing, and keeping every save would fill the database with
# near-copies. A revision counts the saves, so a tab can tell that another tab saved after it.
drafts = sa.Table(
    "drafts",
    metadata,
    sa.Column("student", sa.String(MAX_NAME_CHARS), primary_key=True),
    sa.Column("exercise", sa.String(ID_CHARS), primary_key=True),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("saved_at", UtcDateTime, nullable=False),
    sa.Column("saved_by", sa.String(ID_CHARS), nullable=False),  # the browser session (tab) that saved it
)

practice_runs = _event_table(  # version 4 only: moved into attempts by version 5
    "practice_runs",
    sa.Column("exercise", sa.String(ID_CHARS), nullable=False),
    sa.Column("score", sa.Float, nullable=False),
    sa.Column("max_score", sa.Float, nullable=False),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("result", sa.Text, nullable=False),  # the grader's result as JSON text
    of=retired,
)

check_choices = _event_table(
    "check_choices",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False),
    sa.Column("check_id", sa.String(ID_CHARS), nullable=False),
    sa.Column("choice", sa.Integer, nullable=False),
    sa.CheckConstraint("choice >= 0", name="check_choice_not_negative"),
)


def _create_version_4(conn: Connection) -> None:
    metadata.create_all(conn, tables=[drafts, check_choices])
    retired.create_all(conn, tables=[practice_runs])


def _create_version_5(conn: Connection) -> None:
    """Practice runs become attempts of kind PRACTICE: one table, one shape, every row kept."""
    if "kind" not in {column["name"] for column in sa.inspect(conn).get_columns(attempts.name)}:
        # A database made before version 5: its attempts were all handed in. (Fixed text, no input.)
        conn.exec_driver_sql(
            f"ALTER TABLE {attempts.name} ADD COLUMN kind VARCHAR(16) DEFAULT '{AttemptKind.SUBMISSION.value}' NOT NULL"
        )
    old = practice_runs
    moved = sa.select(
        old.c.student,
        old.c.at,
        old.c.exercise,
        old.c.score,
        old.c.max_score,
        sa.true(),
        old.c.result,
        old.c.code,
        sa.literal(AttemptKind.PRACTICE.value),
    ).order_by(old.c.at, old.c.id)
    conn.execute(
        sa.insert(attempts).from_select(
            ["student", "at", "exercise", "score", "max_score", "public_tests_only", "details", "code", "kind"], moved
        )
    )
    old.drop(conn)


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (  # index i -> version i + 1
    _create_version_1,
    _create_version_2,
    _create_version_3,
    _create_version_4,
    _create_version_5,
    create_version_6,
)
SCHEMA_VERSION = len(MIGRATIONS)

_PG_MIGRATION_LOCK = 0x706F736C6162  # "poslab": replicas starting together migrate one at a time


def current_version(conn: Connection) -> int:
    if not sa.inspect(conn).has_table(schema_version.name):
        return 0
    return conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar_one() or 0


def migrate(conn: Connection) -> int:
    """Bring the schema to ``SCHEMA_VERSION`` inside the caller's (write) transaction.

    On SQLite the caller's ``BEGIN IMMEDIATE`` already serialises migrating processes; on
    PostgreSQL a transaction-scoped advisory lock does.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_MIGRATION_LOCK)))
    schema_version.create(conn, checkfirst=True)
    found = current_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaVersionError(found, SCHEMA_VERSION)
    for version in range(found + 1, SCHEMA_VERSION + 1):
        MIGRATIONS[version - 1](conn)
        conn.execute(sa.insert(schema_version).values(version=version, applied_at=datetime.now(UTC)))
    return SCHEMA_VERSION
