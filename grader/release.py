"""``python -m grader release DIR``: the student bundle.

What goes in is an allow-list of folders and files (``INCLUDE``): the app, its pages, the library,
the exercise stubs and public tests, the requirements, the README, the Streamlit config, and the
grader, with which the bundle's app grades a student's work against the public tests
(``grader.api``, ``GradingMode.PUBLIC``). Of ``grader/`` everything goes in (the judge's side, the
sandboxed side ``grader/sandboxed/``, the Student interface, the results) except its instructor
parts (``INSTRUCTOR_PARTS``): the hidden suite (``grader/suite/``, tests and helpers), the mutants
and the instructor's commands. Then ``EXCLUDED`` takes out what must never ship even inside an
allowed folder: instructor pages and files, caches. ``tests/`` and ``.git`` are not on the list.

``BUNDLE_MARKER`` (written last) tells the app and ``grader.api.running_in_bundle()`` that this
is a bundle. The bundle is written to a temporary folder beside DIR and renamed into place, so
an interrupted release leaves no half bundle.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import tempfile
from pathlib import Path

import grader
from grader.api import BUNDLE_MARKER, PROJECT_ROOT

INCLUDE = (
    "app.py",
    "app_pages",
    "poslab",
    "exercises",
    "requirements.txt",
    "requirements-dev.txt",
    "README.md",
    ".streamlit",
    "grader",
)
# The parts of grader/ a student never gets: the hidden tests and their helpers, the mutants,
# the instructor's commands (the CLI, this release, the Gradescope packaging).
INSTRUCTOR_PARTS = (
    "grader/suite",
    "grader/mutants",
    "grader/mutation",
    "grader/variants",
    "grader/cli",
    "grader/__main__.py",
    "grader/release.py",
    "grader/gradescope",
    "grader/lms",
)
EXCLUDED = ("*instructor*", "__pycache__", "*.pyc", ".pytest_cache", "secrets.toml", "*.db", "*.db-*")
# Whatever the lists say, none of these may end up in a bundle (checked after copying).
FORBIDDEN = (
    "grader/suite/*",
    "grader/mutants/*",
    "grader/mutation/*",
    "grader/variants/*",
    "tests/*",
    ".git/*",
    "*instructor*",
)


class ReleaseError(Exception):
    pass


def excluded(relative: str) -> bool:
    path = Path(relative)
    if any(path == Path(part) or Path(part) in path.parents for part in INSTRUCTOR_PARTS):
        return True
    return any(fnmatch.fnmatch(part, pattern) for part in path.parts for pattern in EXCLUDED)


def bundle_files(root: Path = PROJECT_ROOT) -> list[str]:
    """The project-relative paths a bundle holds, sorted."""
    files = []
    for entry in INCLUDE:
        path = root / entry
        if path.is_file():
            files.append(entry)
        elif path.is_dir():
            files += [str(file.relative_to(root)) for file in path.rglob("*") if file.is_file()]
    return sorted(file for file in files if not excluded(file))


def build_bundle(target: Path, root: Path = PROJECT_ROOT) -> list[str]:
    """Write the bundle to ``target`` (new or empty); return the files copied."""
    target = target.resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ReleaseError(f"{target} exists and is not an empty folder")
    if target == root or root in target.parents:
        raise ReleaseError("write the bundle outside the project folder")
    files = bundle_files(root)
    leaked = [file for file in files if any(fnmatch.fnmatch(file, pattern) for pattern in FORBIDDEN)]
    if leaked:
        raise ReleaseError(f"refusing to release instructor-only files: {', '.join(leaked)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for file in files:
            destination = staging / file
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / file, destination)
        marker = {"bundle": True, "grader_version": grader.__version__, "files": len(files)}
        (staging / BUNDLE_MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
        if target.exists():
            target.rmdir()  # empty, checked above
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files
