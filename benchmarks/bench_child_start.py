"""A submission's fixed cost in the sandbox: a child forked, a small file imported, the child ended.

    python benchmarks/bench_child_start.py [--cycles 60] [--rounds 3]

On one warm sandbox worker (isolation as configured), each cycle is what every grading pays before
and after its tests: ``SubmissionSandbox.for_exercise`` (the worker forks a child, the child
confines itself and imports the file) and ``close`` (the worker kills and reaps it). Prints, per
round, the wall time and the machine's CPU (all processes, from /proc/stat) per cycle, and their
medians. Nothing else should run meanwhile: this VM's speed drifts by a fifth from hour to hour, so
compare runs made back to back.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: make the project importable

from benchmarks.suite_profile import busy_seconds  # noqa: E402
from grader.sandbox import SubmissionSandbox, WorkerProcess  # noqa: E402
from grader.settings import GraderSettings  # noqa: E402

SUBMISSION = {
    "toy.py": "import torch\n\n\ndef attention(q, k, v):\n    return (q @ k.transpose(-2, -1)).softmax(-1) @ v, None\n"
}


def cycle(worker: WorkerProcess, settings: GraderSettings) -> None:
    sandbox = SubmissionSandbox(worker, SUBMISSION, settings.timeout)
    try:
        student = sandbox.for_exercise(["toy.py"], ["attention"])
        if student.load.missing:
            raise SystemExit(f"the toy submission did not import: {student.load}")
    finally:
        sandbox.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = GraderSettings.from_env()
    worker = WorkerProcess(settings)
    try:
        for _ in range(5):  # the worker's start and the first children's caches
            cycle(worker, settings)
        walls, cpus = [], []
        for round_number in range(args.rounds):
            wall, machine = time.perf_counter(), busy_seconds()
            for _ in range(args.cycles):
                cycle(worker, settings)
            walls.append((time.perf_counter() - wall) / args.cycles * 1000)
            cpus.append((busy_seconds() - machine) / args.cycles * 1000)
            print(f"round {round_number + 1}: {walls[-1]:.1f} ms wall, {cpus[-1]:.1f} ms of machine CPU per child")
        print(
            f"median ({worker.isolation}): {statistics.median(walls):.1f} ms wall, "
            f"{statistics.median(cpus):.1f} ms of machine CPU per child"
        )
    finally:
        worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
