"""Per-test pass rates: which tests trip students up, from plain per-test rows.

The store never reads the grader's JSON: whoever records an attempt hands over one ``TestRow``
per test that ran (``grader.gradebook.test_rows`` makes them from a grading result), and a
gradebook folder's results are turned into the same rows by ``grader.gradebook``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

PASS_RATE_COLUMNS = ["exercise", "test", "pass_rate", "n"]


@dataclass(frozen=True)
class TestRow:
    """One test's outcome in one attempt."""

    __test__ = False  # not a pytest class

    exercise: str
    test: str
    passed: bool


def pass_rates(rows: Iterable[TestRow]) -> pd.DataFrame:
    """Each test's pass rate and the attempts it ran in (``PASS_RATE_COLUMNS``).

    Sorted with the most failed test first, since that is what an instructor looks for.
    """
    passed: dict[tuple[str, str], int] = defaultdict(int)
    runs: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        runs[row.exercise, row.test] += 1
        passed[row.exercise, row.test] += row.passed
    table = pd.DataFrame(
        [(exercise, test, passed[exercise, test] / n, n) for (exercise, test), n in runs.items()],
        columns=PASS_RATE_COLUMNS,
    )
    return table.sort_values(["pass_rate", "exercise", "test"], ignore_index=True)
