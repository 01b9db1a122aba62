"""poslab.viz.progress: progress rows, next steps and the progress charts (no Streamlit, no database)."""

from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from poslab.exercises import Exercise
from poslab.lessons import Lesson
from poslab.store import ExerciseProgress, LessonProgress, StudentProgress
from poslab.viz.class_charts import pass_rate_chart, score_distribution_chart
from poslab.viz.common import convention_problems
from poslab.viz.progress import (
    EXERCISE_PAGE,
    attempts_chart,
    exercise_rows,
    lesson_rows,
    lesson_steps,
    next_steps,
)

LESSONS = (
    Lesson("intro", "Intro", ":material/star:", "Lessons", 0, {}, ()),
    Lesson("rope-x", "RoPE X", ":material/star:", "Lessons", 1, {}, ()),
    Lesson("last", "Last one", ":material/star:", "Practice", 2, {}, ()),
)
EXERCISES = (
    Exercise("ex-a", "Exercise A", ("a",), "a.py"),
    Exercise("ex-b", "Exercise B", ("b",), "b.py"),
)


def lesson(lesson_id, visited=False, right=(), total=0, marked=False):
    done = marked or (total > 0 and len(right) == total)
    return LessonProgress(lesson_id, visited, tuple(right), total, marked, done)


def exercise(exercise_id, attempts=0, best=None, maximum=None, public=None, public_max=None, hints=0):
    graded = attempts if best is not None else 0
    return ExerciseProgress(exercise_id, attempts, graded, best, maximum, public, public_max, hints)


def progress(lessons, exercises):
    return StudentProgress("ann", tuple(lessons), tuple(exercises), 0.0, None)


SOME = progress(
    [lesson("intro", visited=True, marked=True), lesson("rope-x", visited=True, right=["q1"], total=2), lesson("last")],
    [exercise("ex-a", attempts=2, best=3, maximum=4, hints=1), exercise("ex-b", attempts=1, public=2, public_max=2)],
)


def test_lesson_steps_count_visit_checks_and_done_equally():
    assert lesson_steps(False, 0, 0, False) == 0
    assert lesson_steps(True, 0, 0, False) == pytest.approx(1 / 2)
    assert lesson_steps(True, 1, 2, False) == pytest.approx(2 / 4)
    assert lesson_steps(False, 0, 3, True) == 1.0


def test_lesson_rows_follow_course_order_with_fraction_and_status():
    rows = lesson_rows(SOME, LESSONS)
    assert list(rows["lesson"]) == ["intro", "rope-x", "last"]
    assert list(rows["fraction"]) == pytest.approx([1.0, 0.5, 0.0])
    assert rows.loc[1, "status"] == "visited · 1/2 quick checks right · counts in Overall once done"
    assert rows.loc[2, "status"] == "not started · counts in Overall once done"
    assert rows.loc[0, "status"] == "done · counted in Overall"
    assert rows.loc[0, "page"] == "app_pages/intro.py"


def test_exercise_rows_use_the_hidden_grade_and_show_public_scores_apart():
    rows = exercise_rows(SOME, EXERCISES)
    assert list(rows["fraction"]) == pytest.approx([0.75, 0.0])  # public 2/2 is not a grade
    assert rows.loc[0, "status"] == "2 attempts · grade 3/4"
    assert rows.loc[1, "status"] == "1 attempt · grade none yet · public tests 2/2"
    assert rows.loc[0, "hints_used"] == 1


def test_next_steps_go_through_unfinished_lessons_first_then_exercises():
    steps = next_steps(SOME, LESSONS, EXERCISES, limit=10)
    assert [step.page for step in steps] == ["app_pages/rope_x.py", "app_pages/last.py", EXERCISE_PAGE, EXERCISE_PAGE]
    assert "1 remaining quick check " in steps[0].text
    assert steps[1].text == "Read “Last one”."
    assert "best 3/4" in steps[2].text and "next hint" in steps[2].text
    assert "hidden tests" in steps[3].text
    assert len(next_steps(SOME, LESSONS, EXERCISES)) == 3


def test_a_finished_course_has_no_next_steps_and_a_new_student_starts_at_the_start():
    finished = progress(
        [lesson(item.id, visited=True, marked=True) for item in LESSONS],
        [exercise(item.id, attempts=1, best=5, maximum=5) for item in EXERCISES],
    )
    assert next_steps(finished, LESSONS, EXERCISES) == []
    new = progress([lesson(item.id) for item in LESSONS], [exercise(item.id) for item in EXERCISES])
    assert next_steps(new, LESSONS, EXERCISES, limit=1)[0].text == "Read “Intro”."


def test_visited_lesson_with_all_checks_right_but_no_checks_asks_to_mark_it_done():
    only = progress([lesson("intro", visited=True)], [])
    assert next_steps(only, LESSONS[:1], ())[0].text.startswith("Mark “Intro” done")


def attempts_frame():
    return pd.DataFrame(
        {
            "id": [1, 2, 3],
            "student": ["ann"] * 3,
            "exercise": ["ex-a", "ex-a", "ex-b"],
            "time": pd.to_datetime(["2026-01-01 10:00", "2026-01-01 10:05", "2026-01-01 11:00"], utc=True),
            "score": [1.0, 4.0, 2.0],
            "max_score": [4.0, 4.0, 2.0],
            "fraction": [0.25, 1.0, 1.0],
            "public_tests_only": [False, False, True],
        }
    )


def test_attempts_chart_plots_percent_with_titles_and_tooltips():
    chart = attempts_chart(attempts_frame(), {"ex-a": "Exercise A"})
    assert convention_problems(chart) == []
    data = chart.data  # alt.layer lifts the layers' shared frame to the top
    assert list(data["percent"]) == [25.0, 100.0, 100.0]
    assert list(data["exercise_title"]) == ["Exercise A", "Exercise A", "ex-b"]  # unknown ids stay ids
    assert list(data["judged_by"]) == ["hidden suite", "hidden suite", "public tests only"]
    spec = chart.to_dict()
    assert spec["layer"][1]["encoding"]["y"]["title"] == "score (% of maximum)"


def test_attempts_time_axis_reads_as_utc_date_and_minute():
    chart = attempts_chart(attempts_frame(), {})
    x = chart.to_dict()["layer"][1]["encoding"]["x"]
    # Without a label format, attempts seconds apart were labelled ".500" (milliseconds) in the browser.
    assert "utcFormat(" in x["axis"]["labelExpr"] and "%S" in x["axis"]["labelExpr"]
    assert x["scale"]["type"] == "utc" and x["title"] == "submitted (UTC)"
    assert list(chart.data["submitted"]) == [
        "2026-01-01 10:00:00 UTC",
        "2026-01-01 10:05:00 UTC",
        "2026-01-01 11:00:00 UTC",
    ]


def test_attempts_are_shown_in_the_students_time_zone():
    chart = attempts_chart(attempts_frame(), {}, zone=ZoneInfo("Asia/Kolkata"))  # UTC+05:30, no summer time
    assert chart.to_dict()["layer"][1]["encoding"]["x"]["title"] == "submitted (Asia/Kolkata)"
    assert list(chart.data["submitted"])[0] == "2026-01-01 15:30:00 IST"
    assert list(chart.data["wall_clock"].dt.strftime("%H:%M")) == ["15:30", "15:35", "16:30"]


def test_an_attempt_that_did_not_import_is_a_cross_at_0_off_the_score_line():
    attempts = attempts_frame().assign(score=[1.0, 0.0, 2.0], fraction=[0.25, 0.0, 1.0], ran=[True, False, True])
    chart = attempts_chart(attempts, {"ex-a": "Exercise A"})
    assert list(chart.data["judged_by"]) == ["hidden suite", "did not import: no test ran", "public tests only"]
    line, points = chart.to_dict()["layer"]
    assert line["transform"] == [{"filter": "datum.ran"}]  # the line joins graded attempts only
    assert "transform" not in points  # every attempt is a point
    assert points["encoding"]["shape"]["scale"]["range"][2] == "cross"
    assert "Exercise A: 2 attempts, best 25%, last graded 25%, 1 that did not import (no score)" in chart.description


def test_score_distribution_bins_percentages_in_tens():
    table = pd.DataFrame({"student": ["a", "b", "c"], "percent": [5.0, 55.0, 59.0]})
    chart = score_distribution_chart(table)
    assert convention_problems(chart) == []
    spec = chart.to_dict()
    assert spec["encoding"]["x"]["bin"] == {"extent": [0, 100], "step": 10}
    assert spec["encoding"]["x"]["title"] == "overall progress (%)"


def test_pass_rate_chart_puts_the_most_failed_test_first_and_caps_rows():
    rates = pd.DataFrame(
        {
            "exercise": ["rope", "rope", "alibi"],
            "test": ["norm", "relative", "slopes"],
            "pass_rate": [0.9, 0.2, 0.5],
            "n": [10, 10, 4],
        }
    )
    chart = pass_rate_chart(rates)
    assert convention_problems(chart) == []
    assert list(chart.data["label"]) == ["rope: relative", "alibi: slopes", "rope: norm"]
    assert list(chart.data["percent"]) == pytest.approx([20.0, 50.0, 90.0])
    assert list(chart.data["rate_text"]) == ["20% of 10", "50% of 4", "90% of 10"]
    capped = pass_rate_chart(rates, limit=2)
    assert len(capped.data) == 2 and "2 hardest of 3" in capped.to_dict()["title"]


def test_pass_rate_chart_names_each_test_once_and_gives_every_row_its_own_height():
    rates = pd.DataFrame(
        {
            "exercise": ["rope"] * 10,
            "test": [f"rope: value check {i}" for i in range(10)],
            "pass_rate": [i / 10 for i in range(10)],
            "n": [5] * 10,
        }
    )
    chart = pass_rate_chart(rates)
    labels = list(chart.data["label"])
    assert labels[0] == "rope: value check 0" and len(set(labels)) == 10  # not "rope · rope: value..."
    spec = chart.to_dict()
    assert spec["height"] == {"step": 26}
    assert spec["layer"][0]["encoding"]["y"]["axis"]["labelLimit"] >= 300
