"""Grades earned in the app, back to the LMS: the Instructor page's export section and the library
functions it calls (grader.lms.grades). Grades are each exercise's best hidden-suite score;
public-tests-only attempts never count. Students are matched on the roster's key (the email,
else the LMS id), as the CLI's export matches them.
"""

from __future__ import annotations

import csv
import io
import math

import pytest

import app_pages.ui.instructor.lms as section
from grader.lms.grades import grades_from_class_table, suite_maxima
from poslab.exercises import EXERCISE_IDS
from poslab.store import Store
from tests.app_harness import go, open_app
from tests.lms_builders import CanvasStudent, MoodleParticipant, canvas_gradebook, moodle_worksheet

PASSWORD = "correct horse"
MAXIMA = {"rope": 6.0, "alibi": 4.0}  # a stand-in suite's points: 10 in all
CLASS = [
    CanvasStudent("Lovelace, Ada", "101", sis_user_id="S1", sis_login_id="ada@example.edu"),
    CanvasStudent("李雷", "103", sis_user_id="S3", sis_login_id="lilei"),
    CanvasStudent("Ångström, Zoë", "102", sis_user_id="S2", sis_login_id="zoe@example.edu"),
]


def record(store: Store) -> None:
    store.record_attempt("ada@example.edu", "rope", 1, 2)  # rope: 1/2 of 6 points
    store.record_attempt("ada@example.edu", "rope", 2, 4)  # no better
    store.record_attempt("ada@example.edu", "alibi", 3, 3)  # alibi: all 4 points -> 7 of 10
    store.record_attempt("103", "rope", 2, 2)  # keyed by Canvas ID (no email in the roster): 6 of 10
    store.record_attempt("103", "alibi", 5, 5, public_tests_only=True)  # public tests only: not a grade
    store.record_attempt("zoe@example.edu", "rope", 2, 2, public_tests_only=True)  # no grade at all
    store.record_attempt("Bob", "rope", 1, 1)  # a typed name: no LMS student


def test_app_grades_are_best_hidden_suite_fractions_times_points(app_env):
    store = Store(app_env)
    record(store)
    grades = {grade.key: grade for grade in grades_from_class_table(store.class_progress(), MAXIMA)}
    assert set(grades) == {"ada@example.edu", "103", "Bob"}  # zoe has public-test runs only
    assert grades["ada@example.edu"].total == pytest.approx(0.5 * 6 + 1.0 * 4)
    assert grades["103"].total == pytest.approx(6.0) and grades["103"].maximum == 10.0


def test_the_suites_maximum_covers_every_exercise_with_positive_points():
    maxima = suite_maxima()
    assert set(maxima) == set(EXERCISE_IDS) and all(points > 0 and math.isfinite(points) for points in maxima.values())


def unlocked_section(monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    monkeypatch.setattr(section, "suite_maxima", lambda: MAXIMA)
    at = go(open_app(), "app_pages/instructor.py")
    at.main.text_input[0].input(PASSWORD)
    next(button for button in at.button if button.label == "Unlock").click().run()
    assert not at.exception, at.exception
    return at


def upload(at, name: str, data: bytes):
    at.file_uploader(key="lms-export-file").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_instructor_fills_a_canvas_export_with_the_apps_grades(app_env, monkeypatch):
    record(Store(app_env))
    at = unlocked_section(monkeypatch)
    assert "Download the filled file (CSV)" not in [item.label for item in at.get("download_button")]  # no upload yet
    upload(at, "gradebook.csv", canvas_gradebook(CLASS, points="100.00"))
    assert any("Filled in for 2 student(s); 1 without a grade left as exported." in box.value for box in at.success)
    written = next(table.value for table in at.dataframe if "grade written" in table.value.columns)
    assert dict(zip(written["student"], written["grade written"])) == {"ada@example.edu": "70.00", "103": "60.00"}
    shown = [item.value for item in at.text]
    assert "Column: Position Lab (4242)" in shown
    assert "Bob is in the grades but not in the gradebook." in shown
    assert any("scaled to 100" in line for line in shown)
    download = next(item for item in at.get("download_button") if item.label == "Download the filled file (CSV)")
    assert Store(app_env).audit_entries() == ()  # filling is not yet taking the grades out
    download.click().run()
    logged = Store(app_env).audit_entries()
    assert [(entry.action.value, entry.target, entry.detail) for entry in logged] == [
        ("export", "grades for the LMS", "gradebook-filled.csv: 2 student(s)")
    ]
    assert logged[0].actor == "password"  # unlocked with the shared password


def test_instructor_fills_a_moodle_worksheet_and_a_bad_file_gets_a_sentence(app_env, monkeypatch):
    store = Store(app_env)
    store.record_attempt("ada@example.edu", "rope", 2, 2)
    at = unlocked_section(monkeypatch)
    at.radio(key="lms-export-kind").set_value(section.MOODLE).run()
    people = [
        MoodleParticipant("Ada Lovelace", "5001", "ada@example.edu"),
        MoodleParticipant("Zoë Ångström", "5002", "zoe@example.edu"),
    ]
    upload(at, "worksheet.csv", moodle_worksheet(people, maximum="10.00"))
    written = next(table.value for table in at.dataframe if "grade written" in table.value.columns)
    assert list(written["grade written"]) == ["6.00"]  # all of rope's 6 of 10 points; Zoë blank
    assert not at.error
    upload(at, "worksheet.csv", b"Identifier,Full name\nParticipant 1,Ada\n")
    assert any("lacks the column(s) Grade, Maximum Grade" in box.value for box in at.error)
    assert "Download the filled file (CSV)" not in [item.label for item in at.get("download_button")]


def test_the_filled_text_is_the_export_with_only_the_assignment_column_changed(app_env):
    record(Store(app_env))
    grades = grades_from_class_table(Store(app_env).class_progress(), MAXIMA)
    source = canvas_gradebook(CLASS, points="10.00")
    filled = section.fill_canvas(source, grades, "Position Lab")
    rows, original = (list(csv.reader(io.StringIO(text, newline=""))) for text in (filled.text, source.decode()))
    column = rows[0].index("Position Lab (4242)")
    changed = [(row[1], row[column]) for row, before in zip(rows, original) if row != before]
    assert changed == [("101", "7.00"), ("103", "6.00")]
