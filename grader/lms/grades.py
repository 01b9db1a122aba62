"""The grades to send back to an LMS: from a ``python -m grader grade`` folder, or from the app's
store (best hidden-suite score per exercise; public-tests-only attempts never count).

Both give ``grader.lms.fill.StudentGrade`` rows: a key to match in the LMS file, and a total out
of the grader's maximum, in points.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from grader.lms.fill import StudentGrade
from poslab.deadlines import AssignmentGrade, has_counted

if TYPE_CHECKING:  # only the Instructor page hands a table in: the command line need not import pandas
    import pandas as pd

MAX_GRADEBOOK_BYTES = 20 * 1024 * 1024
REQUIRED = ("id", "lms_id", "total", "max")


class GradesError(ValueError):
    """The grades cannot be read; the message says what was expected."""


def read_grades(directory: str | Path) -> list[StudentGrade]:
    """One grade per row of ``DIR/gradebook.csv``, keyed by its ``lms_id``."""
    path = Path(directory) / "gradebook.csv"
    grades = []
    for line, row in enumerate(read_gradebook_rows(directory), start=2):
        try:
            total, maximum = float(row["total"]), float(row["max"])
        except (TypeError, ValueError):
            raise GradesError(
                f"{path}, line {line}: total {row['total']!r} and max {row['max']!r} must be numbers."
            ) from None
        grades.append(StudentGrade((row["lms_id"] or "").strip(), row["id"], total, maximum))
    return grades


def read_gradebook_rows(directory: str | Path) -> list[dict[str, str]]:
    """The rows of ``DIR/gradebook.csv`` as {column: text}; GradesError when it is not one."""
    folder = Path(directory)
    path = folder / "gradebook.csv"
    if not path.is_file():
        raise GradesError(f"{folder} has no gradebook.csv: give --grades the --out folder of `python -m grader grade`.")
    if path.stat().st_size > MAX_GRADEBOOK_BYTES:
        raise GradesError(f"{path} is larger than {MAX_GRADEBOOK_BYTES // (1024 * 1024)} MB: is it a gradebook?")
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as error:
        raise GradesError(f"{path} is not a readable gradebook ({error}).") from None
    missing = [name for name in REQUIRED if not rows or name not in rows[0]]
    if missing and rows:
        raise GradesError(
            f"{path} lacks the column(s) {', '.join(missing)}: grade the LMS download again with "
            "`python -m grader grade EXPORT.zip --out DIR` (unchanged submissions are not regraded)."
        )
    return rows


@lru_cache(maxsize=1)
def suite_maxima() -> dict[str, float]:
    """Points per exercise in the hidden suite: the grader's maximum of each exercise."""
    from grader.suite import collect

    maxima: dict[str, float] = {}
    for case in collect():
        maxima[case.exercise] = maxima.get(case.exercise, 0.0) + case.points
    return maxima


def grades_from_class_table(table: pd.DataFrame, maxima: dict[str, float]) -> list[StudentGrade]:
    """Per student with a hidden-suite grade: the sum of each exercise's best fraction times its points.

    ``table`` is ``Store.class_progress()`` (``grade:<exercise>``: the best hidden-suite fraction, NaN
    when never graded). A student with no graded attempt has no grade (left blank in the LMS).
    """
    total_max = sum(maxima.values())
    grades = []
    for row in table.to_dict("records"):
        fractions = {exercise: row.get(f"grade:{exercise}") for exercise in maxima}
        graded = {
            exercise: float(value)
            for exercise, value in fractions.items()
            if isinstance(value, (int, float)) and not math.isnan(value)
        }
        if graded:
            total = sum(fraction * maxima[exercise] for exercise, fraction in graded.items())
            grades.append(StudentGrade(str(row["student"]), str(row["student"]), total, total_max))
    return grades


def grades_from_assignment(grades: Mapping[str, AssignmentGrade]) -> list[StudentGrade]:
    """Per student with something counted for the assignment (``poslab.course_grades.class_grades``):
    its total out of the assignment's points. A student with nothing counted is left blank in the LMS."""
    return [
        StudentGrade(key, key, grade.total, grade.max_points) for key, grade in grades.items() if has_counted(grade)
    ]
