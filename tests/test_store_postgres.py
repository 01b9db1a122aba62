"""What only PostgreSQL shows: several app replicas on one database, time zones, run isolation.

Needs ``POSLAB_TEST_PG_URL`` (see ``test_store_support``): skips with the reason when unset,
fails when ``CI=true``.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from test_store_support import TEST_CATALOGUE, fresh_postgres_schema, postgres_base_url

from poslab.store import Store, revisions


@pytest.fixture
def pg_url():
    with fresh_postgres_schema(postgres_base_url()) as url:
        yield url


def with_session_option(url: str, option: str) -> str:
    parsed = sa.make_url(url)
    options = f"{parsed.query['options']} {option}"
    return parsed.update_query_dict({"options": options}).render_as_string(hide_password=False)


def test_replicas_starting_together_migrate_once_and_share_rows(pg_url):
    replicas = [Store(pg_url, catalogue=TEST_CATALOGUE) for _ in range(4)]
    errors: list[BaseException] = []

    def first_use(store: Store, number: int) -> None:
        try:
            store.record_visit(f"student-{number}", "intro")
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=first_use, args=(s, n)) for n, s in enumerate(replicas)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        recorded = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    engine.dispose()
    assert recorded == [revisions.head()]  # the store made once
    # A comment posted through one replica is listed, and deletable, through another.
    comment_id = replicas[0].add_comment("student-0", "rope", "hello from replica 0")
    assert [c.id for c in replicas[3].comments("rope")] == [comment_id]
    replicas[2].delete_comment(comment_id)
    assert replicas[1].comments("rope") == ()
    assert replicas[1].students() == tuple(f"student-{n}" for n in range(4))
    for store in replicas:
        store.close()


def test_times_are_utc_whatever_the_session_time_zone(pg_url):
    store = Store(with_session_option(pg_url, "-ctimezone=Asia/Tokyo"), catalogue=TEST_CATALOGUE)
    before = datetime.now(UTC)
    store.add_comment("ann", "rope", "konnichiwa")
    after = datetime.now(UTC)
    (comment,) = store.comments("rope")
    assert comment.time.utcoffset() == timedelta(0) and before <= comment.time <= after
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        kind = conn.execute(
            # This test's own schema: another store on the same server (another run, a replica) has one too.
            sa.text(
                "SELECT data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = :t AND column_name = 'at'"
            ),
            {"t": "comments"},
        ).scalar_one()
    engine.dispose()
    assert kind == "timestamp with time zone"
    store.close()


def test_each_run_gets_a_schema_of_its_own():
    base = postgres_base_url()
    with fresh_postgres_schema(base) as first, fresh_postgres_schema(base) as second:
        assert first != second
        mine, other = Store(first, catalogue=TEST_CATALOGUE), Store(second, catalogue=TEST_CATALOGUE)
        mine.record_visit("ann", "intro")
        assert other.students() == ()
        assert mine.students() == ("ann",)
        mine.close()
        other.close()


def test_the_password_is_not_shown_in_the_store_repr(pg_url):
    password = sa.make_url(pg_url).password
    assert password and password not in repr(Store(pg_url))
