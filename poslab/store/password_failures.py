"""The Instructor password's wrong attempts, kept in the store so that a limit on them holds across
app processes (``app_pages/ui/instructor/lock.py`` applies it; ``poslab.identity.password_wait`` computes it)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .columns import ID_CHARS
from .signin_schema import MAX_CLIENT_CHARS
from .signin_schema import password_failures as failures_table


class PasswordFailuresMixin:
    """Mixed into ``Store``: ``_read``, ``_write`` are the store's transactions."""

    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]

    def record_password_failure(self, session: str, client: str, keep: timedelta = timedelta(days=1)) -> None:
        """One wrong password from this browser session and client address (older rows are dropped)."""
        now = datetime.now(UTC)

        def record(conn: Connection) -> None:
            conn.execute(sa.delete(failures_table).where(failures_table.c.at < now - keep))
            conn.execute(
                sa.insert(failures_table).values(at=now, session=session[:ID_CHARS], client=client[:MAX_CLIENT_CHARS])
            )

        self._write(record)

    def password_failures(self, session: str, client: str, since: datetime) -> tuple[list[datetime], list[datetime]]:
        """The times of the wrong passwords since ``since``: from this session, and from this client."""
        table = failures_table
        query = (
            sa.select(table.c.at, table.c.session, table.c.client)
            .where(
                table.c.at >= since,
                sa.or_(table.c.session == session[:ID_CHARS], table.c.client == client[:MAX_CLIENT_CHARS]),
            )
            .order_by(table.c.at)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return (
            [row.at for row in rows if row.session == session[:ID_CHARS]],
            [row.at for row in rows if row.client == client[:MAX_CLIENT_CHARS]],
        )
