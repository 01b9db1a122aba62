"""One SQLAlchemy engine per store, and transactions that survive a busy file or a restarted server.

SQLite: WAL (readers never block the writer), a busy timeout, ``BEGIN IMMEDIATE`` for writes so a
writer takes the lock up front instead of failing half-way when it upgrades from reading, and a
bounded retry with backoff when the lock is still taken. PostgreSQL: a connect timeout, and lock and
statement timeouts set on each connection. Every wait is bounded by ``StoreLimits``. A transaction
lost with its server connection before its commit was rolled back by the server: it is run once
more when the server answers again; one lost during its commit is reported, never retried blindly.
"""

from __future__ import annotations

import errno
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError

from poslab.config import PRIVATE_FOLDER_MODE, private_sqlite_files

from .errors import StoreBusyError, StoreFullError, StoreInterruptedError, StoreUnavailableError
from .limits import StoreLimits

T = TypeVar("T")

# What a store call may raise, besides StoreError, when the database itself fails (not the input):
# callers catch these so that they need not know the store is built on SQLAlchemy.
DATABASE_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, OSError)

_BEGIN_OPTION = "poslab_sqlite_begin"
_BEGIN_STATEMENTS = {"read": "BEGIN", "write": "BEGIN IMMEDIATE"}  # fixed text, never built from input
_LOCKED_MESSAGES = ("database is locked", "database table is locked", "database is busy")
_FULL_MESSAGES = ("database or disk is full", "no space left on device", "disk full")
_FULL_SQLSTATES = ("53100",)  # PostgreSQL: disk_full
_TIMEOUT_SQLSTATES = ("55P03", "57014")  # PostgreSQL: lock_not_available, query_canceled (our timeouts)
_RECONNECT_POLL_SECONDS = 0.2
_MAX_BUSY_TIMEOUT_SECONDS = 1.0  # SQLite's own wait per try; the retry loop covers the rest
_FIRST_BACKOFF_SECONDS = 0.02
_MAX_BACKOFF_SECONDS = 0.5


def create_store_engine(url: str, limits: StoreLimits) -> Engine:
    parsed = sa.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        # pre_ping: app replicas outlive database restarts.
        return sa.create_engine(parsed, pool_pre_ping=True, connect_args=_postgres_timeouts(parsed, limits))
    if backend != "sqlite":
        return sa.create_engine(parsed, pool_pre_ping=True)
    try:
        _prepare_private_file(parsed.database)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise StoreFullError(_where(engine_url=parsed)) from error
        raise StoreUnavailableError(_where(engine_url=parsed), error.strerror or str(error)) from error
    busy_seconds = min(_MAX_BUSY_TIMEOUT_SECONDS, limits.wait_seconds)
    engine = sa.create_engine(parsed, connect_args={"timeout": busy_seconds})
    sa.event.listen(engine, "connect", _configure_sqlite_connection)
    sa.event.listen(engine, "begin", _begin_sqlite_transaction)
    return engine


def _postgres_timeouts(url: sa.URL, limits: StoreLimits) -> dict:
    """libpq's connect timeout, and the server's lock and statement timeouts for every session
    (added to the ``options`` the URL may carry, e.g. a ``search_path``)."""
    settings = f"-c lock_timeout={round(1000 * limits.wait_seconds)} -c statement_timeout={round(1000 * limits.statement_seconds)}"
    given = url.query.get("options")
    given = " ".join(given) if isinstance(given, tuple) else given
    return {
        "connect_timeout": max(1, math.ceil(limits.connect_seconds)),
        "options": f"{given} {settings}" if given else settings,
    }


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


def _first_line(error: DBAPIError) -> str:
    lines = str(error.orig).strip().splitlines()
    return lines[0] if lines else type(error.orig).__name__


def is_locked_error(error: OperationalError) -> bool:
    text = str(error.orig).lower()
    return any(message in text for message in _LOCKED_MESSAGES)


def _sqlstate(error: DBAPIError) -> str:
    return getattr(error.orig, "sqlstate", None) or ""


def _is_full(error: DBAPIError) -> bool:
    text = str(error.orig).lower()
    return _sqlstate(error) in _FULL_SQLSTATES or any(message in text for message in _FULL_MESSAGES)


class _Attempt:
    """Where a transaction got to: ``committing`` once its work is done and its COMMIT is sent."""

    def __init__(self) -> None:
        self.connected = False
        self.committing = False

    def run(self, engine: Engine, work: Callable[[Connection], T], write: bool) -> T:
        with engine.connect() as conn:
            self.connected = True
            conn.execution_options(**{_BEGIN_OPTION: "write" if write else "read"})
            with conn.begin():
                result = work(conn)
                self.committing = True
            return result


def _lost_connection(engine: Engine, error: DBAPIError, attempt: _Attempt) -> bool:
    """The server went away (restarted, failed over), as opposed to refusing this transaction."""
    if engine.dialect.name == "sqlite":
        return False
    return error.connection_invalidated or not attempt.connected


def wait_for_server(engine: Engine, seconds: float) -> bool:
    """Whether the database answers again within ``seconds`` (a restarted server)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            return True
        except DBAPIError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_RECONNECT_POLL_SECONDS)


def run_transaction(engine: Engine, work: Callable[[Connection], T], *, write: bool, limits: StoreLimits) -> T:
    """Run ``work`` in one transaction, retrying the whole of it while SQLite reports a lock, and once
    after a lost server connection if it had not reached its commit.

    A retried transaction was rolled back, so running ``work`` again cannot write twice.
    """
    deadline = time.monotonic() + limits.wait_seconds
    backoff = _FIRST_BACKOFF_SECONDS
    reconnected = False
    while True:
        attempt = _Attempt()
        try:
            return attempt.run(engine, work, write)
        except DBAPIError as error:
            where = _where(engine.url)
            if _is_full(error):
                raise StoreFullError(where) from error
            if _sqlstate(error) in _TIMEOUT_SQLSTATES:
                raise StoreBusyError(limits.wait_seconds) from error
            if _lost_connection(engine, error, attempt):
                if attempt.committing:
                    raise StoreInterruptedError(where) from error
                if not reconnected and wait_for_server(engine, limits.connect_seconds):
                    reconnected = True
                    continue
                raise StoreUnavailableError(where, _first_line(error)) from error
            if not (isinstance(error, OperationalError) and is_locked_error(error)):
                if isinstance(error, OperationalError):
                    raise StoreUnavailableError(where, _first_line(error)) from error
                raise
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreBusyError(limits.wait_seconds) from error
            # Jitter keeps processes that collided from colliding again in step.
            time.sleep(min(remaining, backoff * random.uniform(0.5, 1.5)))
            backoff = min(backoff * 2, _MAX_BACKOFF_SECONDS)
