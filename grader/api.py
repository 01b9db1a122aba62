"""Grade a submission in this process: what every judge runs.

    from grader.api import grade_submission
    result = grade_submission("exercises/")            # a file, a folder, or {"rope.py": "..."}
    result.to_json()                                    # SubmissionResult, round-trips via from_json

A judge is a trusted process that grades: a Dask worker of the grading service
(``grader.service.judge``, which the app and ``grade --scheduler`` submit to), the CLI itself
(``grade --jobs N`` without a scheduler, ``validate``), and Gradescope's ``run_autograder``. Each
keeps a ``Grader`` per mode and grades with it; the app never calls this module to grade.

``GradingMode.HIDDEN`` runs the hidden suite (``grader.suite``) in the judge against the
submission in the sandbox. ``GradingMode.PUBLIC`` (what a student bundle can do, see
``running_in_bundle()``, and the app's practice runs) runs the public tests
``exercises/test_*.py`` with pytest *inside* the sandbox; their outcome comes back as data from
untrusted code, and the result says so (``public_tests_only=True``).

Each ``Grader`` starts its own sandbox worker with ``subprocess`` (never a fork of the caller) and
grades submissions one after another; use one ``Grader`` per thread.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grader
from grader.import_problems import describe_import_error, did_not_import, import_order
from grader.results import SubmissionResult, TestOutcome
from grader.sandbox import (
    GraderFault,
    SandboxStudent,
    SubmissionSandbox,
    WorkerProcess,
    choose_isolation,
    run_public_tests,
)
from grader.sandboxed.protocol import PytestOutcome, PytestPhase
from grader.selection import grading_mode, selected_exercises
from grader.settings import GraderSettings
from grader.submissions import Submission, SubmissionRejected, is_submitted_file, load_submission, submission_id_for
from grader.vocabulary import PUBLIC_TEST_FAMILY, SubmissionStatus, Visibility
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISE_IDS, EXERCISES
from poslab.vocabulary import GradingMode, TestStatus

BUNDLE_MARKER = ".poslab-bundle"
PUBLIC_TESTS_DIR = PROJECT_ROOT / "exercises"
OTHER_TESTS = "other"  # the exercise of a public test file named after none (see public_test_exercise)

__all__ = [
    "Grader",
    "GraderFault",
    "Submission",
    "SubmissionRejected",
    "SubmissionResult",
    "grade_submission",
    "grading_mode",
    "is_submitted_file",
    "load_submission",
    "running_in_bundle",
    "submission_id_for",
]


def running_in_bundle(root: Path = PROJECT_ROOT) -> bool:
    """True in a student bundle made by ``python -m grader release`` (no hidden suite there)."""
    return (root / BUNDLE_MARKER).is_file()


# ---------------------------------------------------------------- grading


@dataclass
class _Progress:
    """Per-submission bookkeeping while its exercises are graded one by one."""

    import_problems: dict[str, str] = field(default_factory=dict)  # file -> sentence
    tests: list[TestOutcome] = field(default_factory=list)


class Grader:
    """Grades submissions one after another with one warm worker (started on first use)."""

    def __init__(
        self,
        settings: GraderSettings | None = None,
        *,
        mode: GradingMode = GradingMode.HIDDEN,
        suite: Any = None,
        public_tests_dir: Path | None = None,
    ) -> None:
        self.settings = settings or GraderSettings.from_env()
        self.mode = grading_mode(mode)
        self._suite = suite
        self.public_tests_dir = Path(public_tests_dir or PUBLIC_TESTS_DIR)
        self.worker: WorkerProcess | None = None
        self._hidden_suite_hash: str | None = None

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    @property
    def suite(self) -> Any:
        if self._suite is None:
            import grader.suite as hidden_suite  # only the judging side ever imports the hidden tests

            self._suite = hidden_suite
        return self._suite

    def suite_hash(self) -> str:
        if self.mode == GradingMode.PUBLIC:
            digest = hashlib.sha256()
            for name, text in sorted(self.public_test_files().items()):
                digest.update(name.encode() + b"\0" + text.encode() + b"\0")
            return "public:" + digest.hexdigest()
        if self._hidden_suite_hash is None:
            # The suite runs as imported, once: fingerprint it once (reading its files took 5 ms a grading).
            self._hidden_suite_hash = self.suite.suite_hash()
        return self._hidden_suite_hash

    def _worker(self) -> WorkerProcess:
        if self.worker is None or not self.worker.alive():
            if self.worker is not None:
                self.worker.close()
            public = self.mode == GradingMode.PUBLIC
            # The public tests run under pytest and never on the meta device; the hidden ones do.
            self.worker = WorkerProcess(
                self.settings,
                choose_isolation(self.settings),
                preload=("pytest",) if public else (),
                meta_kernels=not public,
            )
        return self.worker

    def start(self) -> str:
        """Start the warm worker now rather than at the first grading; returns its isolation."""
        return self._worker().isolation

    def grade(self, submission: Submission, exercises: Sequence[str] | None = None) -> SubmissionResult:
        """Grade with the tests of ``exercises`` only (default: every exercise)."""
        started = time.monotonic()
        selected = selected_exercises(exercises)
        worker = self._worker()
        progress = _Progress()
        if submission.problems:
            progress.import_problems[""] = submission.problems[-1]
        progress.import_problems.update(submission.unread)  # each costs only the exercises its file carries
        if self.mode == GradingMode.HIDDEN:
            self._grade_hidden(submission, worker, progress, selected)
        else:
            self._grade_public(submission, worker, progress, selected)
        return SubmissionResult(
            submission_id=submission.submission_id,
            status=SubmissionStatus.IMPORT_FAILED if progress.import_problems else SubmissionStatus.GRADED,
            tests=tuple(progress.tests),
            isolation=worker.isolation,
            public_tests_only=self.mode == GradingMode.PUBLIC,
            submission_hash=submission.content_hash,
            suite_hash=self.suite_hash(),
            grader_version=grader.__version__,
            execution_time=time.monotonic() - started,
            messages=tuple(progress.import_problems.values()),
        )

    def _grade_hidden(
        self, submission: Submission, worker: WorkerProcess, progress: _Progress, selected: tuple[str, ...]
    ) -> None:
        cases = self.suite.collect()
        sandbox = SubmissionSandbox(worker, submission.files, self.settings.timeout)
        try:
            for exercise in EXERCISES:
                exercise_cases = [case for case in cases if case.exercise == exercise.id and exercise.id in selected]
                if not exercise_cases:
                    continue
                order = (
                    [] if submission.problems else import_order(submission.files, exercise, progress.import_problems)
                )
                student = sandbox.for_exercise(order, list(exercise.names))
                self._note_import(student, progress)
                if student.load.missing and progress.import_problems:
                    # The file meant to define it did not import: one message, not a failure per test.
                    progress.tests += [did_not_import(case, progress.import_problems) for case in exercise_cases]
                    continue
                if hasattr(self.suite, "prefetch") and not sandbox.gave_up:  # the shared calls (grader.suite.plan)
                    self.suite.prefetch(student, exercise.id)
                for case in exercise_cases:
                    student = sandbox.resumed(student)  # a crash costs the test it happened in
                    progress.tests.append(self.suite.run_case(case, student))
        finally:
            sandbox.close()
        if sandbox.fault is not None:
            raise sandbox.fault

    @staticmethod
    def _note_import(student: SandboxStudent, progress: _Progress) -> None:
        report = student.load
        for filename, error in report.import_errors.items():
            progress.import_problems[filename] = describe_import_error(filename, error)
        if report.stuck_in is not None and student.crash is not None:
            progress.import_problems[report.stuck_in] = (
                f"{report.stuck_in} could not be imported: {student.crash.reason}."
            )

    # -- public tests (student bundle)

    def public_test_files(self) -> dict[str, str]:
        return {
            path.name: path.read_text(encoding="utf-8")
            for path in sorted(self.public_tests_dir.glob("*.py"))
            if path.name.startswith("test_") or path.name == "conftest.py"
        }

    def _grade_public(
        self, submission: Submission, worker: WorkerProcess, progress: _Progress, selected: tuple[str, ...]
    ) -> None:
        tests = {
            name: text
            for name, text in self.public_test_files().items()
            if name == "conftest.py" or public_test_exercise(name) in selected
        }
        files = {**submission.files, **tests}  # only the asked-for exercises' tests run
        timeout = self.settings.timeout * len(selected)
        report = run_public_tests(worker, files, timeout)
        if report.crash is not None:
            progress.import_problems["pytest"] = f"The public tests did not finish: {report.crash}"
        for test in report.tests:
            exercise = public_test_exercise(test["nodeid"])
            passed = test["outcome"] == PytestOutcome.PASSED
            if test["when"] == PytestPhase.COLLECT and not passed:
                progress.import_problems[test["nodeid"]] = (
                    f"{test['nodeid']} could not be collected: {test['message'][:500]}"
                )
            if exercise not in selected and len(selected) < len(EXERCISE_IDS):
                continue  # a test file named after no exercise: it counts only when all are graded
            output = "Passed." if passed else test["message"]
            progress.tests.append(
                TestOutcome(
                    test["nodeid"],
                    exercise,
                    1.0 if passed else 0.0,
                    1.0,
                    TestStatus.PASSED if passed else TestStatus.FAILED,
                    output + " [public test; its outcome was reported from inside the sandbox]",
                    Visibility.VISIBLE,
                    PUBLIC_TEST_FAMILY,
                )
            )


def public_test_exercise(nodeid: str) -> str:
    """``exercises/test_rope.py::test_x`` -> ``rope`` (the file's name after ``test_``)."""
    stem = Path(nodeid.split("::")[0]).stem.removeprefix("test_")
    return stem if stem in EXERCISE_IDS else OTHER_TESTS


def grade_submission(
    source: str | Path | Mapping[str, str],
    *,
    mode: GradingMode = GradingMode.HIDDEN,
    submission_id: str | None = None,
    settings: GraderSettings | None = None,
    suite: Any = None,
) -> SubmissionResult:
    """Grade one submission with a worker of its own (about 3 s of start-up for the hidden tests)."""
    settings = settings or GraderSettings.from_env()
    submission = load_submission(source, submission_id, settings)
    with Grader(settings, mode=mode, suite=suite) as grading:
        return grading.grade(submission)
