"""``python -m grader grade`` as an instructor runs it: N copies of the reference, every exercise.

    python benchmarks/bench_grade_command.py [--copies 40] [--jobs 2] [--runs 3] [--against DIR]

Each run is the whole command in a new process (its start-up, its judges' start and stop, the
gradebook written), timed from outside. Prints each run's wall time divided by the copies, the
median, and that over a cold ``python -c "import torch"`` measured in between (the ratio is the
figure that travels between machines). Target: <= 0.2 of a cold import per submission, with
``--jobs 2`` on 2 cores. ``--against DIR`` (another checkout, ``git worktree add DIR COMMIT``) runs
its command in turn with this one's, in alternating order, each pair after one cold import: this
VM's speed drifts within minutes, so only runs made side by side compare.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make the project importable

from benchmarks.bench_grader import cold_torch_import  # noqa: E402

TARGET_RATIO = 0.2


def one_run(folder: Path, copies: list[Path], jobs: int, project: Path = ROOT) -> float:
    out = Path(tempfile.mkdtemp(dir=folder, prefix="out-"))
    command = [sys.executable, "-m", "grader", "grade", *map(str, copies), "--out", str(out), "--jobs", str(jobs)]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"grade failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None, metavar="DIR", help="another checkout, run in turn")
    args = parser.parse_args()
    if args.against is not None:
        return compare(args)

    with tempfile.TemporaryDirectory(prefix="bench-grade-") as name:
        folder = Path(name)
        copies = write_copies(folder, args.copies)
        per_submission, colds = [], []
        for run in range(args.runs):
            colds.append(cold_torch_import(repeats=1))
            elapsed = one_run(folder, copies, args.jobs)
            per_submission.append(elapsed / args.copies)
            print(f"run {run + 1}: {elapsed:.1f} s for {args.copies}, {per_submission[-1]:.3f} s per submission")
    median, cold = statistics.median(per_submission), statistics.median(colds)
    print(f"median           {median:.3f} s per submission (start-up and stop included)")
    print(f"cold torch import {cold:.2f} s (median of {len(colds)}, one before each run)")
    print(f"ratio            {median / cold:.3f} of a cold torch import (target <= {TARGET_RATIO})")
    return 0


def write_copies(folder: Path, count: int) -> list[Path]:
    """``count`` copies of the reference, one student's file each."""
    from grader.mutants import reference_source

    source = reference_source()
    copies = [folder / f"student{index:03d}.py" for index in range(count)]
    for path in copies:
        path.write_text(source)
    return copies


def compare(args: argparse.Namespace) -> int:
    projects = {"this checkout": ROOT, str(args.against): args.against.resolve()}
    ratios: dict[str, list[float]] = {name: [] for name in projects}
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as name:
        folder = Path(name)
        copies = write_copies(folder, args.copies)
        for run in range(args.runs):
            cold = cold_torch_import(repeats=1)
            order = list(projects.items()) if run % 2 == 0 else list(projects.items())[::-1]
            for label, project in order:
                per_submission = one_run(folder, copies, args.jobs, project) / args.copies
                ratios[label].append(per_submission / cold)
                print(f"pair {run + 1}, {label}: {per_submission:.3f} s per submission, cold import {cold:.2f} s")
    for label, values in ratios.items():
        print(
            f"{label}: median ratio {statistics.median(values):.3f} over {len(values)} runs (target <= {TARGET_RATIO})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
