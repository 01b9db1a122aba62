"""The shared calls made ahead (``grader/suite/plan.py``): what they save, and that they change no grade.

    python benchmarks/bench_calls_ahead.py [FILE ...]

Grades each submission twice on one warm Grader through the sandbox, with the calls made ahead and
without (a suite without ``prefetch``), in turn. Without files: the reference and every named mutant.
Prints both wall times in all and every test whose outcome differs. Only a speed test's measured
seconds may differ, and a hostile file that prints its own paths (each child has its own uid).
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make the project importable


def submissions(paths: list[str]) -> list[tuple[str, str]]:
    from grader.mutants import list_mutants, reference_source

    if paths:
        return [(path, Path(path).read_text(encoding="utf-8")) for path in paths]
    return [("reference", reference_source())] + [(mutant.name, mutant.source) for mutant in list_mutants()]


def outcomes(result) -> list[tuple]:
    return [(test.name, test.status, test.score, test.output) for test in result.tests]


def main() -> int:
    import torch

    import grader.suite as hidden
    from grader.api import Grader, load_submission
    from grader.settings import GraderSettings

    torch.set_num_threads(1)
    hidden.prepare()  # draws and plans, as a judge warms up
    one_at_a_time = types.SimpleNamespace(
        collect=hidden.collect, run_case=hidden.run_case, suite_hash=hidden.suite_hash
    )
    settings = GraderSettings.from_env()
    walls, differing = {"ahead": 0.0, "one at a time": 0.0}, 0
    with Grader(settings) as ahead, Grader(settings, suite=one_at_a_time) as plain:
        plain.worker = ahead.worker = ahead._worker()  # one warm sandbox worker for both
        for name, source in submissions(sys.argv[1:]):
            submission = load_submission({"mine.py": source}, name, settings)
            graded = {}
            for label, grading in (("ahead", ahead), ("one at a time", plain)):
                started = time.perf_counter()
                graded[label] = outcomes(grading.grade(submission))
                walls[label] += time.perf_counter() - started
            changed = [(a, b) for a, b in zip(graded["ahead"], graded["one at a time"]) if a != b]
            differing += bool(changed)
            for made_ahead, made_plain in changed:
                print(f"{name}: {made_ahead[0]}\n  ahead:         {made_ahead[3]}\n  one at a time: {made_plain[3]}")
        plain.worker = None  # closed once, by ahead
    print(f"{differing} submission(s) with a differing outcome")
    print(f"wall in all: ahead {walls['ahead']:.1f} s, one at a time {walls['one at a time']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
