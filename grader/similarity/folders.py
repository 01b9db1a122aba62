"""A folder of students' files for ``python -m grader similarity DIR``: one folder per student,
named for the student, each with the exercise's file (``rope.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.submissions import MAX_FILE_BYTES


@dataclass(frozen=True)
class FolderRead:
    codes: dict[str, str]  # student (the folder's name) -> their code
    notes: tuple[str, ...]  # one sentence per student folder skipped or read with care; each names one student


def shown(name: str) -> str:
    """A folder's name as printed: quoted with escapes if it holds a control character (a newline)."""
    return name if name.isprintable() else ascii(name)


def _read_one(student: str, path: Path) -> tuple[str | None, str | None]:
    """(code, note): the code or None, and a sentence when something was off."""
    name = shown(student)
    if not path.is_file():
        return None, f"skipped {name}: no {path.name} in the folder"
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        return None, f"skipped {name}: {path.name} is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit"
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        note = f"read {name}'s {path.name} with replacement characters: it is not UTF-8"
        return data.decode("utf-8", errors="replace"), note


def read_student_folders(directory: Path, filename: str) -> FolderRead:
    """Each student folder's ``filename``; folders whose name starts with a dot are not students."""
    codes: dict[str, str] = {}
    notes: list[str] = []
    for folder in sorted(directory.iterdir()):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        code, note = _read_one(folder.name, folder / filename)
        if code is not None:
            codes[folder.name] = code
        if note is not None:
            notes.append(note)
    return FolderRead(codes, tuple(notes))
