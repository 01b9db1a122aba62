"""``python -m grader validate``: the reference scores full marks and every mutant loses points.

The reference is graded on every exercise, each mutant on its own: a mutant rewrites one exercise's
code, and it counts as caught only when that exercise lost points while it imported and ran.
"""

from __future__ import annotations

import argparse
import sys

from grader.cli.common import EXIT_FAULT, EXIT_OK, EXIT_WEAK_SUITE, ProgressBar, format_table
from grader.faults import GraderFault
from grader.results import SubmissionResult
from grader.settings import GraderSettings
from grader.vocabulary import PromiseKind, SubmissionStatus
from poslab.exercises import EXERCISE_IDS

DEFAULT_TIMEOUT = GraderSettings().timeout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="submissions graded at once (default 2)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"wall-clock limit per exercise (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--exercise",
        action="append",
        choices=EXERCISE_IDS,
        metavar="ID",
        help="only the mutants of this exercise (repeatable; default: every exercise's); "
        f"one of {', '.join(EXERCISE_IDS)}",
    )


def by_kind(caught: dict[str, bool]) -> str:
    """The mutants caught per kind of the promise each breaks (its row of the exercise's promise table)."""
    from grader.suite.promises import all_promises, kind_of_mutant

    table = all_promises()
    counts: dict[PromiseKind, list[int]] = {kind: [0, 0] for kind in PromiseKind if kind != PromiseKind.NOT_GRADED}
    for name, was_caught in caught.items():
        tally = counts[kind_of_mutant(name, table)]
        tally[0] += was_caught
        tally[1] += 1
    return "by kind of promise: " + ", ".join(
        f"{kind} {caught}/{total}" for kind, (caught, total) in counts.items() if total
    )


def run(args: argparse.Namespace) -> int:
    # The judge's side (torch) is imported when grading, not for ``validate --help``.
    from grader.api import Grader, load_submission
    from grader.cli.grading import grade_in_parallel
    from grader.mutants import PatchError, list_mutants, reference_source

    settings = GraderSettings.from_env().with_changes(timeout=args.timeout)
    try:
        mutants = {
            mutant.name: mutant for mutant in list_mutants() if not args.exercise or mutant.exercise in args.exercise
        }
    except PatchError as error:
        print(f"grader fault: the bundled mutants no longer fit the reference: {error}", file=sys.stderr)
        return EXIT_FAULT
    submissions = [load_submission({"reference.py": reference_source()}, "reference", settings)]
    submissions += [load_submission({f"{name}.py": mutant.source}, name, settings) for name, mutant in mutants.items()]
    results: dict[str, SubmissionResult] = {}
    progress = ProgressBar(len(submissions))

    def keep(result: SubmissionResult) -> None:
        results[result.submission_id] = result
        progress.step(result.submission_id)

    try:
        own_exercise = {name: (mutant.exercise,) for name, mutant in mutants.items()}
        grade_in_parallel(submissions, args.jobs, lambda: Grader(settings), keep, own_exercise)
    except GraderFault as fault:
        print(f"grader fault: {fault}", file=sys.stderr)
        return EXIT_FAULT
    rows, weak = [], 0
    reference = results["reference"]
    ok = (
        reference.status == SubmissionStatus.GRADED
        and reference.max_score > 0
        and reference.score == reference.max_score
    )
    weak += not ok
    rows.append(
        ["reference", "all", f"{reference.score:g}/{reference.max_score:g}", "full marks" if ok else "NOT FULL MARKS"]
    )
    caught_by_name: dict[str, bool] = {}
    for name, mutant in mutants.items():
        result = results[name]
        own = result.exercises.get(mutant.exercise)
        # Caught means its own exercise lost points while it imported and ran: a mutant that fails
        # to import loses everything and would otherwise hide a suite that catches nothing.
        caught = result.status == SubmissionStatus.GRADED and own is not None and own.score < own.max_score
        weak += not caught
        caught_by_name[name] = caught
        score = f"{own.score:g}/{own.max_score:g}" if own else "-"
        rows.append([name, mutant.exercise, score, "caught" if caught else "NOT CAUGHT"])
    print(format_table(["submission", "graded on", "score", "verdict"], rows))
    print("\n" + by_kind(caught_by_name))
    print(f"\n{len(mutants)} mutants, {weak} problem(s)")
    return EXIT_OK if weak == 0 else EXIT_WEAK_SUITE
