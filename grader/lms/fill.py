"""Grades back to the LMS: one column of a Canvas gradebook export, or the Grade column of a
Moodle grading worksheet, filled with each student's total; every other byte as exported.

A grade's key is matched as ``poslab.lms_sheets`` says (an email against the email columns, any
other key against the LMS's ids). The total is in points; where the LMS's maximum for the column
(Canvas: its "Points Possible"; Moodle: each row's "Maximum Grade") differs from the grader's, it
is scaled to it and a warning says so. A student with no grade keeps the cell as exported (blank in
a fresh export), or gets 0 with ``missing_zero``. Bad input raises ``CsvFileError`` with a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from poslab.lms_csv import CsvFileError, CsvRecord, CsvTable, format_points, parse_number, read_csv
from poslab.lms_sheets import canvas_gradebook, is_email, moodle_worksheet, moodle_worksheet_columns


@dataclass(frozen=True)
class StudentGrade:
    key: str  # the LMS id (or email) from the gradebook's lms_id, or the app's student key
    label: str  # how messages name the student: the gradebook's id, or the app's key
    total: float  # points, as the gradebook's total
    maximum: float  # the grader's maximum for that total


@dataclass(frozen=True)
class FilledGradebook:
    text: str  # the LMS file with the column filled in, ready to import
    column: str  # the header of the filled column
    filled: int  # students given their total
    left: int  # students without a grade: left as exported, or given 0 with missing_zero
    warnings: tuple[str, ...]
    written: tuple[tuple[str, str], ...] = ()  # (the grade's label, the value written), in grade order


class RowIndex:
    """Rows of an LMS file by their ids: non-email keys in every id column, emails apart."""

    def __init__(self) -> None:
        self.by_id: list[dict[str, list[int]]] = []
        self.by_email: dict[str, list[int]] = {}

    def add(self, row: int, ids: Sequence[str], email: str) -> None:
        while len(self.by_id) < len(ids):
            self.by_id.append({})
        for column, value in zip(self.by_id, ids):
            if value:
                column.setdefault(value, []).append(row)
        if is_email(email):
            self.by_email.setdefault(email.strip().lower(), []).append(row)

    def find(self, key: str) -> list[int]:
        """The rows the key names: one, or several when it is ambiguous (then none is filled in).

        A key found in several id columns must name one student in all of them: a Canvas ID that is
        also another student's SIS User ID is ambiguous, not a match.
        """
        if is_email(key):
            return self.by_email.get(key.strip().lower(), [])
        return sorted({row for column in self.by_id for row in column.get(key.strip(), [])})


def fill_canvas(
    data: bytes, grades: Sequence[StudentGrade], assignment: str, missing_zero: bool = False
) -> FilledGradebook:
    table = read_csv(data, "The Canvas gradebook")
    layout = canvas_gradebook(table)
    if layout is None:
        raise CsvFileError(
            "The Canvas gradebook is not a Canvas gradebook export: its first row needs Student "
            f"(or LastName, FirstName), ID, SIS Login ID and Section; it has {_shown(table)}."
        )
    if layout.points_row is None:
        raise CsvFileError(
            "The Canvas gradebook has no '    Points Possible' row under its header: export it "
            "again from the Gradebook (Export > Export Entire Gradebook)."
        )
    points = table.records[layout.points_row]
    column = _assignment_column(table, points, assignment)
    possible = parse_number(points.cell(column))
    index, students = RowIndex(), []
    for row in layout.student_rows():
        record = table.records[row]
        if layout.is_test_student(record):
            continue
        students.append(row)
        index.add(
            row,
            [record.cell(layout.user_id), record.cell(layout.sis_user_id), record.cell(layout.sis_login_id)],
            record.cell(layout.sis_login_id),
        )
    decimal_comma = "," in points.cell(column) and "." not in points.cell(column)
    return _fill(
        table,
        column,
        students,
        index,
        grades,
        lambda record: possible,
        decimal_comma,
        missing_zero,
        "the column's Points Possible",
        name_of=layout.name,
    )


def fill_moodle(
    data: bytes,
    grades: Sequence[StudentGrade],
    missing_zero: bool = False,
    feedback: Mapping[str, str] | None = None,
) -> FilledGradebook:
    """``feedback``: {grade key: one line} for the worksheet's "Feedback comments" column, if it has one."""
    table = read_csv(data, "The Moodle grading worksheet")
    layout = moodle_worksheet(table)
    if layout is None:
        if table.column("Scale") is not None:
            raise CsvFileError(
                "The Moodle assignment is graded on a scale, not in points: set its grade type "
                "to Point (Edit settings > Grade) and download the grading worksheet again."
            )
        missing = [name for name, index in moodle_worksheet_columns(table).items() if index is None]
        raise CsvFileError(
            f"The Moodle grading worksheet lacks the column(s) {', '.join(missing)} (it has "
            f"{_shown(table)}): download it from the assignment's View all submissions > "
            "Download grading worksheet."
        )
    index, students, locked = RowIndex(), [], []
    for row in layout.student_rows():
        record = table.records[row]
        index.add(row, [layout.participant(record), record.cell(layout.id_number)], record.cell(layout.email))
        if layout.can_change is not None and record.cell(layout.can_change).casefold() in ("no", "false", "0"):
            locked.append(row)  # Moodle would not take a grade there: left as exported, whatever it is
        else:
            students.append(row)
    maximum = table.records[students[0]].cell(layout.maximum) if students else ""
    decimal_comma = "," in maximum and "." not in maximum
    comments = table.column("Feedback comments")
    notes_written = {}
    for key, line in (feedback or {}).items():
        rows = index.find(key) if key and comments is not None else []
        if len(rows) == 1 and rows[0] in students:
            notes_written[(rows[0], comments)] = line
    filled = _fill(
        table,
        layout.grade,
        students,
        index,
        grades,
        lambda record: parse_number(record.cell(layout.maximum)),
        decimal_comma,
        missing_zero,
        "the worksheet's Maximum Grade",
        frozenset(locked),
        name_of=lambda record: record.cell(layout.full_name) or record.cell(layout.identifier),
        extra_changes=notes_written,
    )
    notes = [
        f"{table.records[row].cell(layout.full_name) or table.records[row].cell(layout.identifier)}: 'Grade "
        "can be changed' is No in the worksheet (the grade is locked or overridden in Moodle's gradebook); "
        "left as exported."
        for row in locked
    ]
    return FilledGradebook(
        filled.text, filled.column, filled.filled, filled.left, tuple(notes) + filled.warnings, filled.written
    )


def _shown(table: CsvTable) -> str:
    return ", ".join(cell for cell in table.header[:8] if cell) or "nothing"


def _assignment_column(table: CsvTable, points: CsvRecord, assignment: str) -> int:
    """The one column whose header starts with ``assignment`` and has a number of points possible."""
    wanted = " ".join(assignment.split()).casefold()
    assignments = [index for index, header in enumerate(table.header) if parse_number(points.cell(index)) is not None]
    matches = [index for index in assignments if " ".join(table.header[index].split()).casefold().startswith(wanted)]
    named = ", ".join(repr(table.header[index]) for index in (matches or assignments)[:12])
    if not wanted or not matches:
        raise CsvFileError(
            f"No assignment column of the Canvas gradebook starts with {assignment!r}; its "
            f"assignments are: {named or 'none'}."
        )
    if len(matches) > 1:
        raise CsvFileError(
            f"{len(matches)} assignment columns start with {assignment!r} ({named}): give more of "
            "the name, for example with the id in parentheses."
        )
    return matches[0]


def _fill(
    table: CsvTable,
    column: int,
    students: list[int],
    index: RowIndex,
    grades: Sequence[StudentGrade],
    possible_of: Callable[[CsvRecord], float | None],
    decimal_comma: bool,
    missing_zero: bool,
    possible_name: str,
    locked: frozenset[int] = frozenset(),
    name_of: Callable[[CsvRecord], str] = lambda record: "",
    extra_changes: Mapping[tuple[int, int], str] | None = None,
) -> FilledGradebook:
    values, owner, warnings, scaled = {}, {}, [], set()
    for grade in grades:
        rows = index.find(grade.key) if grade.key else []
        who = grade.label if grade.label == grade.key else f"{grade.label} ({grade.key})"
        if not grade.key:
            warnings.append(
                f"{grade.label} has no LMS id (graded from a file or folder, not an LMS download): not filled in."
            )
        elif not rows:
            warnings.append(f"{who} is in the grades but not in the gradebook.")
        elif len(rows) > 1:
            warnings.append(f"{who} matches {len(rows)} students of the gradebook: none is filled in for it.")
        elif rows[0] in owner:
            warnings.append(
                f"{grade.label} and {owner[rows[0]]} are the same student of the gradebook "
                f"({grade.key}): left as exported."
            )
            values.pop(rows[0], None)
        elif rows[0] in locked:
            owner[rows[0]] = grade.label  # its note says why it is left as exported
        else:
            owner[rows[0]] = grade.label
            possible = possible_of(table.records[rows[0]])
            if possible is None or grade.maximum <= 0:
                warnings.append(f"{grade.label}: {possible_name} is not a number of points: not filled in.")
                continue
            if abs(possible - grade.maximum) > 1e-9:
                scaled.add((grade.maximum, possible))
            values[rows[0]] = grade.total * possible / grade.maximum
    changes = {(row, column): format_points(value, decimal_comma) for row, value in values.items()}
    changes.update(extra_changes or {})
    left = [row for row in students if row not in owner]
    if missing_zero:
        changes.update({(row, column): format_points(0.0, decimal_comma) for row in left})
    if left:
        names = ", ".join(name_of(table.records[row]) or f"row {row + 2}" for row in left)
        kept = "given 0" if missing_zero else "left as exported"
        warnings.append(f"In the gradebook with no submission graded ({kept}): {names}.")
    for grader_max, possible in sorted(scaled):
        warnings.insert(
            0,
            f"The grader's maximum is {grader_max:g} points and {possible_name} is {possible:g}: "
            f"totals were scaled to {possible:g}.",
        )
    written = tuple((owner[row], changes[(row, column)]) for row in values)
    return FilledGradebook(
        table.render(changes), table.header[column], len(values), len(left), tuple(warnings), written
    )
