"""Who handed in which file, read from each LMS's own naming of its bulk download.

* **Canvas** ("Download Submissions"; ``ContentZipper``): flat files named
  ``<name>_[LATE_]<user id>_<file id>_<original name>``, where ``<name>`` is the student's sortable
  name in lower case with everything but letters, digits and ``_`` removed (``lovelaceada``),
  ``LATE`` (in any case: ``late`` too) marks late work, and the file id is Canvas's id of that upload. A file uploaded again
  under the same name gets ``-1``, ``-2`` before its extension (``rope-1.py`` is ``rope.py``).
  Text and URL entries are ``<name>_[LATE_]<user id>_text.html`` / ``_link.html``. With anonymous
  grading the name is left out and the user id is ``anon_<id>``.
* **Moodle** ("Download all submissions"; ``mod_assign\\downloader``): a folder per participant and
  plugin, ``<Full Name>_<participant id>_assignsubmission_file[_]/`` with the files inside (in
  their own subfolders, if any); or, with "download submissions in folders" off, flat files
  ``<Full Name>_<participant id>_assignsubmission_file_<original name>``. With blind marking the name
  is "Participant". The participant id is the number of the grading worksheet's "Participant 12345".
* **Gradescope** ("Export Submissions"): a ``submission_<id>/`` folder per submission and one
  ``submission_metadata.yml`` keyed by those folder names: ``:submitters:`` (``:name:``, ``:sid:``,
  ``:email:``, several for a group), ``:created_at:``, ``:score:``, ``:results:``... (YAML with Ruby
  symbol keys, read with PyYAML's ``safe_load``). A group's files are handed in for each submitter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import yaml

from grader.lms.zipread import Entry, ExportError
from poslab.lms_sheets import student_key

LmsName = Literal["canvas", "moodle", "gradescope"]
METADATA = "submission_metadata.yml"
MAX_METADATA_BYTES = 20 * 1024 * 1024

_CANVAS_WHO = r"^(?:(?P<name>[^_].*?)_)?(?P<late>(?i:late)_)?(?P<user>anon_[A-Za-z0-9]+|\d+)_"
CANVAS_FILE = re.compile(_CANVAS_WHO + r"(?P<file_id>\d+)_(?P<original>.+)$", re.S)
CANVAS_TEXT = re.compile(_CANVAS_WHO + r"(?P<original>text|link)\.html$", re.S)
RESUBMITTED = re.compile(r"^(?P<stem>.+)-\d+(?P<extension>\.py)$")
_MOODLE_WHO = r"^(?P<name>.+?)_(?P<user>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)"
MOODLE_FOLDER = re.compile(_MOODLE_WHO + r"_?$", re.S)
MOODLE_FLAT = re.compile(_MOODLE_WHO + r"_(?P<original>.+)$", re.S)
GRADESCOPE_FOLDER = re.compile(r"^submission_\d+$")


@dataclass(frozen=True)
class Piece:
    """One file of one student's submission, as the download names it (entry None: no file)."""

    lms_id: str  # Canvas user id, Moodle participant id, Gradescope email (else SID); "" unknown
    name: str
    late: bool
    filename: str  # its name in the submission: Canvas's -N suffix removed, folders left out
    version: int  # a name clash keeps the highest (Canvas: the file id, a later upload)
    entry: Entry | None
    group: str = ""  # what the student's files are grouped by when lms_id is ""
    at: datetime | None = None  # when it was handed in, where the download says (Gradescope)


def recognise(entries: list[Entry]) -> LmsName | None:
    """Which LMS's bulk download the entries are, by their names; None for none of them."""
    if any(entry.parts == (METADATA,) for entry in entries):
        return "gradescope"
    if any(
        MOODLE_FOLDER.match(entry.parts[0]) if len(entry.parts) > 1 else MOODLE_FLAT.match(entry.path)
        for entry in entries
    ):
        return "moodle"
    if any(
        len(entry.parts) == 1 and (CANVAS_FILE.match(entry.path) or CANVAS_TEXT.match(entry.path)) for entry in entries
    ):
        return "canvas"
    return None


def canvas_pieces(entries: list[Entry]) -> tuple[list[Piece], list[str]]:
    pieces, warnings = [], []
    for entry in entries:
        found = CANVAS_FILE.match(entry.path) if len(entry.parts) == 1 else None
        text = CANVAS_TEXT.match(entry.path) if found is None and len(entry.parts) == 1 else None
        if found is None and text is None:
            warnings.append(f"{entry.path} does not follow Canvas's naming (name_userid_fileid_file): left out.")
            continue
        match = found or text
        original = match["original"] if found else f"{match['original']}.html"
        resubmitted = RESUBMITTED.match(original)
        filename = f"{resubmitted['stem']}{resubmitted['extension']}" if resubmitted else original
        pieces.append(
            Piece(
                match["user"],
                match["name"] or "",
                bool(match["late"]),
                filename,
                int(found["file_id"]) if found else 0,
                entry,
            )
        )
    return pieces, warnings


def moodle_pieces(entries: list[Entry]) -> tuple[list[Piece], list[str]]:
    pieces, warnings = [], []
    for entry in entries:
        folder = MOODLE_FOLDER.match(entry.parts[0]) if len(entry.parts) > 1 else None
        flat = MOODLE_FLAT.match(entry.path) if folder is None and len(entry.parts) == 1 else None
        match = folder or flat
        if match is None:
            warnings.append(
                f"{entry.path} does not follow Moodle's naming (Full Name_12345_assignsubmission_file/...): left out."
            )
            continue
        filename = entry.basename if folder else match["original"]
        pieces.append(Piece(match["user"], match["name"], False, filename, 0, entry))
    return pieces, warnings


def gradescope_pieces(entries: list[Entry], metadata: bytes) -> tuple[list[Piece], list[str]]:
    submitters = gradescope_submitters(metadata)
    times = gradescope_times(metadata)
    by_folder: dict[str, list[Entry]] = {}
    warnings = []
    for entry in entries:
        if entry.parts == (METADATA,):
            continue
        if len(entry.parts) < 2 or not GRADESCOPE_FOLDER.match(entry.parts[0]):
            warnings.append(f"{entry.path} is not inside a submission_<id>/ folder: left out.")
            continue
        by_folder.setdefault(entry.parts[0], []).append(entry)
    pieces = []
    for folder in sorted(set(by_folder) | set(submitters)):
        people = submitters.get(folder)
        if not people:
            warnings.append(
                f"{folder}/ has no submitter in {METADATA}: graded under its folder name, with no LMS id to match."
            )
            people = [("", "")]
        for lms_id, name in people:
            files = by_folder.get(folder, [])
            at = times.get(folder)
            pieces += [Piece(lms_id, name, False, entry.basename, 0, entry, folder, at) for entry in files]
            if not files:  # in the metadata, but nothing handed in
                pieces.append(Piece(lms_id, name, False, "", 0, None, folder, at))
    return pieces, warnings


def gradescope_submitters(metadata: bytes) -> dict[str, list[tuple[str, str]]]:
    """{folder: [(lms_id, name), ...]} from ``submission_metadata.yml``; ExportError if unreadable."""
    if len(metadata) > MAX_METADATA_BYTES:
        raise ExportError(f"{METADATA} is larger than {MAX_METADATA_BYTES // (1024 * 1024)} MB.")
    try:
        data = yaml.safe_load(metadata.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ExportError(
            f"{METADATA} is not readable YAML ({type(error).__name__}): export the submissions from Gradescope again."
        ) from None
    if not isinstance(data, dict):
        raise ExportError(f"{METADATA} does not map submission folders to their submitters.")
    found = {}
    for folder, record in data.items():
        people = record.get(":submitters") if isinstance(record, dict) else None
        found[str(folder)] = [_submitter(person) for person in people or () if isinstance(person, dict)]
    return found


def gradescope_times(metadata: bytes) -> dict[str, datetime]:
    """{folder: :created_at:} (time-zone aware; UTC when it gives no zone); folders without one left out."""
    data = yaml.safe_load(metadata.decode("utf-8"))  # already read once by gradescope_submitters
    times = {}
    for folder, record in data.items():
        created = record.get(":created_at") if isinstance(record, dict) else None
        if isinstance(created, str):
            try:
                created = datetime.fromisoformat(created.strip())
            except ValueError:
                continue
        if isinstance(created, datetime):
            times[str(folder)] = created if created.tzinfo else created.replace(tzinfo=UTC)
    return times


def _submitter(person: dict) -> tuple[str, str]:
    def text(key: str) -> str:
        value = person.get(key)
        return "" if value is None else str(value).strip()

    return student_key(text(":email"), text(":sid")), text(":name")
