"""Where one grading's time goes: the calls into the sandbox against the same calls in this process.

    python benchmarks/bench_grading_cost.py [--copies 8]

Grades ``--copies`` copies of the reference on one warm worker (isolation as configured) after a
first grading, then runs the same hidden suite in this process (``LocalStudent``: the trusted
reference, no sandbox). Prints per grading: the wall time, the machine's CPU (all processes, from
/proc/stat: the judge, the worker and the child), the judge's own CPU, and for each op its calls
and milliseconds in the sandbox and in process. The difference per call is what the sandbox's
wire costs (encoding, two processes, the child's own Python), which no speed target may hide.
"""

from __future__ import annotations

import argparse
import collections
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: make the project importable

import grader.suite as hidden  # noqa: E402
from benchmarks.suite_profile import busy_seconds  # noqa: E402
from grader.api import Grader, load_submission  # noqa: E402
from grader.mutants import reference_source  # noqa: E402
from grader.sandbox.session import SandboxStudent  # noqa: E402
from grader.settings import GraderSettings  # noqa: E402
from grader.suite.local import LocalStudent  # noqa: E402


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class OpTimes:
    """Seconds and counts of ``call`` per op, while installed on a Student class."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.count: dict[str, int] = collections.Counter()

    def install(self, cls: type) -> None:
        original = cls.call

        def timed(student, op, *args, **kwargs):
            started = time.perf_counter()
            try:
                return original(student, op, *args, **kwargs)
            finally:
                self.seconds[op] += time.perf_counter() - started
                self.count[op] += 1

        cls.call = timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8)
    args = parser.parse_args()
    settings = GraderSettings.from_env()
    source = reference_source()
    copies = [load_submission({"reference.py": source}, f"copy{index}", settings) for index in range(args.copies + 1)]
    hidden.prepare()
    sandboxed, local = OpTimes(), OpTimes()
    with Grader(settings) as grading:
        isolation = grading.start()
        grading.grade(copies[0])  # warm: the worker, the suite's imports and caches
        sandboxed.install(SandboxStudent)
        wall, machine, judge = time.perf_counter(), busy_seconds(), own_cpu_seconds()
        for copy in copies[1:]:
            grading.grade(copy)
        wall, machine = time.perf_counter() - wall, busy_seconds() - machine
        judge = own_cpu_seconds() - judge
    namespace = LocalStudent.from_source(source).namespace
    hidden.run_suite(LocalStudent(namespace))
    local.install(LocalStudent)
    in_process = time.perf_counter()
    for _ in range(args.copies):
        hidden.run_suite(LocalStudent(namespace))
    in_process = time.perf_counter() - in_process
    n = args.copies
    print(f"isolation {isolation}, {n} gradings of the reference after a warm one")
    print(
        f"sandbox:    {wall / n:.3f} s wall, {machine / n:.3f} s machine CPU, {judge / n:.3f} s judge CPU per grading"
    )
    print(f"in process: {in_process / n:.3f} s per grading (no sandbox)")
    print(f"{'op':24} {'calls':>6} {'sandbox ms':>11} {'in process ms':>14} {'ms per call more':>17}")
    for op in sorted(sandboxed.seconds, key=sandboxed.seconds.get, reverse=True):
        calls = sandboxed.count[op] / n
        ours, theirs = sandboxed.seconds[op] / n * 1e3, local.seconds.get(op, 0.0) / n * 1e3
        print(f"{op:24} {calls:6.0f} {ours:11.1f} {theirs:14.1f} {(ours - theirs) / calls:17.2f}")
    total = sum(sandboxed.seconds.values()) / n * 1e3, sum(local.seconds.values()) / n * 1e3
    calls = sum(sandboxed.count.values()) / n
    print(f"{'all':24} {calls:6.0f} {total[0]:11.1f} {total[1]:14.1f} {(total[0] - total[1]) / calls:17.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
