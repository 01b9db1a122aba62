"""``python -m grader gradescope OUT.zip``: the autograder zip (``grader/gradescope/package.py``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.cli.common import EXIT_FAULT, EXIT_OK, UsageError
from grader.settings import ISOLATIONS, GraderSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write the autograder zip to upload to Gradescope (programming assignment, "
        "base image Ubuntu 22.04). See grader/README.md."
    )
    parser.add_argument("out", metavar="OUT.zip", help="the zip to write")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit per exercise (default: POSLAB_GRADER_TIMEOUT, or 20)",
    )
    parser.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        default=None,
        help="the sandbox to use on Gradescope (default: POSLAB_GRADER_ISOLATION, or auto)",
    )
    parser.add_argument(
        "--assignment",
        default=None,
        metavar="ID",
        help="grade and count this assignment of the POSLAB_ASSIGNMENTS file (its exercises, points, due "
        "date against the submission's time, late policy, extensions by email)",
    )


def assignment_files(assignment_id: str) -> dict[str, str]:
    """The assignments file and the id to count, for the package; UsageError when either is wrong."""
    from grader.gradescope.assignment import ASSIGNMENT_FILES
    from poslab.assignments import ENV_VAR, AssignmentsError, load_assignments

    path = os.environ.get(ENV_VAR, "").strip()
    if not path:
        raise UsageError(f"--assignment needs the assignments file: set {ENV_VAR} to its path")
    try:
        load_assignments(path).get(assignment_id)
    except AssignmentsError as error:
        raise UsageError(str(error)) from None
    course_file, chosen = ASSIGNMENT_FILES
    return {course_file: Path(path).read_text(encoding="utf-8"), chosen: assignment_id + "\n"}


def run(args: argparse.Namespace) -> int:
    from grader.gradescope.package import PackageError, build_package

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if not args.out.endswith(".zip"):
        raise UsageError("OUT must end in .zip")
    settings = GraderSettings.from_env().with_changes(timeout=args.timeout, isolation=args.isolation)
    extra = assignment_files(args.assignment) if args.assignment else None
    try:
        names = build_package(Path(args.out), settings, extra=extra)
    except PackageError as error:
        print(f"cannot build the package: {error}", file=sys.stderr)
        return EXIT_FAULT
    suite = sum(name.startswith("grader/suite/") and "/test_" in name for name in names)
    print(
        f"wrote {args.out}: {len(names)} files, {suite} hidden test modules; "
        f"isolation {settings.isolation}, timeout {settings.timeout:g} s per exercise"
    )
    return EXIT_OK
