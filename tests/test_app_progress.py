"""The app end to end: a name in the sidebar, lessons visited and checked, the Progress page.

Each test gets its own SQLite file (``app_env``); what the app wrote is checked with a separate
``Store`` on the same file, and what a student sees with a fresh AppTest session.
"""

import io

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from grader.results import SubmissionResult, TestOutcome
from poslab.exercises import EXERCISES
from poslab.lessons import all_lessons, get_lesson
from poslab.store import Store
from tests.app_harness import APP, TIMEOUT, button, go, open_app, progress_texts, sign_in, texts

FIRST = "position-problem"
SECOND = "three-families"


def answer(at, lesson_id: str, check_index: int, correct: bool):
    check = get_lesson(lesson_id).checks[check_index]
    choice = check.correct_index if correct else (check.correct_index + 1) % len(check.options)
    at.radio(key=f"qc-choice-{lesson_id}-{check.id}").set_value(choice).run()
    at.button(key=f"qc-reveal-{lesson_id}-{check.id}").click().run()
    assert not at.exception, at.exception
    return check


def test_without_a_name_nothing_is_stored_and_the_sidebar_asks_for_one(app_env):
    at = go(open_app(), "app_pages/position_problem.py")
    assert "Type a name" in at.sidebar.caption[0].value
    assert not at.sidebar.get("progress")
    assert Store(app_env).students() == ()


def test_a_bad_name_gets_a_sentence_and_nothing_is_stored(app_env):
    at = open_app()
    at.sidebar.text_input[0].input("   ")
    button(at.sidebar, "Start").click().run()
    assert any("type a name" in box.value for box in at.sidebar.error)
    assert "student" not in at.query_params and Store(app_env).students() == ()


def test_the_name_goes_into_the_url_and_a_reload_keeps_it(app_env):
    at = sign_in(open_app(), "Ada  Lovelace")
    assert "Studying as Ada Lovelace" in texts(at.sidebar)
    assert at.query_params["student"] == "Ada Lovelace"
    go(at, "app_pages/rope.py")
    assert at.query_params["student"] == "Ada Lovelace"  # still there after changing page
    reloaded = open_app(student=at.query_params["student"])
    assert "Studying as Ada Lovelace" in texts(reloaded.sidebar)
    button(reloaded.sidebar, "Change name").click().run()
    assert "student" not in reloaded.query_params and reloaded.sidebar.text_input


def test_visits_checks_and_done_are_stored_and_the_sidebar_percentage_moves(app_env):
    at = sign_in(open_app(), "Ann")
    assert progress_texts(at.sidebar) == ["Course progress: 0%"]
    go(at, f"app_pages/{FIRST.replace('-', '_')}.py")
    right = answer(at, FIRST, 0, correct=True)
    wrong = answer(at, FIRST, 1, correct=False)
    button(at, "Mark lesson done").click().run()
    assert any("finished this lesson" in box.value for box in at.success)
    go(at, f"app_pages/{SECOND.replace('-', '_')}.py")

    progress = Store(app_env).progress("Ann")
    assert progress.lesson(FIRST).visited and progress.lesson(SECOND).visited
    assert progress.lesson(FIRST).checks_right == (right.id,)
    assert wrong.id not in progress.lesson(FIRST).checks_right
    assert progress.lesson(FIRST).marked_done and not progress.lesson(SECOND).done
    items = len(all_lessons()) + len(EXERCISES)  # every lesson and every exercise count equally
    assert progress_texts(at.sidebar) == [f"Course progress: {100 / items:.0f}%"]


def test_the_progress_page_needs_a_name(app_env):
    at = go(open_app(), "app_pages/progress.py")
    assert any("Type your name" in box.value for box in at.info)
    assert not at.metric


def test_a_fresh_session_with_the_same_name_sees_the_lessons_on_the_progress_page(app_env):
    at = sign_in(open_app(), "Bea")
    go(at, f"app_pages/{FIRST.replace('-', '_')}.py")
    answer(at, FIRST, 0, correct=True)
    go(at, f"app_pages/{SECOND.replace('-', '_')}.py")

    later = go(open_app(student="Bea"), "app_pages/progress.py")
    bars = progress_texts(later.main)
    first, second = get_lesson(FIRST), get_lesson(SECOND)
    assert f"{first.title}: visited · 1/{len(first.checks)} quick checks right · counts in Overall once done" in bars
    assert any(bar.startswith(f"{second.title}: visited") for bar in bars)
    assert any(bar.startswith(f"{all_lessons()[2].title}: not started") for bar in bars)
    assert later.metric[0].value == "0%"  # nothing done yet: visits and one check are not a lesson
    steps = [link.proto.label for link in later.get("page_link")]
    assert any("remaining quick check" in step and first.title in step for step in steps)
    assert "Download all your work (zip)" in [button.proto.label for button in later.get("download_button")]


def test_with_a_login_configured_the_account_is_the_identity_and_the_url_is_ignored(app_env):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.user = {"is_logged_in": False}  # what st.user holds when [auth] is configured, before login
    at.query_params["student"] = "Mallory"
    at.run()
    assert [b.label for b in at.sidebar.button] == ["Log in"] and not at.sidebar.text_input
    assert not at.sidebar.get("progress")

    at.user = {"is_logged_in": True, "iss": "https://id.uni.edu", "sub": "1", "email": "ann@uni.edu"}
    at.user["email_verified"] = True
    at.user["name"] = "Ann"
    go(at, "app_pages/position_problem.py")
    assert "Signed in as Ann (ann@uni.edu)" in texts(at.sidebar) and button(at.sidebar, "Log out")
    assert Store(app_env).students() == ("ann@uni.edu",)  # the visit went to the account, not to Mallory


def test_an_answered_quick_check_shows_its_answer_and_feedback_after_a_reload(app_env):
    at = go(sign_in(open_app(), "Quinn"), get_lesson(FIRST).page_path)
    check = answer(at, FIRST, 0, correct=False)
    wrong = (check.correct_index + 1) % len(check.options)
    later = go(open_app(student="Quinn"), get_lesson(FIRST).page_path)  # a reload: a new session
    assert later.radio(key=f"qc-choice-{FIRST}-{check.id}").value == wrong
    assert any(box.value == "Not quite. " + check.options[wrong].feedback for box in later.error)
    stranger = go(open_app(student="Rita"), get_lesson(FIRST).page_path)
    assert stranger.radio(key=f"qc-choice-{FIRST}-{check.id}").value is None and not stranger.error


def test_an_upload_that_did_not_import_is_no_dip_in_the_score_line(app_env):
    """Two graded attempts around one whose file did not import: its 0 is a separate mark, not a score."""

    def result(status: str, score: float) -> dict:
        test = TestOutcome("rope: norm", "rope", score, 4.0, status, "why", "hidden", "norm")
        return SubmissionResult(
            "s",
            "graded" if status != "did_not_import" else "import_failed",
            (test,),
            "fallback",
            False,
            "h",
            "x",
            "0",
            0.1,
        ).to_dict()

    store = Store(app_env)
    for status, score in (("passed", 3.0), ("did_not_import", 0.0), ("passed", 4.0)):
        store.record_attempt("Ann", "rope", score, 4.0, details=result(status, score), code="x")
    at = go(sign_in(open_app(), "Ann"), "app_pages/progress.py")
    assert not at.exception, at.exception
    [chart] = at.get("vega_lite_chart")
    [data] = [
        pa.ipc.open_stream(io.BytesIO(dataset.data.data)).read_all().to_pandas() for dataset in chart.proto.datasets
    ]
    assert list(data["ran"]) == [True, False, True]
    assert list(data["judged_by"]) == ["hidden suite", "did not import: no test ran", "hidden suite"]
    assert "1 that did not import (no score)" in chart.proto.spec


def test_a_lesson_run_reads_the_progress_once_and_a_lesson_done_shows_in_the_same_run(app_env, monkeypatch):
    reads = []
    original = Store.progress
    monkeypatch.setattr(Store, "progress", lambda store, student: reads.append(student) or original(store, student))
    at = go(sign_in(open_app(), "Ann"), f"app_pages/{SECOND.replace('-', '_')}.py")
    reads.clear()
    at.run()
    assert reads == ["Ann"]  # the sidebar's, at the start of the run; the footer uses the same
    checks = get_lesson(SECOND).checks
    for index in range(len(checks)):
        answer(at, SECOND, index, correct=True)
    # The last reveal was a click's callback, before the run: the sidebar's read already holds it.
    assert any("finished this lesson" in box.value for box in at.success)
    assert progress_texts(at.sidebar) == [f"Course progress: {Store(app_env).progress('Ann').percent:.0f}%"]


def test_the_exercise_picker_marks_each_exercise_with_the_best_hidden_suite_grade(app_env):
    store = Store(app_env)
    store.record_attempt("Ann", "rope", 11, 20)
    store.record_attempt("Ann", "alibi", 4, 4)
    store.record_attempt("Ann", "alibi", 1, 4)  # a worse one later: the best counts
    store.record_attempt("Ann", "t5", 5, 5, public_tests_only=True)  # public tests: no grade
    at = go(open_app(student="Ann"), "app_pages/exercise.py")
    assert not at.exception, at.exception
    titles = {item.id: item.title for item in EXERCISES}
    labels = dict(zip(at.selectbox(key="exercise-pick").options, (item.id for item in EXERCISES)))
    assert labels[f"{titles['rope']} · 11/20"] == "rope"
    assert labels[f"{titles['alibi']} ✓ 4/4"] == "alibi"
    assert labels[titles["t5"]] == "t5"
