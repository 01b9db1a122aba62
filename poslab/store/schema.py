"""Tables of the progress store and the migrations that create them, with a recorded version.

Every event is its own row (append-only), so concurrent writers never update the same row and
nothing one writer does can overwrite another's. Progress is computed from the rows when read.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .errors import SchemaVersionError
from .validation import MAX_COMMENT_CHARS, MAX_NAME_CHARS

ID_CHARS = 128  # lesson, exercise and quick-check ids are short slugs


class UtcDateTime(sa.types.TypeDecorator):
    """A timezone-aware UTC datetime on every backend (SQLite stores it naive, as UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("times must be timezone-aware")
        value = value.astimezone(UTC)
        # SQLite has no time zones; naive UTC text also sorts in time order.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = sa.MetaData()


def _event_table(name: str, *columns: sa.Column | sa.Constraint) -> sa.Table:
    """A table of events: id, student, time, then its own columns."""
    return sa.Table(
        name,
        metadata,
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
)

comments = _event_table(
    "comments",
    sa.Column("lesson", sa.String(ID_CHARS), nullable=False, index=True),
    sa.Column("text", sa.String(MAX_COMMENT_CHARS), nullable=False),
)

# Version 1's tables, listed by name so that tables added later are created by their own migration.
_VERSION_1_TABLES = (visits, lesson_completions, check_answers, hints, attempts, comments)


def _create_version_1(conn: Connection) -> None:
    metadata.create_all(conn, tables=list(_VERSION_1_TABLES))


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_create_version_1,)  # index i -> version i + 1
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
