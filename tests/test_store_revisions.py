"""The store's history: a store of every version before Alembic (1 to 6, ``tests/store_versions``,
written by the hand-written migrations) upgrades to the head with every row kept, on SQLite and
PostgreSQL; the tables a new store gets are the ones the revisions make; a SQLite store is backed
up before an upgrade; a newer store is refused. Expected rows are written out by hand below.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from test_store_support import TEST_CATALOGUE, database_url, store_url  # noqa: F401 (fixtures)

from poslab.store import SchemaVersionError, Store, revisions
from poslab.store.schema import metadata

VERSIONS = Path(__file__).resolve().parent / "store_versions"
BACKENDS = ("sqlite", "postgres")


def at(minute: int) -> datetime:
    return datetime(2026, 9, 1, 9, minute)  # naive UTC, as read() gives times


def expected_rows(version: int) -> dict[str, list[tuple]]:
    """Every table at the head, for a store of ``version`` as the fixtures wrote it."""
    details = '{"tests": [{"name": "norm", "passed": true}, {"name": "shape", "status": "failed"}]}'
    practice = [(3, "ann", at(14), "alibi", 1.0, 2.0, True, '{"practice": 1}', "practice = 1\n", "practice", None)]
    link, session = "a" * 64, "b" * 64
    return {
        "visits": [(1, "ann", at(0), "intro"), (2, "bob", at(1), "rope")],
        "lesson_completions": [(1, "ann", at(2), "intro")],
        "check_answers": [(1, "ann", at(3), "rope", "r1", True), (2, "bob", at(4), "rope", "r2", False)],
        "hints": [(1, "bob", at(5), "rope", 2)],
        "attempts": [
            (1, "ann", at(6), "rope", 3.0, 4.0, False, details, "ann = 1\n", "submission", None),
            (2, "bob", at(7), "alibi", 2.0, 2.0, True, None, None, "submission", None),
            *(practice if version >= 4 else []),  # version 4: a practice run, moved into attempts
        ],
        "comments": [(1, "bob", at(8), "rope", "Why sin and cos?")],
        # Before version 3, these come from the first attempt's details ("failed" is not passed).
        "attempt_tests": [(1, 1, "norm", True), (2, 1, "shape", False)],
        "grading_jobs": [
            (
                "job-1",
                "cem",
                at(9),
                "hidden",
                '["rope"]',
                '{"rope.py": "x = 1\\n"}',
                "queued",
                "replica-a",
                at(10),
                None,
                None,
                None,
            ),
            (
                "job-2",
                "ann",
                at(11),
                "public",
                '["alibi"]',
                '{"alibi.py": "y = 2\\n"}',
                "failed",
                None,
                None,
                None,
                "The grader stopped.",
                at(12),
            ),
        ]
        if version >= 2
        else [],  # fmt: skip
        "drafts": [("ann", "rope", "draft = 3\n", 3, at(13), "tab-1")] if version >= 4 else [],
        "check_choices": [(1, "ann", at(3), "rope", "r1", 2)] if version >= 4 else [],
        "roster_students": [
            ("ann@uni.edu", "Ann Lee", "ann@uni.edu", "101", "A", at(15)),
            ("bob@uni.edu", "Bob Ng", "bob@uni.edu", "102", "B", at(15)),
        ]
        if version >= 6
        else [],  # fmt: skip
        "signin_links": [(link, "ann@uni.edu", at(16), datetime(2026, 9, 2, 9, 16), None, at(17), 1)]
        if version >= 6
        else [],
        "signin_sessions": [(session, "ann@uni.edu", link, at(17), datetime(2026, 10, 1, 9, 17), None)]
        if version >= 6
        else [],
        "password_failures": [(1, at(18), "tab-9", "10.0.0.7")] if version >= 6 else [],
        "extensions": [],  # revision 0007 (after the hand-written versions): tests/test_store_extensions.py
        "audit_log": [],  # revision 0008: tests/test_store_audit.py
        "score_overrides": [],
    }


def load_fixture(url: str, version: int) -> None:
    """A store as version ``version`` left it, from its dump for this backend."""
    if url.startswith("sqlite"):
        connection = sqlite3.connect(sa.make_url(url).database)
        connection.executescript((VERSIONS / f"v{version}.sqlite.sql").read_text())
        connection.close()
        return
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql((VERSIONS / f"v{version}.postgresql.sql").read_text())
    engine.dispose()


def _plain(value):
    if isinstance(value, datetime) and value.tzinfo is not None:
        return (
            value.astimezone(tz=None).replace(tzinfo=None) if False else value.replace(tzinfo=None) - value.utcoffset()
        )
    return value


def read(url: str) -> dict[str, list[tuple]]:
    """Every table's rows, by primary key, read by reflection (not through the store's own tables)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            found = sa.MetaData()
            found.reflect(conn)
            return {
                name: [
                    tuple(_plain(v) for v in row) for row in conn.execute(sa.select(table).order_by(*table.primary_key))
                ]
                for name, table in found.tables.items()
            }
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("version", range(1, 7))
def test_a_store_of_every_earlier_version_upgrades_to_the_head_with_every_row(backend, version, tmp_path):
    with database_url(backend, tmp_path) as url:
        load_fixture(url, version)
        store = Store(url, catalogue=TEST_CATALOGUE)
        assert store.schema_revision == revisions.head()
        store.close()
        rows = read(url)
        assert rows.pop("alembic_version") == [(revisions.head(),)]
        assert rows == expected_rows(version)  # schema_version and practice_runs are gone too
        store = Store(url, catalogue=TEST_CATALOGUE)
        store.record_visit("cem", "alibi")  # the ids go on from the last
        assert read(url)["visits"][-1][:2] == (3, "cem")
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_revisions_make_the_tables_a_new_store_gets(backend, tmp_path):
    with database_url(backend, tmp_path) as url:
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            command.upgrade(revisions.alembic_config(conn), "head")
            differences = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
        engine.dispose()
    assert differences == []


def test_a_sqlite_store_is_backed_up_privately_before_an_upgrade_and_the_log_says_so(tmp_path, caplog):
    url = f"sqlite:///{tmp_path / 'poslab.db'}"
    load_fixture(url, 5)
    with caplog.at_level(logging.INFO, logger="poslab.store"):
        Store(url, catalogue=TEST_CATALOGUE).close()
        assert Store(url, catalogue=TEST_CATALOGUE).schema_revision == revisions.head()
    (saved,) = tmp_path.glob("poslab.db.before-upgrade-from-0005-*.backup")
    assert saved.stat().st_mode & 0o777 == 0o600
    assert read(f"sqlite:///{saved}")["schema_version"][-1][0] == 5  # the store as it was
    messages = [record.getMessage() for record in caplog.records if record.name == "poslab.store.store"]
    assert any(f"to {saved}" in message for message in messages)
    assert any(f"from schema revision 0005 to {revisions.head()}" in message for message in messages)


def test_a_new_store_and_a_store_at_the_head_are_not_backed_up(tmp_path):
    url = f"sqlite:///{tmp_path / 'poslab.db'}"
    Store(url, catalogue=TEST_CATALOGUE).record_visit("ann", "intro")
    Store(url, catalogue=TEST_CATALOGUE).record_visit("bob", "intro")
    assert sorted(path.name for path in tmp_path.iterdir() if "backup" in path.name) == []


def test_a_store_at_an_unknown_revision_is_refused_with_a_sentence(store_url):  # noqa: F811
    Store(store_url, catalogue=TEST_CATALOGUE).record_visit("ann", "intro")
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = 'f00d'"))
    engine.dispose()
    with pytest.raises(SchemaVersionError, match="revision f00d, which this Position Lab does not know.*Upgrade"):
        Store(store_url, catalogue=TEST_CATALOGUE).progress("ann")


def test_a_store_of_a_later_hand_written_version_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'poslab.db'}"
    load_fixture(url, 6)
    connection = sqlite3.connect(tmp_path / "poslab.db")
    connection.execute("INSERT INTO schema_version VALUES (7, '2026-12-01 00:00:00')")
    connection.commit()
    connection.close()
    with pytest.raises(SchemaVersionError, match="revision 7 .a schema version."):
        Store(url, catalogue=TEST_CATALOGUE).progress("ann")
