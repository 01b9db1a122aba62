"""The public tests' plugin: pytest runs inside the child, and each test's outcome leaves as plain data.

The judge trusts none of it: it checks the report's shape and labels the result as public tests
reported from inside the sandbox (``grader.sandbox.public_tests``).
"""

from __future__ import annotations

import os

from .protocol import PytestOutcome, PytestPhase, safe_str


class PytestRecorder:
    """A tiny pytest plugin: keeps each test's outcome as plain data."""

    def __init__(self) -> None:
        self.tests: list[dict] = []
        self.problem: str | None = None

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == PytestPhase.CALL or report.outcome != PytestOutcome.PASSED:
            message = "" if report.passed else safe_str(report.longreprtext)
            self.tests.append({"nodeid": safe_str(report.nodeid), "when": report.when,
                               "outcome": report.outcome, "message": message})

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.tests.append({"nodeid": safe_str(report.nodeid), "when": PytestPhase.COLLECT, "outcome": PytestOutcome.FAILED,
                               "message": safe_str(report.longreprtext)})


def run_pytest(rootdir: str, tests_dir: str) -> PytestRecorder:
    """Run pytest on ``tests_dir``, nothing of the machine's configuration, and keep its outcome."""
    import pytest  # imported here: hidden grading never needs it

    recorder = PytestRecorder()
    # Only pytest's own plugins: whatever else is installed where the worker runs must not change
    # what the public tests do, and finding those plugins costs about 0.2 s a run.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", rootdir, "--confcutdir", rootdir,
                     "-o", "addopts=", tests_dir], plugins=[recorder])
    except BaseException as error:  # noqa: BLE001
        recorder.problem = f"{type(error).__name__}: {safe_str(error)}"
    return recorder
