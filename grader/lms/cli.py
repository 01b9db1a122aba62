"""The command line's LMS parts.

``python -m grader export canvas|moodle ...`` (``add_arguments`` / ``run``) fills an LMS grade file
from a grading folder, and ``grade_sources`` turns ``python -m grader grade``'s paths into what
to grade, opening an LMS bulk download (a .zip) into one submission per student.

Exit codes as the rest of the CLI: 0 done (warnings on stderr), 2 bad usage or bad input (nothing
written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from grader.cli.common import UsageError, atomic_write
from grader.lms.assigned import (
    AssignmentsError,
    Person,
    course,
    find_assignment,
    grades_for_assignment,
    moodle_submission_times,
    summaries_of,
)
from grader.lms.exports import is_zip, read_export
from grader.lms.fill import fill_canvas, fill_moodle
from grader.lms.grades import GradesError, read_grades
from grader.lms.zipread import ExportError
from grader.submissions import Submission, submission_id_for
from poslab.assignments import Assignment, Course
from poslab.lms_csv import CsvFileError

EXIT_OK, EXIT_USAGE = 0, 2
LMS_TITLES = {"canvas": "Canvas", "moodle": "Moodle", "gradescope": "Gradescope"}


def grade_sources(paths: Sequence[str]) -> tuple[dict[str, Path | Submission], dict[str, Person]]:
    """{id: a path to load, or a submission read from an LMS zip} and {id: person} for the zips' students.

    ``UsageError`` says what is wrong with a path (missing, a broken download, two with one id)."""
    sources: dict[str, Path | Submission] = {}
    people: dict[str, Person] = {}
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"{raw} does not exist")
        refused = not_a_submission(path)
        if refused:
            raise UsageError(refused)
        if is_zip(path):
            try:
                export = read_export(path)
            except ExportError as error:
                raise UsageError(str(error)) from None
            print(
                f"{path.name}: a {LMS_TITLES[export.lms]} bulk download of {len(export.submissions)} student(s).",
                file=sys.stderr,
            )
            for warning in export.warnings:
                print(f"warning: {warning}", file=sys.stderr)
            found = {
                item.submission_id: (item.submission, Person(item.name, item.lms_id, item.late, item.submitted_at))
                for item in export.submissions
            }
        else:
            found = {submission_id_for(path): (path, Person())}
        for submission_id, (source, person) in found.items():
            if submission_id in sources:
                raise UsageError(
                    f"{raw} and {_shown(sources[submission_id])} would both be graded as {submission_id!r}"
                )
            sources[submission_id] = source
            people[submission_id] = person
    return sources, people


def not_a_submission(path: Path) -> str | None:
    """Why a file given to ``grade`` is neither a .py file nor a readable zip, in a sentence naming it."""
    if not path.is_file() or path.suffix == ".py" or is_zip(path):
        return None
    with path.open("rb") as stream:
        looks_zipped = stream.read(2) == b"PK"
    if looks_zipped or path.suffix.lower() == ".zip":
        return (
            f"{path} is not a readable zip archive: it is damaged or cut short (or not a zip at all). "
            "Download it from the LMS again; nothing was graded."
        )
    return f"{path} is neither a .py file, a folder of them, nor an LMS bulk download (.zip); nothing was graded."


def _shown(source: Path | Submission) -> str:
    return str(source) if isinstance(source, Path) else "an earlier download"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``export`` command: ``export canvas ...`` and ``export moodle ...``."""
    targets = parser.add_subparsers(dest="lms", required=True, metavar="{canvas,moodle}")
    canvas = targets.add_parser(
        "canvas",
        help="fill an assignment's column of a Canvas gradebook export",
        description="Fill the assignment's column of a Canvas gradebook export "
        "(Grades > Export > Export Entire Gradebook) with each student's "
        "total; import the result with Grades > Import.",
    )
    canvas.add_argument(
        "--assignment",
        required=True,
        metavar="ID|TEXT",
        help="an assignment id of the POSLAB_ASSIGNMENTS file (its exercises, points, due date and late "
        "policy count, and its title finds the column), or else the start of the column's header, "
        "e.g. 'Position Lab'",
    )
    moodle = targets.add_parser(
        "moodle",
        help="fill the Grade column of a Moodle grading worksheet",
        description="Fill the Grade column of a Moodle grading worksheet (View all "
        "submissions > Download grading worksheet); upload the result with "
        "Upload grading worksheet.",
    )
    moodle.add_argument(
        "--assignment",
        default=None,
        metavar="ID",
        help="an assignment id of the POSLAB_ASSIGNMENTS file: its exercises, points, due date and late "
        "policy count, lateness from the worksheet's 'Last modified (submission)'",
    )
    for target in (canvas, moodle):
        target.add_argument(
            "--grades",
            required=True,
            metavar="DIR",
            help="the --out folder of `python -m grader grade` (its gradebook.csv)",
        )
        target.add_argument("--gradebook", required=True, metavar="FILE.csv", help="the file exported from the LMS")
        target.add_argument("--out", required=True, metavar="FILE.csv", help="where the filled file is written")
        target.add_argument(
            "--missing-zero",
            action="store_true",
            help="give 0 to students with no submission (default: leave their cell as exported)",
        )


def run(args: argparse.Namespace) -> int:
    """``export``: read the grades and the LMS file, write the filled file to --out; 2 on bad input."""
    source, out = Path(args.gradebook), Path(args.out)
    if out.exists() and source.exists() and out.resolve() == source.resolve():
        return _refuse(
            "--out is the exported file itself: write the filled file somewhere else, so the export stays as it was."
        )
    try:
        assignment, known = _assignment_of(args)
        data = source.read_bytes()
        if assignment is not None:
            zone = assignment.due.tzinfo if assignment.due else None
            times = moodle_submission_times(data, zone) if args.lms == "moodle" and zone else None
            grades, summaries = grades_for_assignment(args.grades, assignment, known.extensions, times)
        else:
            grades, summaries = read_grades(args.grades), summaries_of(args.grades)
        if args.lms == "canvas":
            column = assignment.title if assignment is not None else args.assignment
            filled = fill_canvas(data, grades, column, args.missing_zero)
        else:
            filled = fill_moodle(data, grades, args.missing_zero, summaries)
    except (GradesError, CsvFileError, AssignmentsError) as error:
        return _refuse(str(error))
    except OSError as error:
        return _refuse(f"{source} cannot be read ({error.strerror or error}).")
    atomic_write(out, filled.text)
    for warning in filled.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for grade in grades:
        line = summaries.get(grade.key, "")
        if line.endswith("Late."):
            print(f"{grade.label}: {line}")
    left = "given 0" if args.missing_zero else "left as exported"
    print(
        f"wrote {out}: {filled.column!r} filled for {filled.filled} student(s); {filled.left} without a grade {left}."
    )
    return EXIT_OK


def _assignment_of(args: argparse.Namespace) -> tuple[Assignment | None, Course | None]:
    """The assignment ``--assignment`` names in the assignments file, or (None, None) when it names
    none (Canvas: then it is the start of the column's header)."""
    if not getattr(args, "assignment", None):
        return None, None
    known = course()
    if args.lms == "moodle" or any(item.id == args.assignment for item in known.assignments if known.source):
        return find_assignment(args.assignment)
    return None, None


def _refuse(sentence: str) -> int:
    print(f"error: {sentence} Nothing was written.", file=sys.stderr)
    return EXIT_USAGE
