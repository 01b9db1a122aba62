"""poslab.class_report: the class table in the gradebook's units, as the Instructor page shows and downloads it."""

import io
import math

import pandas as pd
import pytest

from grader.lms.grades import grades_from_class_table
from poslab.class_report import class_report, points_header

MAXIMA = {"rope": 12.0, "alibi": 7.5}


def class_table() -> pd.DataFrame:
    """What Store.class_progress() gives: exact percentages, grades as best hidden-suite fractions."""
    return pd.DataFrame(
        {
            "student": ["Ann", "Bob", "Cy"],
            "percent": [15.789473684210526, 100.0, 0.0],
            "lessons_visited": [3, 19, 1],
            "lessons_done": [1, 19, 0],
            "lessons_total": [19, 19, 19],
            "exercises_attempted": [2, 2, 0],
            "exercises_graded": [1, 2, 0],
            "hints_used": [1, 0, 0],
            "last_active": pd.to_datetime(["2026-01-01 10:00", "2026-01-02 11:00", "2026-01-03 12:00"], utc=True),
            "grade:rope": [0.5, 1.0, float("nan")],
            "grade:alibi": [float("nan"), 2 / 3, float("nan")],
        }
    )


def test_percentages_have_one_decimal_and_grades_are_points_out_of_the_suites_maximum():
    report = class_report(class_table(), MAXIMA)
    assert list(report["percent"]) == [15.8, 100.0, 0.0]
    assert list(report["rope"][:2]) == [6.0, 12.0] and math.isnan(report["rope"][2])
    assert math.isnan(report["alibi"][0]) and report["alibi"][1] == 5.0  # 2/3 of 7.5, not 0.6666…
    assert list(report["total"][:2]) == [6.0, 17.0] and math.isnan(report["total"][2])  # never graded: blank
    assert set(report["max"]) == {19.5}
    assert not any(column.startswith("grade:") for column in report.columns)


def test_the_csv_reads_as_the_gradebook_does_and_its_totals_are_the_lms_exports():
    report = class_report(class_table(), MAXIMA)
    csv = report.to_csv(index=False)
    header = csv.splitlines()[0].split(",")
    assert header[-4:] == ["rope", "alibi", "total", "max"]  # gradebook.csv: one column per exercise, total, max
    assert "15.8," in csv and "15.789" not in csv and "0.666" not in csv
    again = pd.read_csv(io.StringIO(csv))
    exported = {grade.key: grade.total for grade in grades_from_class_table(class_table(), MAXIMA)}
    assert exported == pytest.approx(dict(zip(again["student"][:2], again["total"][:2])))


def test_an_exercise_column_says_its_maximum():
    assert points_header("rope", 12.0) == "rope /12" and points_header("alibi", 7.5) == "alibi /7.5"
