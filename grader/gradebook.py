"""What grading results mean for the books: per-test rows for pass rates, and the gradebook folder.

The grader writes ``DIR/gradebook.csv`` (id, name, lms_id, late, status, one column per exercise,
total, max) and
``DIR/<id>/results.json`` (Gradescope's format, ``SubmissionResult.to_gradescope``) with
``python -m grader grade --out DIR``; this module reads them back for the Instructor page. Only
these files are read; a broken ``results.json`` is skipped and named in ``problems`` rather than
hiding the rest of the class. ``per_test_rows`` gives the store the per-test rows of a result, so the
store never reads the grader's JSON; ``graded_run`` reads a stored attempt's details for the pass
rates counted by student (``poslab.pass_by_student``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from grader.results import SubmissionResult
from grader.vocabulary import NOT_IMPLEMENTED
from poslab.pass_by_student import GradedRun
from poslab.store import Attempt, TestRow, pass_rates
from poslab.vocabulary import TestStatus

MAX_RESULTS_BYTES = 5 * 1024 * 1024  # one submission's results; far above any real one


class GradebookError(ValueError):
    """The folder is not a gradebook; the message says what was expected."""


@dataclass(frozen=True)
class Gradebook:
    table: pd.DataFrame  # gradebook.csv as written, plus "percent" (total / max, 0 to 100)
    pass_rates: pd.DataFrame  # exercise, test, pass_rate, n: over every results.json read
    problems: tuple[str, ...]  # results.json files that could not be read, in sentences


def per_test_rows(result: SubmissionResult, exercise_id: str | None = None) -> tuple[TestRow, ...]:
    """One row per test that ran (of one exercise, if given), in suite order. A test whose exercise
    did not import gives no row: it says nothing about that test's property."""
    return tuple(
        TestRow(test.exercise, test.name, test.status == TestStatus.PASSED)
        for test in result.tests
        if (exercise_id is None or test.exercise == exercise_id) and test.status != TestStatus.DID_NOT_IMPORT
    )


def gradescope_test_rows(data: object) -> list[TestRow]:
    """The per-test rows of one Gradescope ``results.json``; ValueError if it is not one."""
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, list):
        raise ValueError("it has no list of tests")
    extra = data.get("extra_data")
    statuses = extra.get("statuses") if isinstance(extra, dict) else None
    if not (isinstance(statuses, list) and len(statuses) == len(tests)):
        statuses = [None] * len(tests)
    rows = []
    for test, status in zip(tests, statuses):
        if status == TestStatus.DID_NOT_IMPORT:
            continue  # it did not run: no pass and no fail
        tags = test.get("tags") if isinstance(test, dict) else None
        if not (isinstance(tags, list) and tags and isinstance(tags[0], str)):
            raise ValueError("a test has no exercise tag")
        if isinstance(test.get("name"), str) and isinstance(test.get("status"), str):
            rows.append(TestRow(tags[0], test["name"], test["status"] == TestStatus.PASSED))
    return rows


def _read_table(csv_path: Path) -> pd.DataFrame:
    try:
        # Ids stay text: an LMS id such as 00123 is not the number 123.
        table = pd.read_csv(csv_path, dtype={"id": str, "name": str, "lms_id": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise GradebookError(f"{csv_path.name} is not a readable CSV file ({error}).") from None
    missing = {"id", "status", "total", "max"} - set(table.columns)
    if missing:
        raise GradebookError(
            f"{csv_path.name} lacks the column(s) {', '.join(sorted(missing))}: "
            "is it a gradebook written by `python -m grader grade`?"
        )
    for text in ("name", "lms_id"):
        if text in table.columns:  # a file or folder has none: blank, not NaN
            table[text] = table[text].fillna("")
    maximum = pd.to_numeric(table["max"], errors="coerce")
    table["percent"] = (100.0 * pd.to_numeric(table["total"], errors="coerce") / maximum.where(maximum > 0)).fillna(0.0)
    return table


def _results_rows(path: Path) -> list[TestRow]:
    if path.stat().st_size > MAX_RESULTS_BYTES:
        raise ValueError(f"it is larger than {MAX_RESULTS_BYTES // (1024 * 1024)} MB")
    return gradescope_test_rows(json.loads(path.read_text(encoding="utf-8")))


def load_gradebook(directory: str | Path) -> Gradebook:
    """The gradebook in ``directory``; GradebookError when there is none."""
    folder = Path(directory).expanduser()
    if not folder.is_dir():
        raise GradebookError(f"There is no folder {str(folder)!r} on the machine running the app.")
    csv_path = folder / "gradebook.csv"
    if not csv_path.is_file():
        raise GradebookError(
            f"{str(folder)!r} has no gradebook.csv: point at the --out folder of `python -m grader grade`."
        )
    table = _read_table(csv_path)
    rows: list[TestRow] = []
    problems: list[str] = []
    for submission_id in table["id"].astype(str):
        if submission_id in ("", ".", "..") or Path(submission_id).name != submission_id:
            problems.append(f"{submission_id!r} is not a plain folder name; its results were not read.")
            continue
        try:
            rows += _results_rows(folder / submission_id / "results.json")
        except (OSError, ValueError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            problems.append(f"{submission_id}/results.json was skipped: {error}")
    return Gradebook(table, pass_rates(rows), tuple(problems))


def _defines_nothing(tests: list[dict]) -> bool:
    """No test ran, or every one that ran failed because what it needs is not implemented."""
    ran = [test for test in tests if test.get("status") != TestStatus.DID_NOT_IMPORT]
    return not ran or all(
        test.get("status") == TestStatus.FAILED and NOT_IMPLEMENTED in str(test.get("output", "")) for test in ran
    )


def graded_run(attempt: Attempt) -> GradedRun:
    """A hidden-suite attempt as pass rates by student count it: for each property family of the
    tests that ran (from the grader's details), whether every one passed, and whether the attempt
    defined anything at all. An attempt without readable details defines nothing the rates can use."""
    details = attempt.details if isinstance(attempt.details, dict) else {}
    tests = [test for test in details.get("tests") or () if isinstance(test, dict)]
    families: dict[str, bool] = {}
    for test in tests:
        if test.get("status") == TestStatus.DID_NOT_IMPORT:
            continue
        family = str(test.get("family") or "other")
        families[family] = families.get(family, True) and test.get("status") == TestStatus.PASSED
    return GradedRun(
        attempt.student,
        attempt.exercise,
        attempt.time,
        attempt.id,
        attempt.score,
        attempt.max_score,
        families,
        defined=bool(tests) and not _defines_nothing(tests),
    )
