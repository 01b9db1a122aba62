"""A student's total, the one place it is computed: for now the sum over every exercise.

When assignments exist (which exercises, their points, late work), the total becomes the
assignment's; every table that shows or exports a total asks this module, so it changes here only.
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
