"""The Instructor page's lock: a password from the environment or the secrets, unlocked per session.

The password is compared in constant time. Wrong ones are limited: after
``PASSWORD_FAILURE_LIMIT`` within ``PASSWORD_WINDOW`` from one browser session, or from one
client address, that session or address must wait until the window has passed, and is told when
(no password is even compared meanwhile). The failures are rows in the store, so the limit holds
across app processes. The client address is the connection's, or behind a trusted reverse proxy
(``POSLAB_TRUSTED_PROXIES``) the one its ``X-Forwarded-For`` gives (``poslab.signin.client_address``),
an IPv4-mapped IPv6 address as its IPv4 one.

A shared address (a campus NAT, a proxy that is not trusted) lets one client's failures wait out
another on the same address. A named instructor (``POSLAB_INSTRUCTORS``) signed in by a login or
a roster link (a typed name proves nothing) is limited by their own session only: nobody else's
wrong passwords ever keep them out (``password_limits``).
An unlock lasts the browser session, across reloads: ``app_pages/ui/instructor/pass_cookie.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import streamlit as st

from app_pages.ui.identity import UNLOCKED_KEY, resolution, session_id
from app_pages.ui.instructor import pass_cookie
from app_pages.ui.store_calls import store_call
from poslab.config import Settings
from poslab.identity import PASSWORD_WINDOW, named_instructor, password_limits, password_matches, password_wait
from poslab.signin import client_address

WRONG = "That password is not right."


def instructor_password() -> str | None:
    """POSLAB_INSTRUCTOR_PASSWORD, else the ``instructor_password`` secret, else None."""
    configured = Settings.from_env().instructor_password
    if configured:
        return configured
    try:
        secret = st.secrets.get("instructor_password")
    except FileNotFoundError:  # no secrets.toml at all
        return None
    return str(secret) if secret else None


def instructor_unlocked() -> bool:
    """Unlocked in this session, or by this browser's pass (kept for the session's later runs)."""
    if st.session_state.get(UNLOCKED_KEY):
        return True
    if pass_cookie.pass_cookie() is None:  # most runs: no secret is read
        return False
    password = instructor_password()
    if password is not None and pass_cookie.unlocks(password):
        st.session_state[UNLOCKED_KEY] = True  # the comments' delete buttons read the session
        return True
    return False


def client() -> str:
    """This browser's address, as far as it can be believed (see the module's docstring)."""
    peer = st.context.ip_address
    return client_address(
        peer if isinstance(peer, str) else None,  # AppTest's context has no address
        st.context.headers.get_all("X-Forwarded-For"),
        Settings.from_env().trusted_proxies,
    )


def _wait() -> timedelta | None:
    """How long this session and address must wait before another try; a store that cannot say locks."""
    now = datetime.now(UTC)
    failures = store_call(
        "check the recent password attempts",
        lambda opened: opened.password_failures(session_id(), client(), now - PASSWORD_WINDOW),
        None,
    )
    if failures is None:
        return PASSWORD_WINDOW
    instructor = named_instructor(resolution().identity, Settings.from_env().instructors)
    return password_wait(password_limits(failures, instructor), now)


def wait_sentence(wait: timedelta) -> str:
    seconds = max(1, int(wait.total_seconds() + 0.999))
    at = datetime.now(UTC) + wait
    return (
        f"Too many wrong passwords from this browser or this address. Try again in {seconds} s (at {at:%H:%M:%S} UTC)."
    )


def unlock(typed: str | None, password: str) -> str | None:
    """Unlock this session if ``typed`` is the password; else the sentence that says why not."""
    wait = _wait()
    if wait is not None:
        return wait_sentence(wait)
    if password_matches(typed, password):
        st.session_state[UNLOCKED_KEY] = True
        pass_cookie.hand_over(password)
        return None
    st.session_state[UNLOCKED_KEY] = False
    store_call(
        "keep count of the wrong passwords", lambda opened: opened.record_password_failure(session_id(), client()), None
    )
    wait = _wait()
    return WRONG if wait is None else f"{WRONG} {wait_sentence(wait)}"


def lock_instructor() -> None:
    st.session_state[UNLOCKED_KEY] = False
    pass_cookie.withdraw()
