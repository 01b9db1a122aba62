"""The course's assignments (``POSLAB_ASSIGNMENTS``), read once per process and file version, and
the extensions that hold for a page run: the file's and the store's (set on the Instructor page).

A bad file is one sentence on the page (``AssignmentsError`` names the file and the key), never a
traceback; the pages then go on without deadlines.
"""

from __future__ import annotations

import os

import streamlit as st

from app_pages.ui.store_calls import store_call
from grader.lms.grades import suite_maxima
from poslab.assignments import ENV_VAR, AssignmentsError, Course, course_from_env, load_assignments
from poslab.course_grades import KnownExtensions, MergedExtensions, merged_extensions


@st.cache_resource(show_spinner=False, max_entries=4)
def _load(path: str, modified: float) -> Course | str:
    """The file's course, or the sentence saying what is wrong (``modified``: a changed file is read again)."""
    try:
        return load_assignments(path)
    except AssignmentsError as error:
        return str(error)


def _file() -> str:
    return os.environ.get(ENV_VAR, "").strip()


def configured_course() -> Course | None:
    """The assignments file's course; None without one, or (after saying why) when it is bad."""
    path = _file()
    if not path:
        return None
    try:
        modified = os.stat(path).st_mtime
    except OSError:
        modified = 0.0  # load_assignments says it cannot be read
    found = _load(path, modified)
    if isinstance(found, str):
        st.error(f"The course's assignments cannot be used, so no deadline is shown: {found}", icon=":material/error:")
        return None
    return found


def course_or_default() -> Course | None:
    """The file's course, or the one default assignment (every exercise, no deadline) without a file."""
    if not _file():
        return course_from_env(suite_maxima())
    return configured_course()


def extensions(course: Course, assignment_id: str) -> MergedExtensions:
    """The file's extensions and the store's (read now), for one assignment."""
    stored = store_call("load the extensions", lambda store: dict(store.extensions(assignment_id)), {})
    return merged_extensions(course.extensions, KnownExtensions({assignment_id: stored}))
