"""One submission per student from an LMS bulk download, ready to grade.

``read_export(path)`` opens a Canvas, Moodle or Gradescope zip (recognised by its entries' names,
``grader.lms.naming``), reads it in memory (``grader.lms.zipread``: no extraction, ``..`` and
absolute paths refused) and returns an ``LmsExport``: per student the name, the LMS id, whether
the work was late, and a ``grader.submissions.Submission`` under the project's one set of rules
(the same size limits and sentences as ``load_submission``: a file that is not UTF-8, a file too
large, no .py file). The submission's id is built from the name and the LMS id (``lovelaceada_101``),
ASCII only, so it is a safe folder name for ``DIR/<id>/results.json``.
"""

from __future__ import annotations

import re
import unicodedata
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from grader.lms.naming import (
    MAX_METADATA_BYTES,
    METADATA,
    LmsName,
    Piece,
    canvas_pieces,
    gradescope_pieces,
    moodle_pieces,
    recognise,
)
from grader.lms.zipread import DamagedArchive, Entry, ExportError, list_entries, open_zip, read_entry
from grader.settings import GraderSettings
from grader.submissions import MAX_FILE_BYTES, Submission, is_submitted_file, load_submission, size_problem

NOT_AN_EXPORT = (
    "{name} is a zip file, but not a Canvas, Moodle or Gradescope bulk download: expected files named "
    "like lovelaceada_101_2001_rope.py (Canvas), folders like 'Ada Lovelace_5001_assignsubmission_file' "
    "(Moodle), or submission_<id>/ folders with a submission_metadata.yml (Gradescope)."
)


@dataclass(frozen=True)
class LmsSubmission:
    lms: LmsName
    name: str  # as the LMS names the student (Canvas: 'lovelaceada'; Moodle, Gradescope: 'Ada Lovelace')
    lms_id: str  # Canvas user id, Moodle participant id, Gradescope email (else SID); "" when unknown
    late: bool  # Canvas's LATE_ mark; Moodle and Gradescope downloads do not say
    submission: Submission
    submitted_at: datetime | None = None  # Gradescope's :created_at:; Canvas and Moodle downloads do not say

    @property
    def submission_id(self) -> str:
        return self.submission.submission_id

    @property
    def files(self) -> Mapping[str, str]:
        return self.submission.files

    @property
    def problems(self) -> tuple[str, ...]:
        return self.submission.problems


@dataclass(frozen=True)
class LmsExport:
    lms: LmsName
    submissions: tuple[LmsSubmission, ...]  # sorted by id (the name folded to ASCII, then the LMS id)
    warnings: tuple[str, ...]  # refused entries, entries left out, name clashes: sentences


def is_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def read_export(path: str | Path, settings: GraderSettings | None = None) -> LmsExport:
    """The submissions in an LMS bulk download; ExportError when it is not one or cannot be read."""
    path = Path(path)
    settings = settings or GraderSettings.from_env()
    try:
        return _read_export(path, settings)
    except DamagedArchive as error:
        raise ExportError(
            f"{path.name} is damaged: {error} Nothing of it was graded; download it from the LMS again."
        ) from None


def _read_export(path: Path, settings: GraderSettings) -> LmsExport:
    with open_zip(path) as archive:
        entries, warnings = list_entries(archive)
        lms = recognise(entries)
        if lms is None:
            raise ExportError(NOT_AN_EXPORT.format(name=path.name))
        if lms == "gradescope":
            metadata = next(entry for entry in entries if entry.parts == (METADATA,))
            pieces, left_out = gradescope_pieces(entries, read_entry(archive, metadata, MAX_METADATA_BYTES))
        else:
            pieces, left_out = (canvas_pieces if lms == "canvas" else moodle_pieces)(entries)
        warnings += left_out
        submissions = []
        for student, submission_id in _students_and_ids(pieces):
            submission, clashes = _submission(archive, student, submission_id, settings)
            warnings += clashes
            first = student[0]
            late = any(piece.late for piece in student)
            at = max((piece.at for piece in student if piece.at is not None), default=None)
            submissions.append(LmsSubmission(lms, first.name, first.lms_id, late, submission, at))
    submissions.sort(key=lambda item: item.submission_id)  # ASCII: Ångström sorts with the As
    return LmsExport(lms, tuple(submissions), tuple(warnings))


def slug(text: str, limit: int = 40) -> str:
    """ASCII letters and digits joined by '-': 'Zoë Ångström' -> 'zoe-angstrom' ('' for '李雷')."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")[:limit].strip("-")


def _students_and_ids(pieces: list[Piece]) -> list[tuple[list[Piece], str]]:
    students: dict[tuple[str, str], list[Piece]] = {}
    for piece in pieces:
        students.setdefault((piece.lms_id, "") if piece.lms_id else ("", piece.group), []).append(piece)
    result, used = [], set()
    for (lms_id, group), student in students.items():
        base = f"{slug(student[0].name) or 'student'}_{slug(lms_id) or slug(group) or 'unknown'}"
        submission_id, number = base, 1
        while submission_id in used:  # two ids that fold to one ASCII form
            number += 1
            submission_id = f"{base}-{number}"
        used.add(submission_id)
        result.append((student, submission_id))
    return result


def _latest_files(student: list[Piece]) -> tuple[dict[str, Piece], list[str]]:
    """{file name: piece}, the highest version of each name kept; a sentence per clash."""
    files: dict[str, Piece] = {}
    clashes = []
    for piece in student:
        if piece.entry is None:
            continue
        other = files.get(piece.filename)
        if other is not None:
            kept, dropped = (piece, other) if piece.version > other.version else (other, piece)
            clashes.append(
                f"{piece.name or piece.lms_id}: {dropped.entry.path} and {kept.entry.path} are both "
                f"{piece.filename}; {kept.entry.path} is graded (the later upload)."
            )
            piece = kept
        files[piece.filename] = piece
    return files, clashes


def _submission(
    archive: zipfile.ZipFile, student: list[Piece], submission_id: str, settings: GraderSettings
) -> tuple[Submission, list[str]]:
    files, clashes = _latest_files(student)
    raw: dict[str, bytes] = {}
    unread: dict[str, str] = {}  # files that cost only their own exercises
    others = []
    for filename, piece in sorted(files.items()):
        if not is_submitted_file(filename):
            others.append(filename)
        elif len(raw) <= settings.max_files:  # one more than allowed is enough to say so
            problem, data = _read_source(archive, piece.entry, filename)
            if problem:
                unread[filename] = problem
            else:
                raw[filename] = data
    if raw:
        loaded = load_submission(raw, submission_id, settings)
        return Submission(submission_id, loaded.files, loaded.problems, {**unread, **loaded.unread}), clashes
    if unread:
        return Submission(submission_id, {}, (), unread), clashes
    held = f" (it holds {', '.join(others[:5])}{', ...' if len(others) > 5 else ''})" if others else ""
    return Submission(submission_id, {}, (f"The submission has no .py file to grade{held}.",)), clashes


def _read_source(archive: zipfile.ZipFile, entry: Entry, filename: str) -> tuple[str | None, bytes]:
    declared = entry.info.file_size
    if declared > MAX_FILE_BYTES:
        return size_problem(filename, declared), b""  # not even read
    try:
        data = read_entry(archive, entry, MAX_FILE_BYTES)
    except DamagedArchive:
        raise
    except ExportError as error:  # encrypted: that file only
        return str(error), b""
    if len(data) > MAX_FILE_BYTES:  # the zip's header understated the size
        return size_problem(filename, len(data)), b""
    return None, data
