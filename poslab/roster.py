"""A class roster, read as it comes from the instructor or the LMS.

Accepted, recognised by their header (the first row):

* a plain CSV with the columns ``name,email`` (optional ``id``, ``section``);
* a Canvas gradebook export (``Student, ID, SIS User ID, SIS Login ID, Section, ...``), with its
  "Points Possible" row; the Test Student is left out;
* a Moodle participants export (``First name, Last name, Email address, ...``); participants
  whose ``Roles`` name no student role are left out.

Each student's key is ``poslab.lms_sheets.student_key``: the email in lower case, else the LMS's
user id (Canvas: ``ID``; Moodle: ``ID number``; plain: ``id``). Canvas gives an email only where its
``SIS Login ID`` is one. The grade exports match students on the same key. ``read_roster`` never
raises on the file's content: what it cannot use is named in ``Roster.problems``, one sentence each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from poslab.lms_csv import CsvFileError, CsvTable, read_csv
from poslab.lms_sheets import canvas_gradebook, is_email, student_key
from poslab.store.validation import MAX_NAME_CHARS

RosterFormat = Literal["plain", "canvas", "moodle"]
ACCEPTED = (
    "a plain CSV with the columns name,email (optional id, section); a Canvas gradebook export "
    "(Student, ID, SIS User ID, SIS Login ID, Section, ...); or a Moodle participants export "
    "(First name, Last name, Email address, ...)"
)


@dataclass(frozen=True)
class RosterStudent:
    name: str
    email: str  # "" when the file has none for this student
    lms_id: str  # the LMS's user id, "" when none
    section: str
    key: str  # student_key(email, lms_id): the identity in the app and in the exports


@dataclass(frozen=True)
class Roster:
    format: RosterFormat | None  # None: the file was not read as a roster
    students: tuple[RosterStudent, ...]
    problems: tuple[str, ...]

    def by_key(self) -> dict[str, RosterStudent]:
        return {student.key: student for student in self.students}


@dataclass(frozen=True)
class _Row:
    line: int
    name: str
    email: str
    lms_id: str
    section: str


def read_roster(data: bytes, what: str = "The roster") -> Roster:
    """The students of a roster file (bytes as uploaded or read from disk) and its problems."""
    try:
        table = read_csv(data, what)
    except CsvFileError as error:
        return Roster(None, (), (str(error),))
    recognised = _recognise(table)
    if recognised is None:
        found = ", ".join(cell for cell in table.header[:8] if cell) or "nothing"
        return Roster(
            None, (), (f"{what} is not in a format this app reads (its first row has {found}). It accepts {ACCEPTED}.",)
        )
    format_name, rows, skipped = recognised
    students, problems = _students(rows)
    return Roster(format_name, tuple(students), tuple(skipped + problems))


def _recognise(table: CsvTable) -> tuple[RosterFormat, list[_Row], list[str]] | None:
    if (
        table.column("First name") is not None
        and table.column("Last name") is not None
        and table.column("Email address") is not None
    ):
        return "moodle", *_moodle_rows(table)
    canvas = canvas_gradebook(table)
    if canvas is not None:
        rows = [
            _Row(
                table.records[index].line,
                canvas.name(table.records[index]),
                canvas.email(table.records[index]),
                table.records[index].cell(canvas.user_id),
                table.records[index].cell(canvas.section),
            )
            for index in canvas.student_rows()
            if not canvas.is_test_student(table.records[index])
        ]
        return "canvas", rows, []
    name, email = table.column("name"), table.column("email")
    if name is not None and email is not None:
        lms_id, section = table.column("id"), table.column("section")
        return (
            "plain",
            [
                _Row(record.line, record.cell(name), record.cell(email), record.cell(lms_id), record.cell(section))
                for record in table.records[1:]
                if not record.blank
            ],
            [],
        )
    return None


def _moodle_rows(table: CsvTable) -> tuple[list[_Row], list[str]]:
    first, last, email = table.column("First name"), table.column("Last name"), table.column("Email address")
    id_number, roles, groups = table.column("ID number"), table.column("Roles"), table.column("Groups")
    rows, left_out = [], 0
    for record in table.records[1:]:
        if record.blank:
            continue
        if roles is not None and record.cell(roles) and "student" not in record.cell(roles).casefold():
            left_out += 1  # a teacher or a non-editing teacher
            continue
        rows.append(
            _Row(
                record.line,
                f"{record.cell(first)} {record.cell(last)}".strip(),
                record.cell(email),
                record.cell(id_number),
                record.cell(groups),
            )
        )
    skipped = [f"{left_out} participant(s) whose Roles name no student role were left out."] if left_out else []
    return rows, skipped


def _students(rows: list[_Row]) -> tuple[list[RosterStudent], list[str]]:
    students, problems, first_line = [], [], {}
    for row in rows:
        usable, problem = _checked(row)
        if problem:
            problems.append(problem)
        if usable is None:
            continue
        key = student_key(usable.email, usable.lms_id)
        if key in first_line:
            problems.append(
                f"Line {row.line}: {key} appears again (first on line {first_line[key]}); the second is left out."
            )
            continue
        first_line[key] = row.line
        email = usable.email.strip().lower() if is_email(usable.email) else ""
        students.append(RosterStudent(usable.name or key, email, usable.lms_id, usable.section, key))
    return students, problems


def _checked(row: _Row) -> tuple[_Row | None, str | None]:
    """The row to use (None: left out) and a sentence about it, if any."""
    who = f"Line {row.line}" + (f" ({row.name})" if row.name else "")
    name = row.name[:MAX_NAME_CHARS]
    if row.email and not is_email(row.email):
        if not row.lms_id:
            return None, f"{who}: {row.email!r} is not an email address and there is no id; left out."
        return _Row(row.line, name, "", row.lms_id, row.section), (
            f"{who}: {row.email!r} is not an email address; the student is keyed by the id {row.lms_id}."
        )
    key = student_key(row.email, row.lms_id)
    if not key:
        return None, f"{who} has neither an email address nor an id; left out."
    if len(key) > MAX_NAME_CHARS:
        return None, f"{who}: its key has {len(key)} characters, more than {MAX_NAME_CHARS}; left out."
    return _Row(row.line, name, row.email, row.lms_id, row.section), None
