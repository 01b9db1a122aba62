"""Assignments in the app (AppTest): the Exercises page's deadline line and each attempt's timing,
Progress's "due next", and the Instructor page's class table, extensions and grades back to the
LMS for one assignment. The store is seeded with attempts at known times (tests/assignment_seed.py);
every expected number is worked out by hand here from those times, points and the late policy."""

from __future__ import annotations

from datetime import date

import pytest

from poslab.store import Store
from tests.app_harness import button, go, open_app
from tests.assignment_seed import seed_class, write_course
from tests.lms_builders import CanvasStudent, MoodleParticipant, canvas_gradebook, moodle_worksheet

PASSWORD = "correct horse"
CLASS = [
    CanvasStudent("Lovelace, Ada", "101", sis_user_id="S1", sis_login_id="ada@example.edu"),
    CanvasStudent("Lei, Li", "103", sis_user_id="S3", sis_login_id="lilei"),
    CanvasStudent("Ångström, Zoë", "102", sis_user_id="S2", sis_login_id="zoe@example.edu"),
]


@pytest.fixture
def course(app_env, tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("POSLAB_ASSIGNMENTS", str(write_course(tmp_path)))
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    store = Store(app_env)
    seed_class(store)
    return store


def test_the_exercise_page_shows_the_due_date_each_attempts_timing_and_what_counts(course):
    at = go(open_app(student="ada@example.edu"), "app_pages/exercise.py")
    at.selectbox(key="exercise-pick").set_value("rope").run()
    assert not at.exception, at.exception
    (line,) = [box.value for box in at.info if "Encodings 1" in box.value]
    # due 2026-03-10 23:59 at -06:00 is 05:59 UTC the next day; long past: late, 30 % off at most
    assert line.startswith("Encodings 1 was due 2026-03-11 05:59 UTC, ")
    assert line.endswith("a submission now is late (late work loses 10% per day late, at most 30%).")
    # rope is 6 points: on time 0.5 -> 3; 36 hours late is 2 started days, 20 % off 6 -> 4.8
    counted = "For Encodings 1, your attempts count: rope 6 pts: late best 6 (2 days late, 20% off) = 4.8, "
    assert counted + "more than the on-time best 3." in [caption.value for caption in at.caption]
    table = next(frame.value for frame in at.dataframe if "on time?" in frame.value.columns)
    assert list(table["attempt"]) == [2, 1]
    assert list(table["points of 6"]) == [6.0, 3.0]
    assert list(table["on time?"]) == ["late: 2 days late, 20% off", "on time"]


def test_an_exercise_in_no_assignment_shows_no_deadline(course):
    at = go(open_app(student="ada@example.edu"), "app_pages/exercise.py")
    at.selectbox(key="exercise-pick").set_value("learned").run()
    assert not [box.value for box in at.info if "due" in box.value]


def test_progress_says_what_is_due_next(course):
    at = go(open_app(student="ada@example.edu"), "app_pages/progress.py")
    (line,) = [box.value for box in at.info if box.value.startswith("Due next")]
    assert line.startswith("Due next: Relative positions (alibi, t5), 2099-01-05 17:00 UTC: ")


def test_a_bad_assignments_file_is_one_sentence_and_the_page_goes_on(course, tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[assignment]]\nid = 'x'\n", encoding="utf-8")
    monkeypatch.setenv("POSLAB_ASSIGNMENTS", str(bad))
    at = go(open_app(student="ada@example.edu"), "app_pages/progress.py")
    assert any(str(bad) in box.value and "cannot be used" in box.value for box in at.error)
    assert at.header  # the rest of the page is drawn


def unlocked():
    at = go(open_app(), "app_pages/instructor.py")
    at.main.text_input[0].input(PASSWORD)
    button(at, "Unlock").click().run()
    assert not at.exception, at.exception
    return at


def class_table(at):
    return next(
        frame.value for frame in at.dataframe if "status" in frame.value.columns and "open" in frame.value.columns
    )


def test_the_class_table_counts_the_chosen_assignment_and_marks_late_work(course):
    at = unlocked()
    table = class_table(at).set_index("key")
    # ada: sinusoidal 4 on time + rope 4.8 late; zoe: rope 5 days late, capped at 30 % off 6 = 4.2;
    # 103: an extension to 2 days after: rope a day "late" is on time, 6 + sinusoidal half of 4 = 2
    assert table.loc["ada@example.edu", "total"] == pytest.approx(8.8)
    assert table.loc["zoe@example.edu", "total"] == pytest.approx(4.2)
    assert table.loc["103", "total"] == pytest.approx(8.0)
    assert table.loc["ada@example.edu", "rope"] == pytest.approx(4.8)
    assert table.loc["bob@example.edu", "total"] == 0.0  # public tests only: nothing counted
    statuses = {
        "ada@example.edu": "late",
        "zoe@example.edu": "late",
        "103": "in progress",
        "bob@example.edu": "in progress",
    }
    assert dict(table["status"]) == statuses
    assert set(table.columns) >= {"sinusoidal", "rope"} and "alibi" not in table.columns
    at.selectbox(key="instructor-assignment").set_value("rel").run()
    assert set(class_table(at)["total"]) == {0.0}  # nobody has done alibi or t5


def test_an_extension_granted_on_the_page_counts_at_once(course):
    at = unlocked()
    at.selectbox(key="extension-student").set_value("zoe@example.edu")
    at.date_input(key="extension-day").set_value(date(2026, 3, 16))
    next(item for item in at.button if item.label == "Grant the extension").click().run()
    assert not at.exception, at.exception
    assert any("zoe@example.edu now has until 2026-03-16 23:59" in box.value for box in at.success)
    at.run()
    assert class_table(at).set_index("key").loc["zoe@example.edu", "total"] == pytest.approx(6.0)  # on time now
    (granted,) = [item for item in course.granted_extensions("enc") if item.student == "zoe@example.edu"]
    assert granted.set_by == "password"  # the page was unlocked with the shared password: no name to record


def test_the_canvas_export_sends_the_assignments_totals(course):
    at = unlocked()
    data = canvas_gradebook(CLASS, points="100.00", assignment="Encodings 1 (5150)")
    at.file_uploader(key="lms-export-file").set_value(("gradebook.csv", data, "text/csv")).run()
    assert not at.exception, at.exception
    written = next(frame.value for frame in at.dataframe if "grade written" in frame.value.columns)
    # out of 10, scaled to Canvas's 100 points possible
    assert dict(zip(written["student"], written["grade written"])) == {
        "ada@example.edu": "88.00",
        "zoe@example.edu": "42.00",
        "103": "80.00",
    }
    assert "Column: Encodings 1 (5150)" in [item.value for item in at.text]


def test_the_moodle_export_fills_the_feedback_with_what_was_counted(course, monkeypatch):
    import app_pages.ui.instructor.lms as section

    given = {}

    def fill_moodle(data, grades, missing_zero=False, feedback=None):
        given.update(feedback or {})
        return real(data, grades, missing_zero, feedback=feedback)

    real = section.fill_moodle
    monkeypatch.setattr(section, "fill_moodle", fill_moodle)
    at = unlocked()
    at.radio(key="lms-export-kind").set_value("Moodle grading worksheet").run()
    people = [MoodleParticipant("Ada Lovelace", "5001", "ada@example.edu")]
    data = moodle_worksheet(people, maximum="10.00")
    at.file_uploader(key="lms-export-file").set_value(("worksheet.csv", data, "text/csv")).run()
    assert not at.exception, at.exception
    download = next(item for item in at.get("download_button") if "filled" in item.proto.label)
    assert download is not None
    written = next(frame.value for frame in at.dataframe if "grade written" in frame.value.columns)
    assert list(written["grade written"]) == ["8.80"]
    assert given["ada@example.edu"] == (
        "Encodings 1: 8.8/10: sinusoidal 4 pts: on-time best 4; rope 6 pts: late best 6 (2 days late, 20% off) = 4.8, "
        "more than the on-time best 3. Late."
    )


def test_a_student_with_an_extension_sees_their_own_date_and_their_late_looking_attempt_on_time(course):
    at = go(open_app(student="103"), "app_pages/exercise.py")
    at.selectbox(key="exercise-pick").set_value("rope").run()
    (line,) = [box.value for box in at.info if "Encodings 1" in box.value]
    assert line.startswith("Encodings 1 was due 2026-03-13 05:59 UTC (your extension), ")  # 2 days after
    table = next(frame.value for frame in at.dataframe if "on time?" in frame.value.columns)
    assert list(table["on time?"]) == ["on time"] and list(table["points of 6"]) == [6.0]
