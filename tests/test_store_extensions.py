"""Per-student extensions kept in the store (revision 0007): set, replaced, withdrawn, read as an
``ExtensionSource``, and a store at revision 0006 upgraded with every row kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from test_store_support import TEST_CATALOGUE, store, store_at_revision, store_url  # noqa: F401 (fixtures)

from poslab.store import Store, revisions

DUE = datetime(2026, 3, 10, 23, 59, tzinfo=timezone(timedelta(hours=-5)))


def test_an_extension_is_kept_replaced_and_withdrawn(store):
    store.grant_extension("a1", "ann", DUE, set_by="instructor")
    store.grant_extension("a1", "bob", DUE + timedelta(days=1))
    store.grant_extension("a2", "ann", DUE + timedelta(days=3))
    store.grant_extension("a1", "ann", DUE + timedelta(days=2))  # the last word wins
    assert store.extensions("a1") == {"ann": DUE + timedelta(days=2), "bob": DUE + timedelta(days=1)}
    assert store.extensions("a1")["ann"].tzinfo is not None
    (granted,) = [item for item in store.granted_extensions("a1") if item.student == "ann"]
    assert granted.set_by == "instructor" and granted.set_at <= datetime.now(UTC)
    assert store.withdraw_extension("a1", "ann") is True
    assert store.withdraw_extension("a1", "ann") is False
    assert store.extensions("a1") == {"bob": DUE + timedelta(days=1)}
    assert [item.assignment for item in store.granted_extensions()] == ["a1", "a2"]


def test_an_extension_without_a_time_zone_or_an_assignment_is_refused(store):
    with pytest.raises(ValueError, match="time zone"):
        store.grant_extension("a1", "ann", datetime(2026, 3, 10))
    with pytest.raises(ValueError, match="assignment id"):
        store.grant_extension("  ", "ann", DUE)
    assert store.granted_extensions() == ()


def test_a_store_at_revision_0006_upgrades_to_0007_and_keeps_every_row(store_url):
    old = store_at_revision(store_url, "0006").tables
    engine = sa.create_engine(store_url)
    at = datetime(2026, 11, 1, tzinfo=UTC)
    with engine.begin() as conn:  # as revision 0006 left a database, with rows
        conn.execute(sa.insert(old["visits"]).values(student="ann", lesson="rope", at=at))
        conn.execute(
            sa.insert(old["attempts"]).values(
                student="ann", exercise="rope", at=at, score=3.0, max_score=4.0, public_tests_only=False
            )
        )
        conn.execute(
            sa.insert(old["roster_students"]).values(
                key="ann@uni.edu", name="Ann", email="ann@uni.edu", lms_id="7", section="A", added_at=at
            )
        )
    assert not sa.inspect(engine).has_table("extensions")
    engine.dispose()
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    assert store.schema_revision == revisions.head()
    assert store.progress("ann").lesson("rope").visited
    (attempt,) = store.attempt_details("ann")
    assert (attempt.score, attempt.max_score, attempt.time) == (3.0, 4.0, at)
    assert [member.name for member in store.roster_members()] == ["Ann"]
    assert store.extensions("a1") == {}
    store.grant_extension("a1", "ann@uni.edu", DUE)
    assert store.extensions("a1") == {"ann@uni.edu": DUE}
    store.close()
