"""The workspace in Chromium: seconds from a click to its answer, once the judges are warm.

    python benchmarks/bench_browser.py [--runs 3]

Runs the browser flow of ``tests/browser/test_workspace.py`` (type, reload, run the public tests
twice, submit twice) ``--runs`` times, each against a fresh app, and prints what it measured: the
second "Run the public tests" (target < 2 s) and the second "Submit for grading", click to result
(target < 1 s). The app runs with its default judges (one per core; ``POSLAB_GRADER_WORKERS``
overrides), not the single judge of the browser tests. Needs Chromium (``/usr/bin/chromium``) and
bubblewrap, as the browser tests do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMINGS = ROOT / "artifacts" / "browser" / "workspace_timings.json"
FLOW = "tests/browser/test_workspace.py::test_type_reload_run_the_public_tests_and_submit"


def one_run() -> dict[str, float]:
    TIMINGS.unlink(missing_ok=True)
    judges = {"POSLAB_GRADER_WORKERS": os.environ.get("POSLAB_GRADER_WORKERS", str(os.cpu_count() or 1))}
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", FLOW, "-n", "0", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ | judges,
    )  # the app's default judges
    if finished.returncode != 0 or not TIMINGS.exists():
        raise SystemExit(f"the browser flow failed:\n{finished.stdout[-3000:]}")
    return json.loads(TIMINGS.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = [one_run() for _ in range(parser.parse_args().runs)]
    for key, target in (("warm_public_tests_s", 2.0), ("second_submission_s", 1.0)):
        values = [run[key] for run in runs]
        print(
            f"{key:22} median {statistics.median(values):.2f} s  max {max(values):.2f} s  "
            f"runs {', '.join(f'{v:.2f}' for v in values)}  (target < {target:g} s)"
        )


if __name__ == "__main__":
    main()
