"""``python -m grader regrade [--student KEY] [--exercise ID]``: the app's stored submissions graded
again by today's hidden suite (after a fix to it), on the grading service's judges as ``grade``
grades. Each new score is kept beside the old one (``grader.regrade``); one line per change.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from grader.cli.common import EXIT_FAULT, EXIT_OK, UsageError, format_table
from grader.cli.grade import DEFAULT_TIMEOUT, check_options
from grader.cli.grading import grade_with_service
from grader.faults import GraderFault
from grader.regrade import regrade, to_regrade
from grader.settings import GraderSettings
from poslab.exercises import EXERCISE_IDS
from poslab.store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Grade the app's stored submissions again with today's hidden suite (POSLAB_DB_URL, else the "
        "SQLite store in POSLAB_DATA_DIR). Old scores stay in each student's history."
    )
    parser.add_argument("--student", default=None, metavar="KEY", help="only this student's submissions")
    parser.add_argument("--exercise", default=None, choices=EXERCISE_IDS, help="only this exercise's")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="warm judges started here (default 1)")
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786", help="grade on this Dask cluster")
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help=f"per exercise (default {DEFAULT_TIMEOUT:g})"
    )


def run(args: argparse.Namespace) -> int:
    check_options(args)
    suite = getattr(args, "stand_in_suite", None)  # set by tests through main(suite=...)
    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    store = Store()
    try:
        waiting = len(to_regrade(store, args.student, args.exercise))
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(f"{waiting} stored submission(s) to regrade.", file=sys.stderr)

    def grade_all(submissions, on_result) -> None:
        judges = max(1, min(args.jobs, len(submissions)))
        grade_with_service(submissions, settings, on_result, scheduler=args.scheduler, judges=judges, suite=suite)

    try:
        report = regrade(
            store,
            grade_all,
            student=args.student,
            exercise=args.exercise,
            actor=f"{getpass.getuser()} (command line)",
            settings=settings,
        )
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    finally:
        store.close()
    rows = [
        [item.student, item.exercise, f"{item.old_score:g}/{item.old_max:g}", f"{item.new_score:g}/{item.new_max:g}"]
        for item in report.changes
    ]
    if rows:
        print(format_table(["student", "exercise", "old", "new"], rows))
    for sentence in report.not_regraded:
        print(sentence, file=sys.stderr)
    print(f"{report.summary()}; the old scores stay in the history.")
    return EXIT_OK
