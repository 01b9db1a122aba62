"""The student's own ``exercises/`` folder, where it is theirs (a course on their laptop): whether
it is shown, its files as a zip, and grading it as it is on disk."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import streamlit as st

from app_pages.ui.exercise.grading import in_student_bundle, submit
from poslab.config import PROJECT_ROOT
from poslab.exercises import Exercise

LOCAL_WORKSPACE_ENV = "POSLAB_LOCAL_WORKSPACE"


def local_workspace() -> bool:
    """Whether the exercises/ folder next to the app is this student's own (a course on their laptop).

    ``POSLAB_LOCAL_WORKSPACE=1`` or ``0`` decides; unset, it is on in a student bundle (which a
    student runs on their own machine) and off in a checkout, which may serve a class: there the
    folder is the server's, not the student's.
    """
    raw = os.environ.get(LOCAL_WORKSPACE_ENV, "").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    return in_student_bundle()


def exercises_folder() -> Path | None:
    """The checkout's or bundle's ``exercises/`` folder with the student's files, if there is one."""
    folder = PROJECT_ROOT / "exercises"
    return folder if folder.is_dir() and any(folder.glob("*.py")) else None


def exercises_zip(folder: Path) -> bytes:
    """The stubs and public tests of ``folder`` as a zip (``exercises/<name>.py``), for download."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.glob("*.py")):
            archive.write(path, f"exercises/{path.name}")
    return buffer.getvalue()


def submit_folder(student: str, folder: Path, exercises: tuple[Exercise, ...]) -> bool:
    """Grade the student's exercises/ folder as it is on disk: every exercise file found there."""
    files = {
        item.filename: (folder / item.filename).read_text(encoding="utf-8", errors="replace")
        for item in exercises
        if (folder / item.filename).is_file()
    }
    if not files:
        st.error(f"No exercise files in {folder}.")
        return False
    return submit(student, files, tuple(item.id for item in exercises if item.filename in files))
