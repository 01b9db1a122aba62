"""The code handed in: for the instructor, every submission's code as one zip, by student, exercise
and attempt, and each student's last submitted code for an exercise (the similarity check); for a
student, their own submissions and saved drafts (``<student>/<exercise>/draft/<file>``) as one zip.

In the zip, each attempt is ``<student>/<exercise>/attempt-<n>-<UTC time>/<exercise's file>``, with
``n`` counting that student's submissions of that exercise from 1, oldest first; ``index.csv`` at
the top lists them with the student's key as stored. A key that could escape the zip or name
no file (``../x``, ``/x``, ``a\\b``, ``..``) becomes a safe folder name (``safe_folder``).
Practice runs (of the public tests) and attempts kept without code are not exported.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa

from poslab.exercises import get_exercise
from poslab.vocabulary import AttemptKind

from . import schema
from .workspace import Draft

UNSAFE_CHARS = set('/\\:*?"<>|')  # a separator, or refused in a file name on Windows
INDEX_FILE = "index.csv"


@dataclass(frozen=True)
class SubmittedCode:
    attempt_id: int
    student: str
    exercise: str
    time: datetime  # UTC
    score: float
    max_score: float
    code: str


def safe_folder(name: str) -> str:
    """``name`` as one folder name that stays inside the zip: separators and characters Windows
    refuses become ``_``, as do the dots of a name made only of dots."""
    cleaned = "".join("_" if char in UNSAFE_CHARS or not char.isprintable() else char for char in name)
    return "_" * len(cleaned) if set(cleaned) <= {"."} else cleaned


def attempt_folder(number: int, time: datetime) -> str:
    return f"attempt-{number}-{time.astimezone(UTC):%Y%m%dT%H%M%SZ}"


def _student_folders(students: list[str]) -> dict[str, str]:
    """A safe folder per student; two keys made the same by it get ``-2``, ``-3`` in sort order."""
    folders: dict[str, str] = {}
    taken: set[str] = set()
    for student in sorted(students):
        folder, suffix = safe_folder(student), 2
        while folder.casefold() in taken:
            folder, suffix = f"{safe_folder(student)}-{suffix}", suffix + 1
        taken.add(folder.casefold())
        folders[student] = folder
    return folders


def code_zip(submissions: tuple[SubmittedCode, ...], drafts: tuple[Draft, ...] = ()) -> bytes:
    """The zip of ``submissions`` (oldest first), with its ``index.csv``; each of ``drafts`` (the
    editor's code as last saved) as ``<student>/<exercise>/draft/<file>``."""
    folders = _student_folders(sorted({item.student for item in (*submissions, *drafts)}))
    counts: dict[tuple[str, str], int] = defaultdict(int)
    index = io.StringIO()
    rows = csv.writer(index)
    rows.writerow(["student", "exercise", "attempt", "submitted_utc", "score", "max_score", "path"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for item in submissions:
            counts[item.student, item.exercise] += 1
            number = counts[item.student, item.exercise]
            filename = get_exercise(item.exercise).filename
            path = f"{folders[item.student]}/{item.exercise}/{attempt_folder(number, item.time)}/{filename}"
            entry = zipfile.ZipInfo(path, date_time=item.time.astimezone(UTC).timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, item.code)
            stamp = item.time.astimezone(UTC).isoformat()
            rows.writerow([item.student, item.exercise, number, stamp, item.score, item.max_score, path])
        for draft in drafts:
            path = f"{folders[draft.student]}/{draft.exercise}/draft/{get_exercise(draft.exercise).filename}"
            archive.writestr(
                zipfile.ZipInfo(path, date_time=draft.saved_at.astimezone(UTC).timetuple()[:6]), draft.code
            )
            rows.writerow(
                [draft.student, draft.exercise, "draft", draft.saved_at.astimezone(UTC).isoformat(), "", "", path]
            )
        archive.writestr(INDEX_FILE, index.getvalue())
    return buffer.getvalue()


class CodeExportMixin:
    """Store methods that read handed-in code (``Store`` provides ``_read`` and ``catalogue``)."""

    def submitted_code(self, student: str | None = None) -> tuple[SubmittedCode, ...]:
        """Every submission kept with its code (``student``'s only, if given), oldest first (ties by id)."""
        table = schema.attempts
        query = (
            sa.select(*(table.c[name] for name in ("id", "student", "exercise", "at", "score", "max_score", "code")))
            .where(table.c.kind == AttemptKind.SUBMISSION, table.c.code.is_not(None))
            .order_by(table.c.at, table.c.id)
        )
        if student is not None:
            query = query.where(table.c.student == student)
        rows = self._read(lambda conn: conn.execute(query).all())
        return tuple(
            SubmittedCode(row.id, row.student, row.exercise, row.at, row.score, row.max_score, row.code) for row in rows
        )

    def export_code_zip(self) -> bytes:
        """Every submission's code as one zip (the module's docstring gives its layout)."""
        return code_zip(self.submitted_code())

    def student_work_zip(self, student: str) -> bytes:
        """One student's own work: every submission of theirs and each exercise's saved draft."""
        drafts = (self.draft(student, exercise) for exercise in self.catalogue.exercises)
        return code_zip(self.submitted_code(student), tuple(draft for draft in drafts if draft is not None))

    def last_submitted_code(self, exercise: str) -> dict[str, str]:
        """Each student's code of their last submission of ``exercise`` that kept code."""
        exercise = self.catalogue.require_exercise(exercise)
        table = schema.attempts
        query = (
            sa.select(table.c.student, table.c.code)
            .where(table.c.kind == AttemptKind.SUBMISSION, table.c.exercise == exercise, table.c.code.is_not(None))
            .order_by(table.c.at, table.c.id)
        )
        rows = self._read(lambda conn: conn.execute(query).all())
        return {row.student: row.code for row in rows}  # the later overwrites the earlier
