"""Pass rates counted by student, not by attempt: which property families trip the class up.

Each student counts once per exercise. For each property family of the hidden suite: the share of
students whose best attempt (the one that gives their grade) passes every test of that family,
and beside it the share whose first attempt did. Attempts that define nothing (the stub handed in
as it was, or a file that did not import) say nothing about any property: they are left out, and
a student who handed in only such attempts is not counted. Pure: ``GradedRun`` rows in, a table out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

BY_STUDENT_COLUMNS = ["exercise", "family", "students", "best_passed", "best_rate", "first_passed", "first_rate"]


@dataclass(frozen=True)
class GradedRun:
    """One hidden-suite attempt, reduced to what pass rates need."""

    student: str
    exercise: str
    time: datetime
    attempt_id: int  # breaks ties of time
    score: float
    max_score: float
    families: Mapping[str, bool]  # property family -> every test of it that ran passed
    defined: bool  # False: it defined nothing that could be tested


def _best(runs: list[GradedRun]) -> GradedRun:
    """The attempt with the highest fraction (a larger maximum, then the earlier one, breaks ties)."""
    ranked = enumerate(runs)  # runs are in time order: the earlier of equal attempts wins
    return max(ranked, key=lambda pair: (pair[1].score / pair[1].max_score, pair[1].max_score, -pair[0]))[1]


def pass_rates_by_student(runs: Iterable[GradedRun]) -> pd.DataFrame:
    """One row per (exercise, family) (``BY_STUDENT_COLUMNS``), the most failed at its best first."""
    mine: dict[tuple[str, str], list[GradedRun]] = defaultdict(list)
    for run in runs:
        if run.defined and run.max_score > 0:
            mine[run.exercise, run.student].append(run)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # best n, passed, first n, passed
    for attempts in mine.values():
        attempts.sort(key=lambda run: (run.time, run.attempt_id))
        best, first = _best(attempts), attempts[0]
        for family, passed in best.families.items():
            counts[best.exercise, family][0] += 1
            counts[best.exercise, family][1] += passed
        for family, passed in first.families.items():
            counts[first.exercise, family][2] += 1
            counts[first.exercise, family][3] += passed
    rows = [
        (
            exercise,
            family,
            n,
            ok,
            ok / n if n else float("nan"),
            n_first,
            ok_first,
            ok_first / n_first if n_first else float("nan"),
        )
        for (exercise, family), (n, ok, n_first, ok_first) in counts.items()
    ]
    columns = [
        "exercise",
        "family",
        "students",
        "best_passed",
        "best_rate",
        "first_students",
        "first_passed",
        "first_rate",
    ]
    table = pd.DataFrame(rows, columns=columns).drop(columns="first_students")
    return table.sort_values(["best_rate", "exercise", "family"], ignore_index=True)[BY_STUDENT_COLUMNS]
