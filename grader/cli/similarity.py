"""``python -m grader similarity DIR --exercise rope [--out report.html]``: the pairs of students
whose code is unusually similar (``grader.similarity``). One line per flagged pair names both
students; every other line names at most one."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.cli.common import EXIT_OK, UsageError, atomic_write
from poslab.exercises import EXERCISE_IDS, get_exercise


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="one folder per student, named for them, with the exercise's file")
    parser.add_argument("--exercise", required=True, help=f"the exercise: {', '.join(EXERCISE_IDS)}")
    parser.add_argument("--out", metavar="FILE", help="write the side-by-side report here (self-contained HTML)")


def run(args: argparse.Namespace) -> int:
    from grader.similarity import find_similar_pairs, read_student_folders, render_report
    from grader.similarity.folders import shown

    if args.exercise not in EXERCISE_IDS:
        raise UsageError(f"unknown exercise {args.exercise!r}; known: {', '.join(EXERCISE_IDS)}")
    directory = Path(args.dir)
    if not directory.is_dir():
        raise UsageError(f"{args.dir} is not a folder (one folder per student, each with their file)")
    filename = get_exercise(args.exercise).filename
    read = read_student_folders(directory, filename)
    for note in read.notes:
        print(note)
    if not read.codes:
        raise UsageError(f"no student folder in {args.dir} holds a {filename}")
    report = find_similar_pairs(args.exercise, read.codes)
    for pair in report.pairs:
        print(f"similar: {shown(pair.student_a)} and {shown(pair.student_b)}, score {pair.score:.2f}")
    flagged = len(report.pairs)
    print(f"{len(report.students)} students' {filename} compared; {flagged} pair{'' if flagged == 1 else 's'} flagged")
    if args.out:
        atomic_write(Path(args.out), render_report(report, read.codes))
        print(f"report: {args.out}")
    return EXIT_OK
