"""The public tests' plugin: pytest runs inside the child, and each test's outcome leaves as plain data.

The judge trusts none of it: it checks the report's shape and labels the result as public tests
reported from inside the sandbox (``grader.sandbox.public_tests``).
"""

from __future__ import annotations

import os
import re

from .protocol import PytestOutcome, PytestPhase, safe_str

CONTEXT_LINES = 3  # of the test's source above the failing line
# pytest's explanation of an assertion names each object by its repr: "<built-in method allclose of
# type object at 0x7f...>", "<conftest.Implementation object at 0x7f...>". The name says as much.
CALLABLE_REPR = re.compile(r"<(?:built-in method|bound method|function|method) ([\w.]+)[^<>]*? at 0x[0-9a-f]+>")
OBJECT_REPR = re.compile(r"<([\w.]+) object at 0x[0-9a-f]+>")
# "+  where allclose = torch.allclose": once the reprs are names, a line that only names a function.
NAMING_LINE = re.compile(r"^E\s+\+\s+(?:where|and)\s+[\w.]+ = [\w.]+$")
SANDBOX_PATH = re.compile(r'File "(?:[^"]*/)?([^"/]+)"')  # a file of the sandbox's folder: its name
PYTEST_ADVICE = "Use -v to get more diff"
PLUMBING = ("conftest.py",)  # the public tests' loader: how a name was found, never why a test failed


def _entry_block(entry) -> str:
    """One frame of the traceback: where, a few lines of source to the failing one, the error lines."""
    place = getattr(entry, "reprfileloc", None)
    name = os.path.basename(str(place.path)) if place is not None else ""
    lines = [line for line in getattr(entry, "lines", []) if line.strip() and PYTEST_ADVICE not in line]
    if name.startswith("<"):  # Python's own frozen import machinery: no source, only the error
        lines, name = [line for line in lines if line.startswith("E")], ""
    failing = next((index for index, line in enumerate(lines) if line.startswith(">")), None)
    if failing is not None:
        lines = lines[max(failing - CONTEXT_LINES, 0) :]
    lines = [SANDBOX_PATH.sub(r'File "\1"', OBJECT_REPR.sub(r"<\1>", CALLABLE_REPR.sub(r"\1", line))) for line in lines]
    lines = [line for line in lines if not NAMING_LINE.match(line)]
    return "\n".join(([f"{name}, line {place.lineno}"] if name else []) + _dedented(lines))


def _dedented(lines: list[str]) -> list[str]:
    """pytest's layout, narrower: its marker column (">" the failing line, "E" the error) then the source
    and the error each without the indentation they share (a narrow page wraps every space of it)."""

    def common(texts: list[str]) -> int:
        return min((len(text) - len(text.lstrip(" ")) for text in texts if text.strip()), default=0)

    source = [line[4:] for line in lines if not line.startswith("E")]
    errors = [line[1:] for line in lines if line.startswith("E")]
    source_cut, error_cut = common(source), common(errors)
    return [
        f"E {line[1 + error_cut :]}" if line.startswith("E") else f"{line[:1].strip() or ' '} {line[4 + source_cut :]}"
        for line in lines
    ]


def failure_message(report) -> str:
    """A failed test as the student needs it: where it failed, the lines of the test (and of their code)
    leading to it, and the error with its values; without pytest's fixture values (``impl =
    <conftest...>``), object addresses, the loader's frames or the sandbox's paths. A report pytest
    gives as plain text (a stub's one line, a collection error) stays as it is."""
    entries = getattr(getattr(report.longrepr, "reprtraceback", None), "reprentries", None)
    if not entries:
        return safe_str(report.longreprtext)
    try:
        return _cleaned(entries)
    except Exception:  # noqa: BLE001 - a report of a shape not met before: pytest's own text, whole
        return safe_str(report.longreprtext)


def _cleaned(entries: list) -> str:
    kept = [
        entry
        for index, entry in enumerate(entries)
        if index == len(entries) - 1
        or os.path.basename(str(getattr(getattr(entry, "reprfileloc", None), "path", ""))) not in PLUMBING
        and not str(getattr(getattr(entry, "reprfileloc", None), "path", "")).startswith("<")
    ]
    blocks = [_entry_block(entry) for entry in kept]
    return safe_str("\n\n".join(block for block in blocks if block))


class PytestRecorder:
    """A tiny pytest plugin: keeps each test's outcome as plain data."""

    def __init__(self) -> None:
        self.tests: list[dict] = []
        self.problem: str | None = None

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == PytestPhase.CALL or report.outcome != PytestOutcome.PASSED:
            message = "" if report.passed else failure_message(report)
            self.tests.append(
                {"nodeid": safe_str(report.nodeid), "when": report.when, "outcome": report.outcome, "message": message}
            )

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.tests.append(
                {
                    "nodeid": safe_str(report.nodeid),
                    "when": PytestPhase.COLLECT,
                    "outcome": PytestOutcome.FAILED,
                    "message": safe_str(report.longreprtext),
                }
            )


def run_pytest(rootdir: str, tests_dir: str) -> PytestRecorder:
    """Run pytest on ``tests_dir``, nothing of the machine's configuration, and keep its outcome."""
    import pytest  # imported here: hidden grading never needs it

    recorder = PytestRecorder()
    # Only pytest's own plugins: whatever else is installed where the worker runs must not change
    # what the public tests do, and finding those plugins costs about 0.2 s a run.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        pytest.main(
            [
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                rootdir,
                "--confcutdir",
                rootdir,
                "-o",
                "addopts=",
                tests_dir,
            ],
            plugins=[recorder],
        )
    except BaseException as error:  # noqa: BLE001
        recorder.problem = f"{type(error).__name__}: {safe_str(error)}"
    return recorder
