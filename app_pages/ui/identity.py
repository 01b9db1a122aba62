"""Who is studying (a login, else a typed name kept in the URL), and the sidebar of every page."""

from __future__ import annotations

import streamlit as st

from app_pages.ui.store_calls import student_progress
from poslab.identity import NAME_PARAM, clean_name, login_configured, login_identity, resolve_identity
from poslab.store.validation import MAX_NAME_CHARS

STUDENT_KEY = "student_name"  # the typed name (without a login); mirrored in the URL as ?student=
LOGIN_KEY = "login_configured"  # this session's answer: is Streamlit's login ([auth]) configured?


def user() -> dict:
    """``st.user``, read only where a login is configured.

    Each read of ``st.user`` looks for the secrets file's ``[auth]`` section, and without a
    secrets file Streamlit looks for it again every time (several times a run). Whether a login
    is configured is asked once per session; without one, nobody is logged in.
    """
    configured = st.session_state.get(LOGIN_KEY)
    if configured is None:
        found = st.user.to_dict()
        st.session_state[LOGIN_KEY] = login_configured(found)
        return found
    return st.user.to_dict() if configured else {}


def current_student() -> str | None:
    """The logged-in account, else the name typed this session, else the one in the URL."""
    found = resolve_identity(user(), st.query_params.to_dict(), st.session_state.get(STUDENT_KEY))
    return found.name if found else None


def _forget_name() -> None:
    st.session_state.pop(STUDENT_KEY, None)
    st.query_params.pop(NAME_PARAM, None)


def _name_form() -> None:
    with st.form("student-name-form", border=False):
        typed = st.text_input("Your name", max_chars=MAX_NAME_CHARS, placeholder="e.g. Ada Lovelace",
                              help="Your progress is saved under this name.")
        if st.form_submit_button("Start", icon=":material/login:"):
            try:
                st.session_state[STUDENT_KEY] = clean_name(typed)
            except ValueError as error:
                st.error(str(error))
            else:
                st.rerun()  # redraw the whole page as this student


def _login_box(user: dict) -> None:
    account = login_identity(user)
    if account is None:
        st.info("Log in to save your progress.")
        st.button("Log in", icon=":material/login:", on_click=st.login)
    else:
        st.text(f"Signed in as {account}")  # st.text: an account name is not Markdown
        st.button("Log out", icon=":material/logout:", on_click=st.logout)


def _name_box() -> None:
    student = current_student()
    if student is None:
        _name_form()
        st.caption("Type a name to save your progress. Anyone can type any name: "
                   "this is for a classroom, not for the internet.")
        return
    st.session_state[STUDENT_KEY] = student
    st.query_params[NAME_PARAM] = student  # in the URL on every page, so a reload keeps it
    st.text(f"Studying as {student}")  # st.text: the name is whatever was typed, never Markdown
    st.button("Change name", icon=":material/logout:", on_click=_forget_name)


def overall_progress(student: str) -> None:
    progress = student_progress(student)
    if progress is not None:
        st.progress(min(progress.percent, 100.0) / 100.0, text=f"Course progress: {progress.percent:.0f}%")


def sidebar() -> None:
    """Who is studying and how far they are: drawn by app.py on every page."""
    with st.sidebar:
        account = user()
        if login_configured(account):
            _login_box(account)
        else:
            _name_box()
        student = current_student()
        if student is not None:
            overall_progress(student)
