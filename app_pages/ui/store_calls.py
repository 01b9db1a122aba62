"""The app's one progress store, and every call into it ending in a sentence when it fails."""

from __future__ import annotations

from typing import Callable, TypeVar

import streamlit as st

from app_pages.ui.process import one_per_process
from poslab.config import Settings
from poslab.store import DATABASE_ERRORS, Store, StoreError, StudentProgress

T = TypeVar("T")


@one_per_process  # shared with the server's start-up and its sign-in route (process.py)
def open_store(url: str) -> Store:
    return Store(url)


def store() -> Store | None:
    """The app's one Store (cached); None, after saying why, when it cannot be opened."""
    url = Settings.from_env().db_url
    try:
        return open_store(url)
    except ImportError as error:  # e.g. a postgresql:// URL without its driver installed
        st.error(f"Progress is not being saved: the database driver is missing ({error}). "
                 "Install it (see README) and restart the app.")
    except (ValueError, *DATABASE_ERRORS) as error:
        st.error(f"Progress is not being saved: the database address POSLAB_DB_URL is not usable ({error}).")
    return None


def store_call(action: str, call: Callable[[Store], T], fallback: T) -> T:
    """``call(store)``, or ``fallback`` after a sentence saying what could not be done and why."""
    opened = store()
    if opened is None:
        return fallback
    try:
        return call(opened)
    except (ValueError, KeyError) as error:
        st.warning(f"Could not {action}: {error.args[0] if error.args else error}")
    except StoreError as error:  # busy or too new: its message says what to do
        st.error(f"Could not {action}. {error}")
    except DATABASE_ERRORS as error:
        st.error(f"Could not {action}: the progress database cannot be reached right now "
                 f"({type(error).__name__}). Please try again in a moment; tell your instructor if it persists.")
    return fallback


def student_progress(student: str) -> StudentProgress | None:
    return store_call("load your progress", lambda opened: opened.progress(student), None)
