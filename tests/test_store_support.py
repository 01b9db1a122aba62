"""Fixtures shared by the store's tests (no tests here): a store on SQLite or PostgreSQL, a small
course catalogue, and row counts read with plain SQL, independent of the store's own queries.

PostgreSQL comes from ``POSLAB_TEST_PG_URL`` (a test-only variable; the app's ``POSLAB_DB_URL`` is
never read here). Each test gets a fresh schema, dropped afterwards, so neither tests nor runs see
each other's rows. Unset: the postgres cases skip with the reason, or fail when ``CI=true``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.schema import CreateSchema, DropSchema

from poslab.store import Catalogue, Store, revisions

PG_VARIABLE = "POSLAB_TEST_PG_URL"
BACKENDS = ("sqlite", "postgres")

# A small course of its own, so the rules are tested on known check ids whatever the content says.
TEST_CATALOGUE = Catalogue(
    lessons=(("intro", ()), ("rope", ("r1", "r2")), ("alibi", ("a1",))),
    exercises=("rope", "alibi"),
)

# Table names are fixed here, never taken from a test's input.
TABLES = ("visits", "lesson_completions", "check_answers", "hints", "attempts", "comments")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def postgres_base_url() -> str:
    url = os.environ.get(PG_VARIABLE, "").strip()
    if not url:
        reason = f'{PG_VARIABLE} is not set; start PostgreSQL with: eval "$(bash .ci/postgres.sh)"'
        if in_ci():
            pytest.fail(f"CI=true requires the PostgreSQL store tests to run, but {reason}")
        pytest.skip(reason)
    return url


@contextmanager
def fresh_postgres_schema(base_url: str) -> Iterator[str]:
    """A new, empty schema; yields a URL whose connections use it (through search_path)."""
    name = f"poslab_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base_url)
    try:
        with admin.begin() as conn:
            conn.execute(CreateSchema(name))
        url = sa.make_url(base_url).update_query_dict({"options": f"-csearch_path={name}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(DropSchema(name, cascade=True, if_exists=True))
        admin.dispose()


@contextmanager
def database_url(backend: str, folder: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'progress.db'}"
        return
    with fresh_postgres_schema(postgres_base_url()) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = Store(store_url, catalogue=TEST_CATALOGUE)
    yield opened
    opened.close()


def count_rows(url: str, table: str, student: str | None = None) -> int:
    """Rows in ``table`` (optionally one student's), counted with plain SQL."""
    if table not in TABLES:
        raise ValueError(f"not a store table: {table}")
    query = f"SELECT count(*) FROM {table}" + (" WHERE student = :student" if student is not None else "")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(query), {"student": student}).scalar_one()
    finally:
        engine.dispose()


def store_at_revision(url: str, revision: str) -> sa.MetaData:
    """An empty store at ``revision`` (as that revision left it); returns its tables, reflected."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            from alembic import command

            command.upgrade(revisions.alembic_config(conn), revision)
            tables = sa.MetaData()
            tables.reflect(conn)
            return tables
    finally:
        engine.dispose()
