"""A graded submission counted for one assignment: its exercises, points, due date and late policy.

``course()`` is the assignments file of ``POSLAB_ASSIGNMENTS`` (``poslab.assignments``), or the one
default assignment. ``assignment_grade`` turns a ``SubmissionResult`` and who handed it in, when,
into a ``poslab.deadlines.AssignmentGrade``; ``gradebook_columns`` / ``gradebook_cells`` are the
columns ``gradebook.csv`` gains after ``max``. ``grades_for_assignment`` re-reads a grading folder
for ``export ... --assignment ID``, with the LMS's own submission times where it has them (Moodle).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

from grader.lms.fill import StudentGrade
from grader.lms.grades import GradesError, read_gradebook_rows
from grader.results import SubmissionResult
from poslab.assignments import ENV_VAR, Assignment, AssignmentsError, Course, ExtensionSource, course_from_env
from poslab.deadlines import AssignmentGrade, Attempt, grade_assignment, student_due
from poslab.exercises import EXERCISE_IDS
from poslab.lms_csv import read_csv
from poslab.lms_sheets import moodle_worksheet

# After ``max``: which assignment, the student's due date, when it was handed in, the LMS's own late
# mark, what was counted and why, and what could not be read.
EXTRA_COLUMNS = ("assignment", "due", "submitted_at", "lms_late", "counted", "problems")


@dataclass(frozen=True)
class Person:
    """Who a submission id is: empty for plain files and folders."""

    name: str = ""
    lms_id: str = ""
    late: bool = False  # the LMS's own mark (Canvas's LATE)
    submitted_at: datetime | None = None  # Gradescope's :created_at:, else unknown

    def keys(self, submission_id: str) -> tuple[str, ...]:
        """What an extension may name the student by: LMS id (or email), gradebook id, name."""
        return tuple(key for key in (self.lms_id, submission_id, self.name) if key)


def course(maxima: Mapping[str, float] | None = None) -> Course:
    """The course's assignments; ``AssignmentsError`` when the file is wrong."""
    return course_from_env(maxima or {})


def find_assignment(assignment_id: str) -> tuple[Assignment, Course]:
    """The assignment of the assignments file and its course; AssignmentsError when there is none."""
    known = course()
    if not known.source:
        raise AssignmentsError(f"--assignment {assignment_id} needs the assignments file: set {ENV_VAR} to its path.")
    return known.get(assignment_id), known


def attempts_of(result: SubmissionResult, person: Person) -> list[Attempt]:
    return [
        Attempt(exercise, score.score / score.max_score, person.submitted_at, person.late)
        for exercise, score in result.exercises.items()
        if score.max_score > 0
    ]


def assignment_grade(
    result: SubmissionResult, person: Person, assignment: Assignment, extensions: ExtensionSource | None
) -> AssignmentGrade:
    due = student_due(assignment, person.keys(result.submission_id), extensions)
    return grade_assignment(assignment, attempts_of(result, person), due)


def gradebook_row(
    result: SubmissionResult, person: Person, assignment: Assignment | None, grade: AssignmentGrade | None
):
    """A ``gradebook.csv`` row: the columns it always had, then ``EXTRA_COLUMNS``."""
    if assignment is None or grade is None:  # every exercise at its suite points, no deadline: as it always was
        base = result.gradebook_row(person.name, person.lms_id, person.late)
        counted = "; ".join(
            f"{exercise} {score.score:g}/{score.max_score:g}"
            for exercise, score in result.exercises.items()
            if score.max_score > 0
        )
        return [*base, "", "", _iso(person.submitted_at), _flag(person.late), counted, " ".join(result.messages)]
    finals = {item.exercise: f"{item.final:g}" for item in grade.exercises}
    late = person.late or grade.late
    base = [result.submission_id, person.name, person.lms_id, _flag(late), result.status]
    base += [finals.get(exercise, "") for exercise in EXERCISE_IDS]
    base += [f"{grade.total:g}", f"{grade.max_points:g}"]
    why = grade.summary() + (" Late." if late else "")
    return [
        *base,
        assignment.id,
        _iso(grade.due),
        _iso(person.submitted_at),
        _flag(person.late),
        why,
        " ".join(result.messages),
    ]


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _iso(moment: datetime | None) -> str:
    return "" if moment is None else moment.isoformat(timespec="seconds")


def grades_for_assignment(
    directory: str | Path,
    assignment: Assignment,
    extensions: ExtensionSource | None,
    times: Mapping[str, datetime] | None = None,
) -> tuple[list[StudentGrade], dict[str, str]]:
    """Each student of a grading folder counted for ``assignment``: the grades, and a one-line
    summary per LMS key (for a feedback column). ``times``: {LMS key: when handed in}, from the LMS's
    own file; else the gradebook's ``submitted_at``; else only its late mark."""
    folder = Path(directory)
    grades, summaries = [], {}
    for row in read_gradebook_rows(folder):
        submission_id, key = row["id"], (row.get("lms_id") or "").strip()
        result = _result(folder, submission_id)
        submitted = (times or {}).get(key) or _parse_time(row.get("submitted_at", ""))
        mark = row.get("lms_late") if "lms_late" in row else row.get("late")  # before: late was the mark
        lms_late = (mark or "").strip().lower() == "true"
        person = Person(row.get("name") or "", key, lms_late, submitted)
        grade = assignment_grade(result, person, assignment, extensions)
        grades.append(StudentGrade(key, submission_id, grade.total, grade.max_points))
        late = " Late." if lms_late or grade.late else ""
        summaries[key] = f"{assignment.title}: {grade.summary()}.{late}"
    return grades, summaries


def summaries_of(directory: str | Path) -> dict[str, str]:
    """{LMS key: one line} from a gradebook as graded: its total and what it counted."""
    lines = {}
    for row in read_gradebook_rows(directory):
        key = (row.get("lms_id") or "").strip()
        late = " Late." if (row.get("late") or "").strip().lower() == "true" else ""
        counted = (row.get("counted") or "").strip()
        lines[key] = f"{row['total']}/{row['max']}" + (f": {counted}" if counted else "") + f".{late}"
    return lines


def _result(folder: Path, submission_id: str) -> SubmissionResult:
    path = folder / submission_id / "results.json"
    try:
        return SubmissionResult.from_gradescope(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        raise GradesError(
            f"{path} cannot be read ({error}): grade the download again with `python -m grader grade`."
        ) from None


def _parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip()) if text and text.strip() else None
    except ValueError:
        return None


MOODLE_TIME_FORMATS = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M")  # English: Moodle's userdate


def moodle_submission_times(data: bytes, zone: tzinfo) -> dict[str, datetime]:
    """{participant id: its "Last modified (submission)"}, read in ``zone`` (the worksheet's times carry
    none: Moodle writes them in the downloading teacher's zone, the assignment's own)."""
    table = read_csv(data, "The Moodle grading worksheet")
    layout = moodle_worksheet(table)
    column = table.column("Last modified (submission)")
    if layout is None or column is None:
        return {}
    times = {}
    for row in layout.student_rows():
        record = table.records[row]
        text = " ".join(record.cell(column).split())
        for pattern in MOODLE_TIME_FORMATS:
            try:
                times[layout.participant(record)] = datetime.strptime(text, pattern).replace(tzinfo=zone)
                break
            except ValueError:
                continue
    return times


def csv_text(header: tuple[str, ...], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


__all__ = ["AssignmentsError", "EXTRA_COLUMNS", "Person", "assignment_grade", "course", "gradebook_row"]
