"""``python -m grader mutation``: how many of the reference's mutants the hidden suite kills.

    python -m grader mutation [--jobs N] [--json PATH] [--exercise ID ...] [--timeout S]

cosmic-ray's operators make the mutants (``generate``), the grader grades each one as a sandboxed
submission (``scoring``), and the recorded equivalents (``equivalents``) are re-checked against the
reference's answers (``recording``). Prints one line per exercise,
``<id>: NN.N% (k killed / n non-equivalent, e equivalent)``, then the survivors, false equivalence
claims and stale entries. Exit 0 when every exercise reaches 95 % and every claim holds; 1 when not;
3 when the grader itself failed; 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_WEAK_SUITE, EXIT_USAGE, EXIT_FAULT = 0, 1, 2, 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from poslab.exercises import EXERCISE_IDS

    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="mutants graded at once (default 2)")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the scores and survivors as JSON")
    parser.add_argument(
        "--exercise",
        action="append",
        choices=EXERCISE_IDS,
        default=None,
        metavar="ID",
        help="only this exercise (repeatable; default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit per exercise and mutant (default: the grader's)",
    )


def _print_report(report, stream) -> None:
    for score in report.scores:
        print(score.line(), file=stream)
    if report.kinds:
        print("\nby kind of promise (grader/suite/<id>/clauses.md):", file=stream)
        for score in report.kinds:
            print(f"  {score.line()}", file=stream)
    if report.reference_problem:
        print(f"\nthe reference does not get full marks: {report.reference_problem}", file=stream)
    sections = (
        ("survivors", [v.mutant.describe() + f"  <{v.exercise}>" for v in report.survivors]),
        (
            "recorded as equivalent, but they answer differently",
            [
                f"{v.mutant.describe()}  <{v.exercise}>: {'; '.join(v.differences[:3])}"
                for v in report.false_equivalents
            ],
        ),
        ("stale entries in grader/suite/<id>/equivalents.toml", report.stale),
    )
    for title, lines in sections:
        if lines:
            print(f"\n{title} ({len(lines)}):", file=stream)
            for line in lines:
                print(f"  {line}", file=stream)
    print(f"\n{report.mutants} mutants, {len(report.operators)} operators, {report.seconds:.0f} s", file=stream)


def run(args: argparse.Namespace) -> int:
    from grader.cli.common import ProgressBar, atomic_write
    from grader.faults import GraderFault
    from grader.mutation.equivalents import EquivalentsError, load_equivalents
    from grader.mutation.scoring import grade_mutants
    from grader.settings import GraderSettings
    from poslab.exercises import EXERCISE_IDS

    if args.jobs < 1 or (args.timeout is not None and args.timeout <= 0):
        print("--jobs must be at least 1 and --timeout positive", file=sys.stderr)
        return EXIT_USAGE
    try:
        claims = load_equivalents()
    except (EquivalentsError, ValueError) as error:
        print(f"recorded equivalents: {error}", file=sys.stderr)
        return EXIT_USAGE
    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    exercises = tuple(e for e in EXERCISE_IDS if args.exercise is None or e in args.exercise)
    try:
        from grader.mutants import reference_source
        from grader.mutation.generate import generate

        total = 1 + len(generate(reference_source(), exercises=exercises))
        report = grade_mutants(settings, args.jobs, exercises, claims, on_step=ProgressBar(total).step)
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    _print_report(report, sys.stdout)
    if args.json:
        atomic_write(Path(args.json), json.dumps(report.to_dict(), indent=2) + "\n")
    return EXIT_OK if report.passed() else EXIT_WEAK_SUITE
