"""The sidebar of every page (app.py draws it): who is studying, how to sign in, how far they are.

One box per identity mode (``poslab.identity``): *Log in* / *Log out* with a login; with a roster,
the signed-in student and *Sign out*, or how to sign in; without either, the name form (the
name is kept in the URL as ``?student=``, for self-study on one's own machine). A refused
``?student=`` or sign-in link is said here, once, and taken out of the address.
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui import browser_memory, identity
from app_pages.ui.identity import STUDENT_KEY, resolution, user
from app_pages.ui.store_calls import read_progress_for_run, store_call
from poslab.identity import NAME_PARAM, Identity, Resolution, clean_name, login_account, sign_in_prompt
from poslab.signin import REFUSALS, STATUS_PARAM
from poslab.store.validation import MAX_NAME_CHARS

SELF_STUDY_WARNING = (
    "Type a name to save your progress. Anyone can type any name: this is for self-study on "
    "your own machine, not for a class on a network (a class signs in with a roster or a login)."
)


FORGOT_KEY = "name_forgotten"  # "Change name" was clicked: the browser forgets the name, and restores none


def _forget_name() -> None:
    st.session_state.pop(STUDENT_KEY, None)
    st.query_params.pop(NAME_PARAM, None)
    st.session_state[FORGOT_KEY] = True


def _name_form() -> None:
    with st.form("student-name-form", border=False):
        typed = st.text_input(
            "Your name",
            max_chars=MAX_NAME_CHARS,
            placeholder="e.g. Ada Lovelace",
            help="Your progress is saved under this name.",
        )
        if st.form_submit_button("Start", icon=":material/login:"):
            try:
                st.session_state[STUDENT_KEY] = clean_name(typed)
            except ValueError as error:
                st.error(str(error))
            else:
                st.session_state.pop(FORGOT_KEY, None)
                st.rerun()  # redraw the whole page as this student


def _name_box(found: Resolution) -> None:
    if found.identity is None:
        _name_form()
        st.caption(SELF_STUDY_WARNING)
        return
    student = found.identity.name
    st.session_state[STUDENT_KEY] = student
    st.query_params[NAME_PARAM] = student  # in the URL on every page, so a reload keeps it
    st.text(f"Studying as {student}")  # st.text: the name is whatever was typed, never Markdown
    st.button("Change name", icon=":material/logout:", on_click=_forget_name)


def _login_box() -> None:
    account = login_account(user())
    if account is None:
        st.info("Log in to save your progress.")
        st.button("Log in", icon=":material/login:", on_click=st.login)
    else:
        # st.text: an account name is not Markdown
        st.text(f"Signed in as {Identity(account.key, 'login', account.display).label}")
        st.button("Log out", icon=":material/logout:", on_click=st.logout)


def _sign_out() -> None:
    cookie = identity.sign_in_cookie()
    if cookie:
        store_call("sign you out", lambda opened: opened.end_sign_in(cookie), None)


def _roster_box(found: Resolution) -> None:
    if found.identity is None:
        st.info(
            sign_in_prompt("roster", "save your progress") + " Reading the lessons needs no sign-in.",
            icon=":material/key:",
        )
        return
    st.text(f"Signed in as {found.identity.label}")  # the roster's name: plain text, never Markdown
    st.button(
        "Sign out",
        icon=":material/logout:",
        on_click=_sign_out,
        help="Signs this browser out; your personal link signs you in again.",
    )


def _refusals(found: Resolution) -> None:
    """A refused sign-in link or ?student= said once, and out of the address (a reload would repeat it)."""
    refused_link = st.query_params.get(STATUS_PARAM)
    if refused_link is not None:
        st.warning(REFUSALS.get(refused_link, REFUSALS["unknown"]), icon=":material/link_off:")
        st.query_params.pop(STATUS_PARAM, None)
    if found.refused:
        st.warning(found.refused, icon=":material/block:")
    if found.mode != "name":
        st.query_params.pop(NAME_PARAM, None)
        st.session_state.pop(STUDENT_KEY, None)


def overall_progress(student: str) -> None:
    progress = read_progress_for_run(student)
    if progress is not None:
        st.progress(min(progress.percent, 100.0) / 100.0, text=f"Course progress: {progress.percent:.0f}%")


def _name_wish(found: Resolution) -> browser_memory.NameWish:
    """What the browser does with the name it remembers (typed-name mode only)."""
    if found.mode != "name":
        return "leave"
    if found.identity is not None:
        return "remember"
    return "forget" if st.session_state.get(FORGOT_KEY) else "restore"


def sidebar() -> None:
    """Who is studying and how far they are: drawn by app.py on every page."""
    found = resolution()
    with st.sidebar:
        key = found.identity.name if found.identity else None
        browser_memory.remember(_name_wish(found), key, owner=key)
        _refusals(found)
        if found.identity is not None and found.identity.source == "roster":
            _roster_box(found)
        elif found.mode == "login":
            _login_box()
        elif found.mode == "roster":
            _roster_box(found)
        else:
            _name_box(found)
        if found.identity is not None:
            overall_progress(found.identity.name)
