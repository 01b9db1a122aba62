"""The app's one progress store, and every call into it ending in a sentence when it fails.

A call that takes longer than a store call takes (``GATE_FREED_AFTER``: the store is busy, a server
restarts, a disk is slow) lets the run's turn go (``run_gate.let_go_after``), so other students' pages
go on while this one waits; after ``NOTICE_AFTER`` the page says what it is waiting for. The store
bounds the wait (``StoreLimits``).
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from typing import TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from app_pages.runtime.process import one_per_process
from app_pages.runtime.run_gate import page_runs
from poslab.config import Settings
from poslab.roles import ActionRefused
from poslab.store import DATABASE_ERRORS, Store, StoreError, StudentProgress

T = TypeVar("T")
# (student, their progress) as the sidebar read it at the start of this run: a click's callbacks
# (a quick check revealed) run before the script, and "mark lesson done" reruns at once, so nothing
# later in a run changes what a page asks of it.
RUN_PROGRESS_KEY = "progress_this_run"
GATE_FREED_AFTER = 0.2  # seconds: a store call takes a few milliseconds when nothing is wrong
NOTICE_AFTER = 1.5


@one_per_process  # shared with the server's start-up and its sign-in route (process.py)
def open_store(url: str) -> Store:
    return Store(url)


def store() -> Store | None:
    """The app's one Store (cached); None, after saying why, when it cannot be opened."""
    url = Settings.from_env().db_url
    try:
        return open_store(url)
    except ImportError as error:  # e.g. a postgresql:// URL without its driver installed
        st.error(
            f"Progress is not being saved: the database driver is missing ({error}). "
            "Install it (see README) and restart the app."
        )
    except (ValueError, *DATABASE_ERRORS) as error:
        st.error(f"Progress is not being saved: the database address POSLAB_DB_URL is not usable ({error}).")
    return None


def _say_waiting(action: str) -> Callable[[], None]:
    """What the watchdog calls when a call has waited ``NOTICE_AFTER``: a toast in this run's page."""
    context = get_script_run_ctx(suppress_warning=True)

    def toast() -> None:
        add_script_run_ctx(threading.current_thread(), context)  # the page's, in a thread of its own
        st.toast(
            f"Waiting for the progress database to {action}: it is slow to answer right now. "
            "This page goes on as soon as it does, or says what could not be done.",
            icon=":material/hourglass_top:",
        )

    def start() -> None:
        if context is not None:
            threading.Thread(target=toast, name="store-call-notice", daemon=True).start()

    return start


def off_the_gate(action: str, work: Callable[[], T]) -> T:
    """``work()``, a call that writes to or reads the store; if it waits, other students' pages go on
    meanwhile, and after ``NOTICE_AFTER`` the page says so. What it raises is raised here."""
    gate = page_runs()
    notice = gate.watchdog.schedule(NOTICE_AFTER, _say_waiting(action))
    try:
        with gate.let_go_after(GATE_FREED_AFTER):
            return work()
    finally:
        gate.watchdog.cancel(notice)


def store_call(action: str, call: Callable[[Store], T], fallback: T, *, in_place: bool = False) -> T:
    """``call(store)``, or ``fallback`` after a sentence saying what could not be done and why.

    ``in_place``: a call that never waits on the database (a queued write) runs in this thread."""
    opened = store()
    if opened is None:
        return fallback
    try:
        return call(opened) if in_place else off_the_gate(action, lambda: call(opened))
    except (ValueError, KeyError) as error:
        st.warning(f"Could not {action}: {error.args[0] if error.args else error}")
    except ActionRefused as error:  # a TA asking for an instructor's action: the sentence says who may
        st.error(f"Could not {action}. {error}")
    except StoreError as error:  # busy or too new: its message says what to do
        st.error(f"Could not {action}. {error}")
    except DATABASE_ERRORS as error:
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            st.error(f"Could not {action}: the disk that holds the progress database is full. Tell your instructor.")
            return fallback
        st.error(
            f"Could not {action}: the progress database cannot be reached right now "
            f"({type(error).__name__}). Please try again in a moment; tell your instructor if it persists."
        )
    return fallback


def student_progress(student: str) -> StudentProgress | None:
    return store_call("load your progress", lambda opened: opened.progress(student), None)


def read_progress_for_run(student: str) -> StudentProgress | None:
    """The student's progress, read now and kept for the rest of this run (the sidebar calls it)."""
    progress = student_progress(student)
    st.session_state[RUN_PROGRESS_KEY] = (student, progress)
    return progress


def progress_this_run(student: str) -> StudentProgress | None:
    """The progress the sidebar read at the start of this run; read now if it read none for this student
    (a page run alone, under AppTest, or a store that failed)."""
    kept = st.session_state.get(RUN_PROGRESS_KEY)
    if kept is not None and kept[0] == student and kept[1] is not None:
        return kept[1]
    return student_progress(student)
