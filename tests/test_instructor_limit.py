"""The Instructor password's wrong attempts are limited: 5 a minute per browser session and per client
address, kept in the store (so several app processes share the count), with a sentence that says
when to try again; while limited, not even the right password is compared.

AppTest's sessions all come from one address (no connection: the loopback's), so a new session
after five failures is still limited by the address; the store's own counts are read back.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from poslab.store import Store
from poslab.store.signin_schema import password_failures
from tests.app_harness import button, go, open_app

PASSWORD = "correct horse"
WAIT = re.compile(
    r"Too many wrong passwords from this browser or this address\. Try again in (\d+) s "
    r"\(at \d\d:\d\d:\d\d UTC\)\."
)


def try_password(at, typed: str) -> list[str]:
    at.main.text_input[0].input(typed)
    button(at, "Unlock").click().run()
    assert not at.exception, at.exception
    return [box.value for box in at.error]


def test_five_wrong_passwords_then_a_wait_even_for_the_right_one_and_from_a_new_session(app_env, monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    at = go(open_app(), "app_pages/instructor.py")
    for attempt in range(1, 5):
        assert try_password(at, f"guess {attempt}") == ["That password is not right."]
    fifth = try_password(at, "guess 5")
    assert len(fifth) == 1 and fifth[0].startswith("That password is not right. ") and WAIT.search(fifth[0])
    assert 55 <= int(WAIT.search(fifth[0]).group(1)) <= 60
    limited = try_password(at, PASSWORD)  # the right one, but not compared now
    assert WAIT.search(limited[0]) and not at.dataframe

    elsewhere = go(open_app(), "app_pages/instructor.py")  # a new session, the same address
    assert WAIT.search(try_password(elsewhere, PASSWORD)[0]) and not elsewhere.dataframe
    by_session, by_address = Store(app_env).password_failures(
        "no-such-session", "127.0.0.1", datetime.now(UTC) - timedelta(minutes=1)
    )
    assert (len(by_session), len(by_address)) == (0, 5)  # the limited tries were not counted as failures


def test_the_limit_lifts_after_the_minute(app_env, monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    store = Store(app_env)
    for _ in range(5):
        store.record_password_failure("another-tab", "127.0.0.1")
    at = go(open_app(), "app_pages/instructor.py")
    assert WAIT.search(try_password(at, PASSWORD)[0])
    engine = sa.create_engine(app_env)  # a minute passes: the failures leave the window
    with engine.begin() as conn:
        conn.execute(sa.update(password_failures).values(at=datetime.now(UTC) - timedelta(seconds=61)))
    engine.dispose()
    assert try_password(at, PASSWORD) == []  # unlocked: the class's page
    assert any(header.value == "The class" for header in at.header)
