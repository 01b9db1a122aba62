"""Where the students are in an LMS spreadsheet: the Canvas gradebook export, Moodle's grading
worksheet and participants list. One key per student across the app, the roster and the exports.

**The student key** (``student_key``): the email address, in lower case; a student without one
is keyed by the LMS's user id. A key with an ``@`` is matched against the email columns of an LMS
file (Canvas: ``SIS Login ID`` when it holds emails; Moodle: ``Email address``), any other key
against the LMS's ids (Canvas: ``ID``, ``SIS User ID`` and ``SIS Login ID``; Moodle: the worksheet's
participant number and ``ID number``); a key that names two students there matches neither.

Canvas (``GradebookExporter``): a header ``Student, ID, [SIS User ID,] SIS Login ID, [Integration
ID, Root Account,] Section, <custom columns>, <assignments as "Title (id)">, <totals>`` (or
``LastName, FirstName`` for ``Student``), perhaps a "Manual Posting" row, then the row whose first
cell is ``    Points Possible``, then one row per student, the Test Student last.
Moodle's worksheet: ``Identifier`` ("Participant 12345": the id in its submissions zip), ``Full
name``, identity fields such as ``Email address``, ``Status``, ``Grade``, ``Maximum Grade``, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from poslab.lms_csv import CsvRecord, CsvTable

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
TEST_STUDENT_NAMES = ("student, test", "test student")  # Canvas's Student View user
PARTICIPANT_NUMBER = re.compile(r"(\d+)\s*$")


def is_email(text: str) -> bool:
    return bool(EMAIL.match(text.strip()))


def student_key(email: str, lms_id: str) -> str:
    """The student's one key: the email in lower case, else the LMS's user id, else ""."""
    return email.strip().lower() if is_email(email) else lms_id.strip()


def canvas_display_name(sortable: str) -> str:
    """'Lovelace, Ada' -> 'Ada Lovelace' (one comma only); Canvas's '="=x"' formula guard removed."""
    name = sortable.strip()
    guarded = re.fullmatch(r'="(.*)"', name)
    name = guarded.group(1) if guarded else name
    last, comma, first = name.partition(",")
    return f"{first.strip()} {last.strip()}".strip() if comma and "," not in first else name


@dataclass(frozen=True)
class CanvasGradebook:
    table: CsvTable
    student: int | None  # "Student" (sortable name), or None with LastName/FirstName
    last_first: tuple[int, int] | None
    user_id: int  # "ID"
    sis_user_id: int | None
    sis_login_id: int | None
    section: int | None
    points_row: int | None  # record index of "Points Possible"

    def name(self, record: CsvRecord) -> str:
        if self.last_first is not None:
            last, first = (canvas_display_name(record.cell(index)) for index in self.last_first)
            return f"{first} {last}".strip()
        return canvas_display_name(record.cell(self.student))

    def is_test_student(self, record: CsvRecord) -> bool:
        if self.last_first is not None:
            return (record.cell(self.last_first[0]).casefold(), record.cell(self.last_first[1]).casefold()) == (
                "student",
                "test",
            )
        return record.cell(self.student).casefold() in TEST_STUDENT_NAMES

    def student_rows(self) -> list[int]:
        """Record indexes of the students (Test Student included: callers decide)."""
        first = (self.points_row + 1) if self.points_row is not None else 1
        return [
            index
            for index in range(first, len(self.table.records))
            if not self.table.records[index].blank and self.table.records[index].cell(self.user_id)
        ]

    def email(self, record: CsvRecord) -> str:
        login = record.cell(self.sis_login_id)
        return login if is_email(login) else ""


def canvas_gradebook(table: CsvTable) -> CanvasGradebook | None:
    """The Canvas layout of ``table``, or None when its header is not a Canvas gradebook's."""
    user_id = table.column("ID")
    student = table.column("Student")
    last, first = table.column("LastName"), table.column("FirstName")
    last_first = (last, first) if last is not None and first is not None else None
    sis_login = table.column("SIS Login ID")
    if (
        user_id is None
        or (student is None and last_first is None)
        or (sis_login is None and table.column("SIS User ID") is None and table.column("Section") is None)
    ):
        return None
    points_row = next(
        (
            index
            for index, record in enumerate(table.records[1:6], start=1)
            if record.cells and record.cells[0].strip() == "Points Possible"
        ),
        None,
    )
    return CanvasGradebook(
        table, student, last_first, user_id, table.column("SIS User ID"), sis_login, table.column("Section"), points_row
    )


@dataclass(frozen=True)
class MoodleWorksheet:
    table: CsvTable
    identifier: int  # "Participant 12345"
    full_name: int | None
    email: int | None
    id_number: int | None
    grade: int
    maximum: int
    can_change: int | None  # "Grade can be changed": Yes / No

    def participant(self, record: CsvRecord) -> str:
        found = PARTICIPANT_NUMBER.search(record.cell(self.identifier))
        return found.group(1) if found else ""

    def student_rows(self) -> list[int]:
        return [
            index
            for index in range(1, len(self.table.records))
            if not self.table.records[index].blank and self.participant(self.table.records[index])
        ]


def moodle_worksheet_columns(table: CsvTable) -> dict[str, int | None]:
    return {
        "Identifier": table.column("Identifier"),
        "Grade": table.column("Grade"),
        "Maximum Grade": table.column("Maximum Grade", "Maximum grade"),
    }


def moodle_worksheet(table: CsvTable) -> MoodleWorksheet | None:
    """The worksheet layout of ``table``, or None when a required column is missing."""
    columns = moodle_worksheet_columns(table)
    if any(index is None for index in columns.values()):
        return None
    return MoodleWorksheet(
        table,
        columns["Identifier"],
        table.column("Full name"),
        table.column("Email address"),
        table.column("ID number"),
        columns["Grade"],
        columns["Maximum Grade"],
        table.column("Grade can be changed"),
    )
