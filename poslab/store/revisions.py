"""The store's schema history: Alembic revisions in ``alembic/versions``, and the upgrade to the head.

A store made before Alembic recorded its version (1 to 6) in a ``schema_version`` table: it is
stamped at the matching revision (``0001`` to ``0006``), that table dropped, and upgraded from
there. A store at a revision this code does not know (a newer Position Lab wrote it) is refused.
``docs/store.md`` says how to add a revision.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy.engine import Connection

from .errors import SchemaVersionError
from .schema import metadata

SCRIPTS = Path(__file__).resolve().parent / "alembic"
VERSION_TABLE = "alembic_version"  # fixed text: Alembic's record of the revision
LEGACY_TABLE = "schema_version"  # fixed text: the hand-written migrations' record, versions 1 to 6
_LEGACY_REVISIONS = {version: f"{version:04d}" for version in range(1, 7)}
_PG_MIGRATION_LOCK = 0x706F736C6162  # "poslab": replicas starting together upgrade one at a time


@dataclass(frozen=True)
class SchemaUpgrade:
    """What an upgrade did: the revision found (None: a new store) and the head it left."""

    before: str | None
    after: str

    @property
    def created(self) -> bool:
        return self.before is None


@functools.cache
def script_directory() -> ScriptDirectory:
    return ScriptDirectory(str(SCRIPTS))


def alembic_config(connection: Connection | None = None) -> Config:
    """The project's Alembic configuration; ``connection``: run in it (``env.py`` uses it)."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    return script_directory().get_current_head()


def is_known(revision: str) -> bool:
    try:
        return script_directory().get_revision(revision) is not None
    except CommandError:
        return False


def legacy_version(conn: Connection) -> int | None:
    """The version a store made before Alembic recorded; None when it has no such record."""
    if not sa.inspect(conn).has_table(LEGACY_TABLE):
        return None
    return conn.execute(sa.text(f"SELECT max(version) FROM {LEGACY_TABLE}")).scalar_one()


def recorded_revision(conn: Connection) -> str | None:
    """The revision in ``alembic_version``; None when there is none."""
    if not sa.inspect(conn).has_table(VERSION_TABLE):
        return None
    return conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def found_revision(conn: Connection) -> str | None:
    """The revision the database is at (a store made before Alembic: its version's); None when empty."""
    recorded = recorded_revision(conn)
    if recorded is not None:
        return recorded
    version = legacy_version(conn)
    return None if version is None else legacy_revision(version)


def legacy_revision(version: int) -> str:
    """The revision of a version the hand-written migrations recorded (one unknown here says so)."""
    return _LEGACY_REVISIONS.get(version, f"{version} (a schema version)")


def pending(conn: Connection) -> bool:
    """Whether ``upgrade`` has anything to write."""
    return recorded_revision(conn) != head()


def require_known(found: str | None) -> None:
    if found is not None and not is_known(found):
        raise SchemaVersionError(found, head())


def upgrade(conn: Connection) -> SchemaUpgrade:
    """Bring the schema to the head inside the caller's (write) transaction.

    On SQLite the caller's ``BEGIN IMMEDIATE`` already serialises upgrading processes; on
    PostgreSQL a transaction-scoped advisory lock does.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_MIGRATION_LOCK)))
    before = found_revision(conn)
    require_known(before)
    if not pending(conn):
        return SchemaUpgrade(before, before)
    if before is None:
        # A new store is made from the tables at the head and stamped there, Alembic's recipe for
        # a database built from scratch: a third of the time of running every revision. A test
        # holds the two to the same tables (tests/test_store_revisions.py).
        metadata.create_all(conn)
        MigrationContext.configure(conn).stamp(script_directory(), "head")
        return SchemaUpgrade(None, head())
    if recorded_revision(conn) is None and legacy_version(conn) is not None:
        MigrationContext.configure(conn).stamp(script_directory(), before)
        conn.execute(sa.text(f"DROP TABLE {LEGACY_TABLE}"))
    command.upgrade(alembic_config(conn), "head")
    return SchemaUpgrade(before, head())
