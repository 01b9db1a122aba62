"""LMS files built the way each LMS documents and writes them, for the tests of grader.lms and
poslab.roster: Canvas's submissions zip and gradebook export, Moodle's submissions zip and grading
worksheet, Gradescope's export zip with its submission_metadata.yml.

The shapes follow the LMSs' own code: Canvas's ``ContentZipper`` (file names) and
``GradebookExporter`` (columns, the Manual Posting and Points Possible rows, the Test Student
last), Moodle's ``mod_assign`` downloader (folders per participant) and grading table
("Participant N", Maximum Grade, Grade can be changed), Gradescope's export (Ruby symbol keys).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

CANVAS_TOTALS = (
    "Current Points",
    "Final Points",
    "Current Score",
    "Unposted Current Score",
    "Final Score",
    "Unposted Final Score",
)


def canvas_file_prefix(sortable_name: str, user_id: str, late: bool = False, mark: str = "LATE") -> str:
    """What Canvas puts before the file id: sortable name lowercased with non-word characters removed."""
    name = re.sub(r"[^\w]", "", sortable_name.lower())
    return "_".join(part for part in (name, mark if late else "", user_id) if part)


@dataclass
class CanvasStudent:
    sortable_name: str  # "Lovelace, Ada"
    user_id: str
    files: dict[str, bytes] = field(default_factory=dict)  # original name -> content
    late: bool = False
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = "Section 1"
    late_mark: str = "LATE"  # as Canvas writes it; some downloads have it in lower case


class RubyZipInfo(zipfile.ZipInfo):
    """An entry named as rubyzip (which Canvas uses) names it: UTF-8 bytes without the UTF-8 flag."""

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def write_zip(path: Path, entries: list[tuple[str, bytes]], utf8_flag: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            info = (zipfile.ZipInfo if utf8_flag else RubyZipInfo)(name, date_time=(2026, 3, 1, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return path


def canvas_zip(
    path: Path, students: list[CanvasStudent], extra: list[tuple[str, bytes]] = (), utf8_flag: bool = True
) -> Path:
    entries, file_id = [], 9000
    for student in students:
        for original, data in student.files.items():
            file_id += 1
            entries.append(
                (
                    f"{canvas_file_prefix(student.sortable_name, student.user_id, student.late, student.late_mark)}"
                    f"_{file_id}_{original}",
                    data,
                )
            )
    return write_zip(path, entries + list(extra), utf8_flag)


def canvas_gradebook(
    students: list[CanvasStudent],
    points: str = "100.00",
    assignment: str = "Position Lab (4242)",
    manual_posting: bool = True,
    test_student: bool = True,
    bom: bool = True,
    newline: str = "\r\n",
    delimiter: str = ",",
    scores: dict[str, str] | None = None,
) -> bytes:
    """A Canvas "Export Entire Gradebook" file with SIS ids, one more assignment and the totals."""
    scores = scores or {}
    header = [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "Notes",
        assignment,
        "Quiz 1 (4243)",
        *CANVAS_TOTALS,
    ]
    rows = [header]
    if manual_posting:
        rows.append(["", "", "", "", "", "", "Manual Posting", "", *[""] * len(CANVAS_TOTALS)])
    quiz_points = "5,00" if "," in points else "5.00"
    rows.append(["    Points Possible", "", "", "", "", "", points, quiz_points, *["(read only)"] * len(CANVAS_TOTALS)])
    for student in students:
        rows.append(
            [
                student.sortable_name,
                student.user_id,
                student.sis_user_id,
                student.sis_login_id,
                student.section,
                "",
                scores.get(student.user_id, ""),
                "4.00",
                *["0.00"] * len(CANVAS_TOTALS),
            ]
        )
    if test_student:
        rows.append(["Student, Test", "999", "", "", "Section 1", "", "", "", *["0.00"] * len(CANVAS_TOTALS)])
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator=newline).writerows(rows)
    return (("\ufeff" if bom else "") + buffer.getvalue()).encode("utf-8")


@dataclass
class MoodleParticipant:
    full_name: str
    participant_id: str
    email: str
    files: dict[str, bytes] = field(default_factory=dict)  # path inside the submission -> content


def moodle_zip(
    path: Path, participants: list[MoodleParticipant], layout: str = "folders", extra: list[tuple[str, bytes]] = ()
) -> Path:
    """layout: "folders" (Moodle 4.x: '<prefix>_assignsubmission_file/'), "folders_" (3.x, a trailing
    underscore) or "flat" (download submissions in folders turned off)."""
    entries = []
    for person in participants:
        prefix = f"{person.full_name.replace('_', ' ')}_{person.participant_id}_assignsubmission_file"
        for name, data in person.files.items():
            if layout == "flat":
                entries.append((f"{prefix}_{name}", data))
            else:
                entries.append((f"{prefix}{'_' if layout == 'folders_' else ''}/{name}", data))
    return write_zip(path, entries + list(extra))


def moodle_worksheet(
    participants: list[MoodleParticipant],
    maximum: str = "10.00",
    grades: dict[str, str] = None,
    locked: tuple[str, ...] = (),
    newline: str = "\n",
    modified: dict[str, str] | None = None,
) -> bytes:
    """A grading worksheet as Moodle's grading table downloads it (with Email address shown).
    ``modified``: {participant id: its "Last modified (submission)"}, as Moodle writes it."""
    grades = grades or {}
    rows = [
        [
            "Identifier",
            "Full name",
            "Email address",
            "Status",
            "Grade",
            "Maximum Grade",
            "Grade can be changed",
            "Last modified (submission)",
            "File submissions",
            "Last modified (grade)",
            "Feedback comments",
        ]
    ]
    for person in participants:
        rows.append(
            [
                f"Participant {person.participant_id}",
                person.full_name,
                person.email,
                "Submitted for grading" if person.files else "No submission",
                grades.get(person.participant_id, ""),
                maximum,
                "No" if person.participant_id in locked else "Yes",
                (modified or {}).get(person.participant_id, "Monday, 2 March 2026, 9:15 AM") if person.files else "-",
                ", ".join(person.files),
                "-",
                "",
            ]
        )
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=newline).writerows(rows)
    return buffer.getvalue().encode("utf-8")


@dataclass
class GradescopeSubmission:
    folder_id: str
    submitters: list[tuple[str, str, str]]  # (name, sid, email); "" leaves a field out
    files: dict[str, bytes] = field(default_factory=dict)


def gradescope_metadata(submissions: list[GradescopeSubmission]) -> str:
    """submission_metadata.yml as Gradescope writes it: Ruby symbol keys, quoted SIDs, Ruby times."""
    lines = []
    for item in submissions:
        lines.append(f"submission_{item.folder_id}:")
        lines.append("  :submitters:" + ("" if item.submitters else " []"))
        for name, sid, email in item.submitters:
            fields = [
                text
                for text in (
                    f":name: {name}" if name else "",
                    f":sid: '{sid}'" if sid else "",
                    f":email: {email}" if email else "",
                )
                if text
            ]
            lines.append(f"  - {fields[0]}")
            lines += [f"    {text}" for text in fields[1:]]
        lines += [
            "  :created_at: 2026-03-01 17:34:00.861687000 Z",
            "  :score: 0.0",
            "  :results:",
            "    score: 0.0",
            "    output: |-",
            "      Autograder: results pending",
            "      Final Score: 0.0",
            "    tests: []",
        ]
    return "\n".join(lines) + "\n"


def gradescope_zip(
    path: Path,
    submissions: list[GradescopeSubmission],
    root: str = "assignment_8046601_export",
    extra: list[tuple[str, bytes]] = (),
) -> Path:
    entries = [(f"{root}/submission_metadata.yml", gradescope_metadata(submissions).encode("utf-8"))]
    for item in submissions:
        entries += [(f"{root}/submission_{item.folder_id}/{name}", data) for name, data in item.files.items()]
    return write_zip(path, entries + list(extra))
