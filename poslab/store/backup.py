"""Backups of the store and their restore: SQLite's online backup API, ``pg_dump``/``pg_restore``.

A backup is written 0600 (it holds every student's work) through a temporary file, so a failed
backup leaves no half a file. A restore reads the backup's revision first and refuses one this
code does not know (a newer Position Lab wrote it); an older one is upgraded when the app starts.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from poslab.config import PRIVATE_FOLDER_MODE, private_sqlite_files

from . import pg_backup, revisions
from .errors import StoreError


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store; None for another database (or an in-memory one)."""
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database).expanduser()


def describe(url: str) -> str:
    """The store's URL without its password."""
    return sa.make_url(url).render_as_string(hide_password=True)


def beside(path: Path, label: str) -> Path:
    """A new file name next to ``path``: ``poslab.db.<label>-<UTC time>.backup``."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return path.with_name(f"{path.name}.{label}-{stamp}.backup")


def write_privately(target: Path, write: Callable[[Path], None]) -> None:
    """``write(temporary)`` beside ``target``, then rename it into place; the file is 0600."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)  # mkstemp made it 0600; the writer opens it by name
    try:
        write(Path(temporary))
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of ``source`` into ``target`` (SQLite's online backup API), one plain file."""
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
        writer.execute("PRAGMA journal_mode=DELETE")  # a backup is one self-contained file
    finally:
        writer.close()
        reader.close()


def backup_sqlite(source: Path, target: Path) -> None:
    if not source.is_file():
        raise StoreError(f"There is no progress database at {source} to back up.")
    write_privately(target, lambda temporary: _copy_sqlite(source, temporary))


def backup(url: str, target: Path) -> None:
    """Write a backup of the store at ``url`` to ``target`` (replaced if it exists)."""
    path = sqlite_file(url)
    if path is not None:
        backup_sqlite(path, target)
    else:
        write_privately(target, lambda temporary: pg_backup.dump(url, temporary))


def backup_revision(url: str, source: Path) -> str | None:
    """The schema revision a backup was taken at (None: an empty store), for the store at ``url``."""
    if not source.is_file():
        raise StoreError(f"There is no backup file at {source}.")
    if sqlite_file(url) is None:
        return pg_backup.revision_of(source)
    engine = sa.create_engine(f"sqlite:///file:{source}?mode=ro&uri=true")
    try:
        with engine.connect() as conn:
            return revisions.found_revision(conn)
    except sa.exc.DatabaseError as error:
        raise StoreError(f"{source} is not a SQLite backup of the progress database ({error.orig}).") from error
    finally:
        engine.dispose()


def restore(url: str, source: Path) -> tuple[str | None, Path | None]:
    """Replace the store at ``url`` by the backup ``source``; returns its revision and where the
    store it replaced was saved (SQLite: beside it; PostgreSQL: the restore runs in one
    transaction and needs no copy). Refuses a backup of a revision this code does not know."""
    found = backup_revision(url, source)
    revisions.require_known(found)
    path = sqlite_file(url)
    if path is None:
        pg_backup.restore(url, source)
        return found, None
    saved = None
    if path.is_file():
        saved = beside(path, "before-restore")
        backup_sqlite(path, saved)
    path.parent.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
    private_sqlite_files(path)  # a store made by the restore is as private as one the app makes
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    writer = sqlite3.connect(path)
    try:
        reader.backup(writer)  # page by page, under the store's own locks
    finally:
        writer.close()
        reader.close()
    return found, saved
