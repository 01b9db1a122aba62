"""What every table of the store is made of: one ``MetaData``, the UTC time column, the id length.

``schema`` (the course's tables) and ``signin_schema`` (the roster, sign-in
links and sign-in sessions) both build on these, so their tables share one ``metadata``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

ID_CHARS = 128  # lesson, exercise and quick-check ids are short slugs
HASH_CHARS = 64  # a SHA-256 digest in hex: how a token or a sign-in session is kept

metadata = sa.MetaData()


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
