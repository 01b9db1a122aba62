"""The class table as an instructor reads and downloads it, in the gradebook's units.

``Store.class_progress()`` keeps exact values for the code that reads it (percentages unrounded,
each exercise's grade as ``grade:<exercise>``, the best hidden-suite fraction). The Instructor page
shows and downloads this report instead: the overall percentage to one decimal, and each grade in
points out of the exercise's maximum, with ``total`` and ``max``, as ``python -m grader grade``
writes them in ``gradebook.csv`` and as the LMS export sends them.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

PERCENT_DECIMALS = 1
POINT_DECIMALS = 2  # hidden tests give fractions of a point
ACTIVITY_COLUMNS = (
    "student",
    "percent",
    "lessons_visited",
    "lessons_done",
    "lessons_total",
    "exercises_attempted",
    "exercises_graded",
    "hints_used",
    "last_active",
)


def class_report(table: pd.DataFrame, maxima: Mapping[str, float]) -> pd.DataFrame:
    """One row per student: the activity columns, then one column of points per exercise of ``maxima``
    (its points in the hidden suite; blank when never graded), ``total`` (blank when nothing was graded)
    and ``max`` (the suite's total)."""
    report = table[list(ACTIVITY_COLUMNS)].copy()
    report["percent"] = report["percent"].round(PERCENT_DECIMALS)
    points = pd.DataFrame(
        {exercise: table[f"grade:{exercise}"] * maximum for exercise, maximum in maxima.items()}, index=table.index
    )
    for exercise in maxima:
        report[exercise] = points[exercise].round(POINT_DECIMALS)
    report["total"] = points.sum(axis=1, min_count=1).round(POINT_DECIMALS)
    report["max"] = float(sum(maxima.values()))
    return report


def points_header(exercise: str, maximum: float) -> str:
    """``rope /12``: an exercise's column (or the total) as the page labels it, with its maximum."""
    return f"{exercise} /{maximum:g}"
