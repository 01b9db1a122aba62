"""The store's roster, sign-in links and sign-ins, the password failures, and migration 6.

Every test runs on SQLite and PostgreSQL (``store_url``). What the tables hold is read with plain
SQL, not through the store, so "only a digest is kept" is checked on the rows themselves.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from test_store_support import TEST_CATALOGUE, store, store_at_revision, store_url  # noqa: F401 (fixtures)

from poslab.roster import read_roster
from poslab.store import SignInState, Store, schema, signin_schema

DAY = timedelta(days=1)
ROSTER = read_roster(
    b"name,email,id,section\nAda Lovelace,Ada@Uni.edu,17,A\nBob Babbage,bob@uni.edu,18,B\nCem,,c-19,B\n"
).students
ADA, BOB, CEM = "ada@uni.edu", "bob@uni.edu", "c-19"


def rows(url: str, table: str) -> list[dict]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(sa.text(f"SELECT * FROM {table}"))]  # fixed names
    finally:
        engine.dispose()


def backdate(url: str, table: str, column: str, when: datetime) -> None:
    """Move every row's ``column`` to ``when`` (as if time had passed), with the store's own type."""
    engine = sa.create_engine(url)
    target = getattr(signin_schema, table)
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(target).values({column: when}))
    finally:
        engine.dispose()


def test_a_roster_is_keyed_by_email_else_id_and_is_active_while_it_has_a_student(store):
    assert store.sign_in_state() == SignInState(False)
    change = store.replace_roster(ROSTER)
    assert (change.added, change.removed, change.kept) == (3, 0, 0)
    members = store.roster_members()
    assert [(m.key, m.name, m.section, m.link_expires) for m in members] == [
        (ADA, "Ada Lovelace", "A", None),
        (BOB, "Bob Babbage", "B", None),
        (CEM, "Cem", "B", None),
    ]
    assert store.sign_in_state().roster_active
    assert store.clear_roster().removed == 3 and not store.sign_in_state().roster_active


def test_a_link_is_kept_only_as_its_digest_and_signs_its_student_in(store, store_url):
    store.replace_roster(ROSTER)
    tokens = store.issue_links([ADA, BOB], DAY)
    assert set(tokens) == {ADA, BOB} and all(len(token) >= 43 for token in tokens.values())  # 32 random bytes
    kept = rows(store_url, "signin_links")
    assert sorted(row["token_hash"] for row in kept) == sorted(
        hashlib.sha256(token.encode()).hexdigest() for token in tokens.values()
    )
    every_cell = " ".join(str(value) for row in kept for value in row.values())
    assert not any(token in every_cell for token in tokens.values())

    assert store.link_holder(tokens[ADA]).name == "Ada Lovelace"  # the page before signing in changes nothing
    assert rows(store_url, "signin_sessions") == []
    signed = store.sign_in_with_link(tokens[ADA], DAY)
    assert signed.student == ADA and signed.session not in str(rows(store_url, "signin_sessions"))
    assert store.sign_in_state(signed.session) == SignInState(True, ADA, "Ada Lovelace")
    assert store.sign_in_state("someone-else's-cookie-value") == SignInState(True)
    again = store.sign_in_with_link(tokens[ADA], DAY)  # a second browser (a phone): its own sign-in
    assert again.session != signed.session and store.sign_in_state(again.session).student == ADA
    ada = next(member for member in store.roster_members() if member.key == ADA)
    assert ada.link_expires is not None and ada.link_used is not None


def test_links_that_sign_nobody_in_say_why(store, store_url):
    store.replace_roster(ROSTER)
    first = store.issue_links([ADA], DAY)[ADA]
    assert store.sign_in_with_link("x" * 43, DAY) == "unknown"
    assert store.sign_in_with_link("short", DAY) == "unknown"
    second = store.issue_links([ADA], DAY)[ADA]  # re-issued: the first stops working
    assert store.sign_in_with_link(first, DAY) == "revoked"
    assert store.link_holder(first) == "revoked"
    assert store.sign_in_with_link(second, DAY).student == ADA
    backdate(store_url, "signin_links", "expires_at", datetime.now(UTC) - timedelta(seconds=1))
    assert store.sign_in_with_link(second, DAY) == "expired"
    with pytest.raises(KeyError, match="not on the roster: mallory"):
        store.issue_links(["mallory"], DAY)
    with pytest.raises(ValueError, match="valid for some time"):
        store.issue_links([ADA], timedelta(0))


def test_withdrawing_or_removing_a_student_ends_their_sign_ins_in_every_process(store, store_url):
    store.replace_roster(ROSTER)
    tokens = store.issue_links([ADA, BOB], DAY)
    ada = store.sign_in_with_link(tokens[ADA], DAY).session
    bob = store.sign_in_with_link(tokens[BOB], DAY).session
    other_process = Store(store_url, catalogue=TEST_CATALOGUE)
    assert other_process.sign_in_state(ada).student == ADA  # the state is in the store, not in one process
    assert store.revoke_links([ADA]) == 1
    assert other_process.sign_in_state(ada).student is None
    assert store.sign_in_with_link(tokens[ADA], DAY) == "revoked"
    store.replace_roster([student for student in ROSTER if student.key != BOB])  # Bob leaves the class
    assert other_process.sign_in_state(bob) == SignInState(True)
    assert store.sign_in_with_link(tokens[BOB], DAY) == "revoked"
    other_process.close()


def test_a_sign_out_and_an_expired_sign_in_name_nobody(store, store_url):
    store.replace_roster(ROSTER)
    token = store.issue_links([CEM], DAY)[CEM]
    first, second = (store.sign_in_with_link(token, DAY).session for _ in range(2))
    store.end_sign_in(first)
    assert store.sign_in_state(first).student is None and store.sign_in_state(second).student == CEM
    backdate(store_url, "signin_sessions", "expires_at", datetime.now(UTC) - timedelta(seconds=1))
    assert store.sign_in_state(second).student is None


def test_a_login_is_checked_against_the_roster(store):
    assert store.sign_in_state(login_key=ADA) == SignInState(False)  # no roster: nothing to check
    store.replace_roster(ROSTER)
    assert store.sign_in_state(login_key=ADA).login_rostered
    assert not store.sign_in_state(login_key="mallory@uni.edu").login_rostered


def test_password_failures_are_counted_per_session_and_per_client(store):
    since = datetime.now(UTC) - timedelta(minutes=1)
    store.record_password_failure("tab-1", "10.0.0.7")
    store.record_password_failure("tab-1", "10.0.0.8")
    store.record_password_failure("tab-2", "10.0.0.7")
    by_session, by_client = store.password_failures("tab-1", "10.0.0.7", since)
    assert (len(by_session), len(by_client)) == (2, 2)
    assert store.password_failures("tab-3", "10.0.0.9", since) == ([], [])
    assert store.password_failures("tab-1", "10.0.0.7", datetime.now(UTC) + timedelta(seconds=1)) == ([], [])


def test_a_student_deletes_only_their_own_comment(store):
    theirs = store.add_comment("ann", "intro", "mine")
    other = store.add_comment("bob", "intro", "not yours")
    with pytest.raises(KeyError, match="by ann"):
        store.delete_comment(other, author="ann")
    store.delete_comment(theirs, author="ann")
    assert [comment.text for comment in store.comments("intro")] == ["not yours"]
    store.delete_comment(other)  # the instructor's delete: any comment
    assert store.comments("intro") == ()


def test_a_store_at_revision_0005_upgrades_to_0006_and_keeps_every_row(store_url):
    old = store_at_revision(store_url, "0005").tables
    engine = sa.create_engine(store_url)
    with engine.begin() as conn:  # as revision 0005 (version 5) left a database, with rows
        at = datetime(2026, 11, 1, tzinfo=UTC)
        conn.execute(sa.insert(old["visits"]).values(student="ann", lesson="rope", at=at))
        conn.execute(sa.insert(old["comments"]).values(student="ann", lesson="rope", text="old", at=at))
        conn.execute(
            sa.insert(old["drafts"]).values(
                student="ann", exercise="rope", code="x = 1\n", revision=2, saved_at=at, saved_by="tab"
            )
        )
    assert not sa.inspect(engine).has_table("roster_students")
    engine.dispose()
    store = Store(store_url, catalogue=TEST_CATALOGUE)
    assert store.schema_revision == "0008"
    assert store.progress("ann").lesson("rope").visited and store.comments("rope")[0].text == "old"
    assert store.draft("ann", "rope").revision == 2
    assert store.sign_in_state() == SignInState(False)  # a migrated store has no roster: typed names, as before
    assert rows(store_url, "signin_links") == [] and rows(store_url, "password_failures") == []
    store.close()
