"""A student's total, the one place it is computed: the sum of the points in a table's exercise columns.

Without an assignments file those are each exercise's best hidden-suite points; with one,
``poslab.course_grades.assignment_roll`` fills them with what the chosen assignment counts (late
work after its penalty) and passes the assignment's points as ``maxima``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

POINT_DECIMALS = 2  # hidden tests give fractions of a point


def class_totals(points: pd.DataFrame, maxima: Mapping[str, float]) -> tuple[pd.Series, float]:
    """Each row's total in points over the exercises of ``maxima`` (a missing grade counts 0), and
    the most a total can be."""
    columns = [exercise for exercise in maxima if exercise in points.columns]
    total = points[columns].fillna(0.0).sum(axis=1).round(POINT_DECIMALS)
    return total, float(sum(maxima.values()))
