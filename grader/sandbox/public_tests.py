"""The public tests (a student bundle's grading): pytest runs inside one child, its outcome is data.

That data comes from untrusted code: ``check_pytest_report`` checks its shape and clips its texts,
and ``grader.api`` labels the result ``public_tests_only`` with each test's output saying it was
reported from inside the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grader.sandbox.child_session import ChildSession
from grader.sandbox.worker_process import WorkerProcess
from grader.sandboxed import protocol
from grader.sandboxed.protocol import MessageKind, PytestOutcome
from grader.student import SubmissionCrashed


@dataclass
class PublicReport:
    tests: list[dict]  # nodeid, when, outcome (a PytestOutcome), message: checked, but written by untrusted code
    crash: str | None


def run_public_tests(worker: WorkerProcess, files: Mapping[str, str], timeout: float) -> PublicReport:
    """Run pytest on the files inside one child; read its outcome as (untrusted) data."""
    session = ChildSession(worker, timeout)
    try:
        session.receive("start-up")
        session.send({"type": MessageKind.PYTEST, "files": files}, what="the public tests")
        report, _ = session.receive("the public tests")
        problem = report.get("problem")
        return PublicReport(
            check_pytest_report(report), None if problem is None else f"pytest stopped: {protocol.clip(problem, 500)}"
        )
    except SubmissionCrashed as crash:
        return PublicReport([], crash.reason)
    except protocol.ProtocolError as error:
        return PublicReport([], f"the sandbox sent a malformed report: {error}")
    finally:
        session.release()
        if session.fault is not None:
            raise session.fault


def check_pytest_report(report: dict) -> list[dict]:
    tests = report.get("tests") if report.get("type") == MessageKind.PYTEST_REPORT else None
    if not isinstance(tests, list) or len(tests) > 10_000:
        raise protocol.ProtocolError("the public-test report is not a list of tests")
    checked = []
    for test in tests:
        if not isinstance(test, dict):
            raise protocol.ProtocolError("a public-test entry is not an object")
        outcome = test.get("outcome")
        checked.append(
            {
                "nodeid": protocol.clip(test.get("nodeid"), 300),
                "when": protocol.clip(test.get("when"), 20),
                "outcome": PytestOutcome(outcome) if outcome in tuple(PytestOutcome) else PytestOutcome.FAILED,
                "message": protocol.clip(test.get("message", ""), 3000),
            }
        )
    return checked
