"""The Instructor page's lock: a password from the environment or the secrets, unlocked per session."""

from __future__ import annotations

import streamlit as st

from poslab.config import Settings
from poslab.identity import password_matches

UNLOCKED_KEY = "instructor_unlocked"  # True once the Instructor page's password was right


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
    return bool(st.session_state.get(UNLOCKED_KEY))


def unlock(typed: str | None, password: str) -> bool:
    """Unlock this session if ``typed`` is the password (compared in constant time)."""
    st.session_state[UNLOCKED_KEY] = password_matches(typed, password)
    return st.session_state[UNLOCKED_KEY]


def lock_instructor() -> None:
    st.session_state[UNLOCKED_KEY] = False
