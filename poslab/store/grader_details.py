"""Per-test outcomes read from the grader's stored details, and pass rates over many attempts.

The shape read is the grader's (Gradescope's results format): ``{"tests": [{"name": str,
"status": "passed" | "failed", ...}, ...]}``; a boolean ``"passed"`` is accepted in place of
``status``. Details of any other shape contribute nothing rather than
failing the instructor's page.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

import pandas as pd

PASS_RATE_COLUMNS = ["exercise", "test", "pass_rate", "n"]


def per_test_outcomes(details: Any) -> list[tuple[str, bool]]:
    tests = details.get("tests") if isinstance(details, dict) else None
    if not isinstance(tests, list):
        return []
    outcomes = []
    for test in tests:
        if not isinstance(test, dict) or not isinstance(test.get("name"), str):
            continue
        if isinstance(test.get("passed"), bool):
            outcomes.append((test["name"], test["passed"]))
        elif isinstance(test.get("status"), str):
            outcomes.append((test["name"], test["status"] == "passed"))
    return outcomes


def pass_rates(exercise_details: Iterable[tuple[str, Any]]) -> pd.DataFrame:
    """From (exercise, details) pairs: each test's pass rate and the attempts it ran in.

    Sorted with the most failed test first, since that is what an instructor looks for.
    """
    passed: dict[tuple[str, str], int] = defaultdict(int)
    runs: dict[tuple[str, str], int] = defaultdict(int)
    for exercise, details in exercise_details:
        for name, ok in per_test_outcomes(details):
            runs[exercise, name] += 1
            passed[exercise, name] += ok
    rows = [(exercise, name, passed[exercise, name] / n, n) for (exercise, name), n in runs.items()]
    table = pd.DataFrame(rows, columns=PASS_RATE_COLUMNS)
    return table.sort_values(["pass_rate", "exercise", "test"], ignore_index=True)
