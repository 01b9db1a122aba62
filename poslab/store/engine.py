"""One SQLAlchemy engine per store, and transactions that survive a busy SQLite file.

SQLite: WAL (readers never block the writer), a busy timeout, ``BEGIN IMMEDIATE`` for writes so a
writer takes the lock up front instead of failing half-way when it upgrades from reading, and a
bounded retry with backoff when the lock is still taken. Other databases (PostgreSQL) use their
own locking; the same helpers only run the transaction.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from poslab.config import PRIVATE_FOLDER_MODE, private_sqlite_files

from .errors import StoreBusyError, StoreUnavailableError

T = TypeVar("T")

# What a store call may raise, besides StoreError, when the database itself fails (not the input):
# callers catch these so that they need not know the store is built on SQLAlchemy.
DATABASE_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, OSError)

_BEGIN_OPTION = "poslab_sqlite_begin"
_BEGIN_STATEMENTS = {"read": "BEGIN", "write": "BEGIN IMMEDIATE"}  # fixed text, never built from input
_LOCKED_MESSAGES = ("database is locked", "database table is locked", "database is busy")
_MAX_BUSY_TIMEOUT_SECONDS = 1.0  # SQLite's own wait per try; the retry loop covers the rest
_FIRST_BACKOFF_SECONDS = 0.02
_MAX_BACKOFF_SECONDS = 0.5


def create_store_engine(url: str, lock_wait_seconds: float) -> Engine:
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # pre_ping: app replicas outlive database restarts.
        return sa.create_engine(parsed, pool_pre_ping=True)
    try:
        _prepare_private_file(parsed.database)
    except OSError as error:
        raise StoreUnavailableError(_where(engine_url=parsed), error.strerror or str(error)) from error
    busy_seconds = min(_MAX_BUSY_TIMEOUT_SECONDS, lock_wait_seconds)
    engine = sa.create_engine(parsed, connect_args={"timeout": busy_seconds})
    sa.event.listen(engine, "connect", _configure_sqlite_connection)
    sa.event.listen(engine, "begin", _begin_sqlite_transaction)
    return engine


def _prepare_private_file(database: str | None) -> None:
    """A new folder for the file is made owner-only; the file and its -wal/-shm are 0600 (the
    students' work and the sign-ins' digests are nobody else's to read on a shared machine)."""
    if database and database != ":memory:" and not database.startswith("file:"):
        path = Path(database).expanduser()
        path.parent.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
        private_sqlite_files(path)


def _configure_sqlite_connection(dbapi_connection, _record) -> None:
    # Take transaction control from the sqlite3 module, which would otherwise emit a deferred
    # BEGIN of its own; SQLAlchemy's "begin" event below emits the right kind.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
    finally:
        cursor.close()


def _begin_sqlite_transaction(conn: Connection) -> None:
    kind = conn.get_execution_options().get(_BEGIN_OPTION, "read")
    conn.exec_driver_sql(_BEGIN_STATEMENTS[kind])


def _where(engine_url: sa.URL) -> str:
    return engine_url.render_as_string(hide_password=True)


def _first_line(error: OperationalError) -> str:
    lines = str(error.orig).strip().splitlines()
    return lines[0] if lines else type(error.orig).__name__


def is_locked_error(error: OperationalError) -> bool:
    text = str(error.orig).lower()
    return any(message in text for message in _LOCKED_MESSAGES)


def run_transaction(engine: Engine, work: Callable[[Connection], T], *, write: bool, lock_wait_seconds: float) -> T:
    """Run ``work`` in one transaction, retrying the whole of it while SQLite reports a lock.

    A retried transaction was rolled back, so running ``work`` again cannot write twice.
    """
    deadline = time.monotonic() + lock_wait_seconds
    backoff = _FIRST_BACKOFF_SECONDS
    while True:
        try:
            with engine.connect() as conn:
                conn.execution_options(**{_BEGIN_OPTION: "write" if write else "read"})
                with conn.begin():
                    return work(conn)
        except OperationalError as error:
            if not is_locked_error(error):
                raise StoreUnavailableError(_where(engine.url), _first_line(error)) from error
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreBusyError(lock_wait_seconds) from error
            # Jitter keeps processes that collided from colliding again in step.
            time.sleep(min(remaining, backoff * random.uniform(0.5, 1.5)))
            backoff = min(backoff * 2, _MAX_BACKOFF_SECONDS)
