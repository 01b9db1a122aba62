"""Grading speed: seconds per submission for N copies of the reference, against a cold torch import.

    python benchmarks/bench_grader.py [--copies 40] [--jobs 2] [--suite hidden|probe] [--isolation auto]

Grades ``--copies`` copies of ``grader.mutants.reference_source()`` (the full hidden suite) with the
CLI's own machinery (one warm worker per job, isolation as configured), and prints: worker
start-up, seconds per submission once warm, and the ratio of that to a cold
``python -c "import torch"`` measured in the same run (the machine may be shared: the ratio is
the figure that travels). ``--suite probe`` runs one quick check per exercise instead, to show
the sandbox's own cost per submission. Target: hidden suite <= 0.25 s per submission with
--jobs 2 on 2 cores, isolation on.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: make the project importable

from grader.api import Grader, load_submission  # noqa: E402
from grader.cli import grade_in_parallel  # noqa: E402
from grader.settings import ISOLATIONS, GraderSettings  # noqa: E402

TARGET_SECONDS = 0.25


def cold_torch_import(repeats: int = 3) -> float:
    """Median wall time of a fresh interpreter importing torch."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def in_process_seconds(source: str, suite, repeats: int = 3) -> float:
    """The same suite against the trusted LocalStudent, no sandbox: what the tests alone cost."""
    from grader.suite.local import LocalStudent

    if suite is None:
        import grader.suite as suite
    cases = suite.collect()  # the same selection as graded
    times = []
    for _ in range(repeats):
        student = LocalStudent.from_source(source)
        started = time.perf_counter()
        for case in cases:
            suite.run_case(case, student)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class Excluding:
    """A suite without the tests whose names contain any of ``parts``."""

    def __init__(self, suite, parts: list[str]) -> None:
        if suite is None:
            import grader.suite as suite
        self.suite, self.parts = suite, parts

    def collect(self):
        return tuple(case for case in self.suite.collect() if not any(part in case.name for part in self.parts))

    def run_case(self, case, student):
        return self.suite.run_case(case, student)

    def suite_hash(self) -> str:
        return self.suite.suite_hash() + "-excluding-" + "-".join(self.parts)


def probe_suite():
    from tests.hostile._support import ProbeSuite

    return ProbeSuite


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--suite", choices=("hidden", "probe"), default="hidden")
    parser.add_argument("--isolation", choices=ISOLATIONS, default=ISOLATIONS[0])
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="TEXT",
        help="leave out hidden tests whose name contains TEXT (to see what one test costs)",
    )
    args = parser.parse_args()

    import torch

    from grader.mutants import reference_source

    torch.set_num_threads(1)  # as the CLI does: one judging thread per job
    settings = GraderSettings.from_env().with_changes(isolation=args.isolation)
    suite = probe_suite() if args.suite == "probe" else None
    if args.exclude:
        suite = Excluding(suite, args.exclude)
    source = reference_source()
    submissions = [
        load_submission({"reference.py": source}, f"copy{index:03d}", settings) for index in range(args.copies)
    ]

    cold = cold_torch_import()
    graders: list[Grader] = []
    started = time.perf_counter()
    for _ in range(args.jobs):  # start every worker first, so that start-up is measured apart
        grading = Grader(settings, suite=suite)
        grading._worker()
        graders.append(grading)
    startup = time.perf_counter() - started
    started = time.perf_counter()
    import grader.suite as hidden

    prepare = getattr(hidden if suite is None else suite, "prepare", None)
    drawn = prepare() if prepare is not None else 0  # as a judge's warm-up does: once per process
    preparation = time.perf_counter() - started
    pool = iter(graders)
    results = []
    started = time.perf_counter()
    grade_in_parallel(submissions, args.jobs, lambda: next(pool), results.append)
    elapsed = time.perf_counter() - started

    per_submission = elapsed / args.copies
    in_process = in_process_seconds(source, suite)
    scores = {f"{r.score:g}/{r.max_score:g}" for r in results}
    isolation = {r.isolation for r in results}
    print(f"suite            {args.suite} ({len(results[0].tests)} tests, scores {', '.join(sorted(scores))})")
    print(f"isolation        {', '.join(sorted(isolation))}")
    print(f"jobs             {args.jobs}")
    print(f"worker start-up  {startup:.2f} s for {args.jobs} worker(s), in parallel")
    print(f"suite prepared   {preparation:.2f} s ({drawn} tests drew their inputs), once per process")
    print(f"graded           {args.copies} submissions in {elapsed:.2f} s")
    print(f"per submission   {per_submission:.3f} s  (target {TARGET_SECONDS} s for the hidden suite)")
    print(f"same suite, no sandbox {in_process:.3f} s per submission (LocalStudent, one thread, median of 3)")
    print(f"cold torch import {cold:.2f} s  (python -c 'import torch', median of 3)")
    print(f"ratio            {per_submission / cold:.3f} of a cold torch import per submission")
    return 0


if __name__ == "__main__":
    sys.exit(main())
