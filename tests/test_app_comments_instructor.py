"""Comments under lessons (plain text, newest first, deletable by the instructor) and the
Instructor page's lock (no password, wrong password, right password, secret)."""

import json
from unittest import mock

import pytest

from app_pages.runtime import sandbox_notice
from grader.lms.grades import suite_maxima
from poslab.store import Store, TestRow
from tests.app_harness import button, go, open_app, sign_in, texts
from tests.console_seed import attempt

LESSON_PAGE = "app_pages/position_problem.py"
HOSTILE = "**bold** <script>alert(1)</script> [link](http://x)"
PASSWORD = "correct horse"


def post(at, text: str):
    at.text_area(key="comment-text-position-problem").set_value(text)
    button(at, "Post").click().run()
    assert not at.exception, at.exception
    return at


def unlock(at, password: str):
    at.main.text_input[0].input(password)
    button(at, "Unlock").click().run()
    assert not at.exception, at.exception
    return at


def test_comments_are_plain_text_newest_first_and_the_box_empties_after_posting(app_env):
    at = go(sign_in(open_app(), "Ann"), LESSON_PAGE)
    assert at.header[-1].value == "Comments (0)"
    post(at, "first!")
    post(at, HOSTILE)
    assert at.header[-1].value == "Comments (2)"
    shown = texts(at.main)
    assert shown.index(HOSTILE) < shown.index("first!")  # newest first
    assert any(line.startswith("Ann · ") and line.endswith(" UTC") for line in shown)
    assert not any("<script>" in item.value or "**bold**" in item.value for item in at.markdown)
    assert at.text_area(key="comment-text-position-problem").value == ""
    assert [comment.text for comment in Store(app_env).comments("position-problem")] == [HOSTILE, "first!"]


def test_an_empty_comment_is_refused_with_a_sentence(app_env):
    at = post(go(sign_in(open_app(), "Ann"), LESSON_PAGE), "   ")
    assert any("comment must be 1 to" in box.value for box in at.warning)
    assert Store(app_env).comments("position-problem") == ()


def test_students_cannot_delete_but_an_unlocked_instructor_can(app_env, monkeypatch):
    Store(app_env).add_comment("Bob", "position-problem", "spam spam")
    at = go(sign_in(open_app(), "Ann"), LESSON_PAGE)
    assert "spam spam" in texts(at.main) and not [b for b in at.button if b.label == "Delete"]
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    unlock(go(at, "app_pages/instructor.py"), PASSWORD)
    go(at, LESSON_PAGE)
    button(at, "Delete").click().run()
    assert "spam spam" not in texts(at.main) and Store(app_env).comments("position-problem") == ()


def test_without_a_password_the_instructor_page_only_says_how_to_set_one(app_env):
    at = go(open_app(), "app_pages/instructor.py")
    assert "POSLAB_INSTRUCTOR_PASSWORD" in at.info[0].value and "instructor_password" in at.info[0].value
    assert not at.main.text_input and not at.dataframe


def test_a_wrong_password_is_refused_and_shows_nothing(app_env, monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    at = unlock(go(open_app(), "app_pages/instructor.py"), "correct horse!")
    assert any("not right" in box.value for box in at.error)
    assert not at.dataframe and not at.get("download_button")


@pytest.mark.parametrize("via", ["environment", "secret"])
def test_the_right_password_shows_the_class_table_and_pass_rates(app_env, monkeypatch, via):
    store = Store(app_env)
    store.record_visit("Ann", "rope")
    attempt(store, "Ann", "rope", {"norm": True, "relative": False}, "ann")
    attempt(store, "Bob", "rope", {"norm": True, "relative": True}, "bob")
    at = open_app()
    if via == "environment":
        monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    else:
        at.secrets["instructor_password"] = PASSWORD
    unlock(go(at, "app_pages/instructor.py"), PASSWORD)
    table = at.dataframe[0].value
    assert list(table["key"]) == ["Ann", "Bob"]
    rope_points = suite_maxima()["rope"]  # grades in points, as in the gradebook: half of rope's, all of it
    assert list(table["rope"]) == pytest.approx([rope_points / 2, rope_points])
    assert list(table["total"]) == pytest.approx([rope_points / 2, rope_points])
    assert set(table["max"]) == {sum(suite_maxima().values())}
    rates = next(frame.value for frame in at.dataframe if "best_rate" in frame.value.columns)
    assert rates[["family", "students", "best_passed"]].values.tolist() == [["relative", 2, 1], ["norm", 2, 2]]
    labels = [item.proto.label for item in at.get("download_button")]
    assert labels[:2] == ["Download the class table (CSV)", "Download the pass rates by student (CSV)"]
    button(at, "Lock this page").click().run()
    assert not at.dataframe and at.main.text_input[0].label == "Instructor password"


def test_the_instructor_loads_a_gradebook_folder_and_a_wrong_folder_gets_a_sentence(app_env, monkeypatch, tmp_path):
    folder = tmp_path / "grades"
    (folder / "ann").mkdir(parents=True)
    (folder / "gradebook.csv").write_text("id,status,rope,total,max\nann,graded,1,1,4\n")
    (folder / "ann" / "results.json").write_text(
        json.dumps(
            {
                "tests": [
                    {"name": "rope: relative", "status": "failed", "tags": ["rope"]},
                    {"name": "rope: norm", "status": "passed", "tags": ["rope"]},
                ]
            }
        )
    )
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    at = unlock(go(open_app(), "app_pages/instructor.py"), PASSWORD)
    at.text_input(key="gradebook-folder").input(str(tmp_path / "missing")).run()
    assert any("There is no folder" in box.value for box in at.error)
    at.text_input(key="gradebook-folder").input(str(folder)).run()
    book = next(table.value for table in at.dataframe if "id" in table.value.columns)  # not a chart's numbers
    assert not at.error and list(book["id"]) == ["ann"]
    assert book["percent"].iloc[0] == pytest.approx(25.0)
    charts = [chart.proto.spec for chart in at.get("vega_lite_chart")]
    assert sum("trip students up" in spec for spec in charts) == 1  # the store has none; the gradebook has one


@pytest.mark.parametrize(
    "isolation, shown",
    [
        ("fallback", "WITHOUT bubblewrap on this machine (POSLAB_GRADER_ISOLATION is fallback)"),
        ("bwrap", "graded in bubblewrap sandboxes on this machine"),
    ],
)
def test_the_instructor_page_says_which_sandbox_grades_and_the_log_says_it_once(app_env, monkeypatch, isolation, shown):
    monkeypatch.setenv("POSLAB_GRADER_ISOLATION", isolation)
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", PASSWORD)
    sandbox_notice._report.clear()  # checked once per process: this test's settings
    with mock.patch.object(sandbox_notice, "logger") as log:
        at = unlock(go(open_app(), "app_pages/instructor.py"), PASSWORD)
        at.run()
        said = [box.value for box in (at.warning if isolation == "fallback" else at.caption)]
        assert any(shown in text for text in said), said
        logged = log.warning if isolation == "fallback" else log.info
        assert logged.call_count == 1 and shown in logged.call_args.args[1]  # once, over several runs
    sandbox_notice._report.clear()
