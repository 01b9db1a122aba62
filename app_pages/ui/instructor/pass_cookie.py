"""The Streamlit side of the Instructor page's pass (``poslab.instructor_pass``).

``hand_over`` (after the password was typed right) has the browser exchange a ticket for the pass
cookie at the app's route; ``unlocks`` reads the cookie the browser sent when this session opened;
``withdraw`` (on "Lock this page") has the browser delete it, and this session ignores it from then.
The script is the page's own and sends nothing but the ticket, to this app only.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import streamlit as st

from app_pages.runtime.server import app_path
from app_pages.ui.identity import own_page_cookie
from poslab.instructor_pass import PASS_COOKIE, PASS_ROUTE, sign, valid

SCRIPT_KEY = "instructor-pass-script"  # the script this session's page runs once: hand over or end
LOCKED_KEY = "instructor-locked-by-hand"  # "Lock this page" was pressed: the cookie counts no more


def pass_cookie() -> str | None:
    """The pass, from the app's own page only (a page on another port of this host gets nothing)."""
    return own_page_cookie(PASS_COOKIE)


def unlocks(password: str) -> bool:
    """The browser came with a valid pass, and this session was not locked by hand since."""
    return not st.session_state.get(LOCKED_KEY) and valid(pass_cookie(), "pass", password, datetime.now(UTC))


def _script(path: str, body: str) -> str:
    return (
        f"<script>fetch({json.dumps(path)}, {{method: 'POST', body: {json.dumps(body)}, "
        "credentials: 'same-origin', cache: 'no-store'});</script>"
    )


def hand_over(password: str) -> None:
    st.session_state.pop(LOCKED_KEY, None)
    ticket = sign("ticket", password, datetime.now(UTC))
    st.session_state[SCRIPT_KEY] = _script(f"{app_path()}{PASS_ROUTE}", ticket)


def withdraw() -> None:
    st.session_state[LOCKED_KEY] = True
    st.session_state[SCRIPT_KEY] = _script(f"{app_path()}{PASS_ROUTE}/end", "")


def run_script() -> None:
    """Run the pending hand-over or withdrawal in the browser, once."""
    script = st.session_state.pop(SCRIPT_KEY, None)
    if script is not None:
        st.html(script, unsafe_allow_javascript=True)
