"""The Exercises page end to end, through the real grader (a worker process per grading).

The acceptance flow: a new student visits two lessons, answers a check, submits a correct and a
wrong solution; a fresh session with the same name (``?student=``) sees all of it on Progress.
Gradings take seconds each, so this file grades as few times as it can.
"""

import pytest

from grader import api
from grader.mutants import get_mutant, reference_source
from grader.results import SubmissionResult, TestOutcome
from app_pages.ui import grading
from app_pages.ui.gate import GradingGate
from poslab.exercises import EXERCISES, HINT_TIERS, get_exercise
from poslab.exercises import hints as exercise_hints
from poslab.exercises import spec
from poslab.lessons import all_lessons, get_lesson
from poslab.store import Store
from tests.app_harness import go, open_app, progress_texts, sign_in

EXERCISE = get_exercise("rope")
WRONG = get_mutant("rope_clockwise")


def pick(at, exercise_id: str):
    at.selectbox(key="exercise-pick").set_value(get_exercise(exercise_id)).run()
    assert not at.exception, at.exception
    return at


def paste_and_grade(at, source: str):
    at.text_area(key=f"paste-{EXERCISE.id}").set_value(source)
    at.button(key="grade-paste").click().run()
    assert not at.exception, at.exception
    return at


def upload(at, name: str, data: bytes):
    at.file_uploader(key=f"upload-{EXERCISE.id}").set_value((name, data, "text/x-python")).run()
    at.button(key="grade-upload").click().run()
    assert not at.exception, at.exception
    return at


def shown_table(at):
    return at.dataframe[-1].value


def test_the_page_asks_for_a_name_before_submitting_and_shows_each_exercises_spec(app_env):
    at = go(open_app(), "app_pages/exercise.py")
    assert spec("attention") in [code.value for code in at.code]  # the first exercise by default
    pick(at, EXERCISE.id)
    assert spec(EXERCISE.id) in [code.value for code in at.code] and spec("attention") not in [c.value for c in at.code]
    assert any("to submit" in box.value for box in at.info)
    assert not at.get("file_uploader") and not [b for b in at.button if b.key == "grade-paste"]


def test_wrong_uploads_get_a_sentence_and_nothing_is_graded_or_saved(app_env):
    at = pick(go(sign_in(open_app(), "Ann"), "app_pages/exercise.py"), EXERCISE.id)
    upload(at, "rope.txt", b"x = 1\n")
    assert any("not a Python file" in box.value for box in at.error)
    upload(at, "rope.py", b"#" * (200 * 1024 + 1))
    assert any("at most 200 KB" in box.value for box in at.error)
    upload(at, "rope.py", "x = 'é'\n".encode("latin-1"))
    assert any("not UTF-8" in box.value for box in at.error)
    paste_and_grade(at, "   ")
    assert any("empty" in box.value for box in at.error)
    assert Store(app_env).attempts("Ann").empty


def test_a_student_visits_checks_submits_right_and_wrong_and_a_new_session_sees_it(app_env):
    at = sign_in(open_app(), "Cleo")
    go(at, "app_pages/position_problem.py")
    check = get_lesson("position-problem").checks[0]
    at.radio(key=f"qc-choice-position-problem-{check.id}").set_value(check.correct_index).run()
    at.button(key=f"qc-reveal-position-problem-{check.id}").click().run()
    go(at, "app_pages/rope.py")
    pick(go(at, "app_pages/exercise.py"), EXERCISE.id)

    upload(at, "rope.py", reference_source().encode("utf-8"))  # correct: full marks
    assert f"**{EXERCISE.title}:** 20 / 20 points" in [m.value for m in at.markdown]
    table = shown_table(at)
    assert len(table) > 0 and set(table["exercise"]) == {"rope"} and set(table["status"]) == {"passed"}
    hidden_note = at.caption[-1].value
    assert "hidden" in hidden_note and hidden_note.split()[0].isdigit()

    paste_and_grade(at, WRONG.source)  # wrong: the rotation turns the other way
    table = shown_table(at)
    assert "failed" in set(table["status"])
    score_lines = [m.value for m in at.markdown if m.value.startswith(f"**{EXERCISE.title}:**")]
    assert len(score_lines) == 1 and score_lines[0].endswith(" / 20 points") and " 20 / 20" not in score_lines[0]

    stored = Store(app_env).attempt_details("Cleo", "rope")
    assert [a.code for a in stored] == [reference_source(), WRONG.source]
    assert stored[0].score == stored[0].max_score == 20 and stored[1].score < 20
    assert not any(a.public_tests_only for a in stored)

    later = go(open_app(student="Cleo"), "app_pages/progress.py")
    bars = progress_texts(later.main)
    assert f"{EXERCISE.title}: 2 attempts · grade 20/20 · hints used: 0" in bars
    assert any(bar.startswith(f"{get_lesson('position-problem').title}: visited · 1/") for bar in bars)
    assert any(bar.startswith(f"{get_lesson('rope').title}: visited") for bar in bars)
    charts = [chart.proto.spec for chart in later.get("vega_lite_chart")]
    assert len(charts) == 1 and "Your attempts over time" in charts[0]
    items = len(all_lessons()) + len(EXERCISES)  # no lesson done yet; rope's grade is 1 whole item
    assert later.metric[0].value == f"{100 / items:.0f}%"


def hint_headings(at) -> list[str]:
    return [m.value for m in at.markdown if "**Hint " in m.value]


def test_hints_are_revealed_one_tier_at_a_time_and_remembered(app_env):
    hints = exercise_hints(EXERCISE.id)
    at = pick(go(sign_in(open_app(), "Dan"), "app_pages/exercise.py"), EXERCISE.id)
    assert hint_headings(at) == [] and hints[0] not in [code.value for code in at.code]
    at.button(key=f"hint-{EXERCISE.id}").click().run()
    assert hint_headings(at) == [f":material/lightbulb: **Hint 1 of {len(hints)}: {HINT_TIERS[0]}**"]
    assert hints[0] in [code.value for code in at.code] and hints[1] not in [code.value for code in at.code]
    assert at.button(key=f"hint-{EXERCISE.id}").label == f"Show hint 2 of {len(hints)}"
    assert Store(app_env).progress("Dan").exercise("rope").hints_used == 1
    again = pick(go(open_app(student="Dan"), "app_pages/exercise.py"), EXERCISE.id)
    assert len(hint_headings(again)) == 1  # a new session still shows the hint already used


# --- without the sandbox: a stand-in grader, to test what the page does around it ------------------

PUBLIC_RESULT = SubmissionResult(
    submission_id="s", status="graded", isolation="fallback", public_tests_only=True, submission_hash="h",
    suite_hash="public:x", grader_version="0", execution_time=0.1,
    tests=(TestOutcome("exercises/test_rope.py::test_shape", "rope", 1.0, 1.0, "passed", "Passed.", "visible"),
           TestOutcome("exercises/test_rope.py::test_norm", "rope", 0.0, 1.0, "failed", "norm changed", "visible"),
           TestOutcome("exercises/test_alibi.py::test_slopes", "alibi", 1.0, 1.0, "passed", "Passed.", "visible")))


@pytest.fixture
def bundle(monkeypatch, tmp_path):
    """The app as in a student bundle, with a grader that answers at once with PUBLIC_RESULT."""
    graded = []
    monkeypatch.setattr(api, "running_in_bundle", lambda: True)
    monkeypatch.setattr(api, "grade_submission", lambda submission, mode: graded.append((submission, mode)) or PUBLIC_RESULT)
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "rope.py").write_text("def apply_rope(x):\n    return x\n")
    (tmp_path / "exercises" / "test_rope.py").write_text("def test_shape(): pass\n")
    monkeypatch.setattr(grading, "PROJECT_ROOT", tmp_path)
    return graded


def test_in_a_bundle_results_are_labelled_public_tests_only_and_are_not_a_grade(app_env, bundle):
    at = pick(go(sign_in(open_app(), "Eve"), "app_pages/exercise.py"), EXERCISE.id)
    assert any("student bundle" in box.value for box in at.info)
    paste_and_grade(at, "def apply_rope(x):\n    return x\n")
    assert bundle[0][1] == "public" and bundle[0][0] == {"rope.py": "def apply_rope(x):\n    return x\n"}
    assert any(box.value.startswith("Public tests only") and "instructor grades" in box.value for box in at.info)
    assert list(shown_table(at)["test"]) == ["exercises/test_rope.py::test_shape", "exercises/test_rope.py::test_norm"]
    progress = Store(app_env).progress("Eve").exercise("rope")
    assert (progress.best_score, progress.best_public_score, progress.public_max_score) == (None, 1.0, 2.0)
    later = go(open_app(student="Eve"), "app_pages/progress.py")
    assert f"{EXERCISE.title}: 1 attempt · grade none yet · public tests 1/2 · hints used: 0" in progress_texts(later.main)


def test_the_folder_tab_offers_the_zip_and_grades_every_exercise_in_the_folder(app_env, bundle):
    at = go(sign_in(open_app(), "Fay"), "app_pages/exercise.py")
    assert [item.proto.label for item in at.get("download_button")] == ["Download the stubs and public tests (zip)"]
    at.button(key="grade-folder").click().run()
    assert not at.exception and bundle[0][0] == grading.PROJECT_ROOT / "exercises"
    stored = {attempt.exercise: attempt for attempt in Store(app_env).attempt_details("Fay")}
    assert set(stored) == {"rope", "alibi"}  # the exercises the result has tests for
    assert stored["rope"].code == "def apply_rope(x):\n    return x\n" and stored["alibi"].code is None


def test_a_busy_grader_makes_the_student_wait_with_a_message_then_says_to_retry(app_env, bundle, monkeypatch):
    gate = GradingGate(max_at_once=1, wait_seconds=0.3)
    monkeypatch.setattr(grading, "grading_gate", lambda: gate)
    at = pick(go(sign_in(open_app(), "Gus"), "app_pages/exercise.py"), EXERCISE.id)
    with gate.slot("someone else"):
        paste_and_grade(at, "x = 1\n")
    assert any("busy" in item.value for item in at.markdown)  # the waiting message, written while waiting
    assert any("submit again in a minute" in box.value for box in at.error)
    with gate.slot("Gus"):  # the same student in another tab
        paste_and_grade(at, "x = 1\n")
    assert any("already have a grading running" in box.value for box in at.error)
    assert bundle == [] and Store(app_env).attempts("Gus").empty
