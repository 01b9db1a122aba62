"""``python -m grader grade PATH... --out DIR``: the hidden suite on every submission, a gradebook.

A rerun keeps a submission's ``results.json`` when both its content hash and the suite's hash are
unchanged. Every file is written atomically. With ``--assignment ID`` (an id of the assignments file,
``POSLAB_ASSIGNMENTS``) the gradebook counts that assignment's exercises, points, due date and late
policy (``grader.lms.assigned``); every row says what was counted and why.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from grader import suite_files
from grader.cli.common import EXIT_FAULT, EXIT_OK, ProgressBar, UsageError, atomic_write, format_table
from grader.faults import GraderFault
from grader.lms.assigned import (
    EXTRA_COLUMNS,
    AssignmentsError,
    Person,
    assignment_grade,
    csv_text,
    find_assignment,
    gradebook_row,
)
from grader.lms.cli import grade_sources
from grader.results import GRADEBOOK_HEADER, SubmissionResult
from grader.settings import GraderSettings
from grader.submissions import Submission, load_submission
from poslab.assignments import Assignment, Course

DEFAULT_TIMEOUT = GraderSettings().timeout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Grade submissions (a .py file, or a folder of .py files; test_*.py and conftest.py are ignored)."
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a submission; its id is the file's stem or the folder's name "
        "(for a folder named 'exercises', its parent's name)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="where gradebook.csv and <id>/results.json go")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="warm judges started on this machine, submissions graded at once (default 1)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:8786",
        help="grade on this Dask cluster (workers: dask worker ADDRESS --nthreads 1 "
        "--preload grader.cluster) instead of judges started here",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"wall-clock limit per exercise (default {DEFAULT_TIMEOUT:g}, or POSLAB_GRADER_TIMEOUT)",
    )
    parser.add_argument(
        "--assignment",
        default=None,
        metavar="ID",
        help="count this assignment of the POSLAB_ASSIGNMENTS file: its exercises, points, due date and "
        "late policy (default: every exercise at its suite points, no deadline)",
    )


def check_options(args: argparse.Namespace) -> None:
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.scheduler is not None and "://" not in args.scheduler:
        raise UsageError(f"--scheduler must be an address like tcp://host:8786, got {args.scheduler!r}")


def previous_result(path: Path) -> SubmissionResult | None:
    try:
        return SubmissionResult.from_gradescope(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None  # absent or not ours: grade again


def chosen_assignment(assignment_id: str | None) -> tuple[Assignment | None, Course | None]:
    """The assignment asked for and its course; (None, None) without ``--assignment``."""
    if assignment_id is None:
        return None, None
    try:
        return find_assignment(assignment_id)
    except AssignmentsError as error:
        raise UsageError(str(error)) from None


def gradebook_rows(
    results: Sequence[SubmissionResult], people: dict[str, Person], assignment: Assignment | None, known: Course | None
) -> list[list[str]]:
    rows = []
    for result in results:
        person = people.get(result.submission_id, Person())
        grade = assignment_grade(result, person, assignment, known.extensions) if assignment else None
        rows.append(gradebook_row(result, person, assignment, grade))
    return rows


def graded_suite_hash(suite: str | None) -> str:
    """The fingerprint of the suite the judges run: the hidden one's from its files, here without
    importing it; a stand-in's (tests) from itself."""
    if suite is None:
        return suite_files.suite_hash()
    from grader.service.judge import load_suite

    return load_suite(suite).suite_hash()


def run(args: argparse.Namespace) -> int:
    assignment, known = chosen_assignment(getattr(args, "assignment", None))
    ids, people = grade_sources(args.paths)  # an LMS download (.zip): one submission per student
    check_options(args)
    # Dask is imported to grade, not for ``--help`` or a usage error; torch only by the judges.
    from grader.cli.grading import grade_with_service

    suite = getattr(args, "stand_in_suite", None)  # set by tests through main(suite=...)
    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    out = Path(args.out)
    suite_hash = graded_suite_hash(suite)
    submissions = [
        source if isinstance(source, Submission) else load_submission(source, submission_id, settings)
        for submission_id, source in ids.items()
    ]
    results: dict[str, SubmissionResult] = {}
    todo = []
    for submission in submissions:
        old = previous_result(out / submission.submission_id / "results.json")
        if (
            old is not None
            and old.submission_hash == submission.content_hash
            and old.suite_hash == suite_hash
            and not old.public_tests_only
        ):
            results[submission.submission_id] = old
        else:
            todo.append(submission)
    if results:
        print(f"{len(results)} submission(s) unchanged since the last run: kept their results.", file=sys.stderr)
    progress = ProgressBar(len(todo))
    lock = threading.Lock()

    def keep(result: SubmissionResult) -> None:
        atomic_write(out / result.submission_id / "results.json", json.dumps(result.to_gradescope(), indent=2) + "\n")
        with lock:
            results[result.submission_id] = result
        progress.step(f"{result.submission_id}: {result.score:g}/{result.max_score:g}")

    try:
        # No more judges than submissions to grade: each costs a torch start-up.
        grade_with_service(
            todo, settings, keep, scheduler=args.scheduler, judges=max(1, min(args.jobs, len(todo))), suite=suite
        )
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    ordered = [results[submission_id] for submission_id in ids]
    rows = gradebook_rows(ordered, people, assignment, known)
    atomic_write(out / "gradebook.csv", csv_text((*GRADEBOOK_HEADER, *EXTRA_COLUMNS), rows))
    shown = [row[: len(GRADEBOOK_HEADER)] + [result.isolation] for row, result in zip(rows, ordered)]
    print(format_table([*GRADEBOOK_HEADER, "isolation"], shown))
    for row in rows if assignment is not None else ():
        print(f"{row[0]}: {row[len(GRADEBOOK_HEADER) + 4]}")  # what was counted and why
    print(f"\nwrote {out / 'gradebook.csv'} and {len(ordered)} results.json")
    return EXIT_OK
