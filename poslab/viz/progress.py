"""Progress as tables and charts: a student's lessons and exercises, and what to do next.

Built from the store's plain results (``StudentProgress``, DataFrames) and the course lists, so
every function here is tested without Streamlit or a database.

* ``lesson_rows`` / ``exercise_rows``  -> one row per lesson / exercise, with a 0..1 ``fraction``
* ``next_steps``                        -> the few things the student should do next, in order
* ``attempts_chart``                    -> score of every attempt over time, one line per exercise
(The class's charts are in ``class_charts``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo

import altair as alt
import pandas as pd

from poslab.exercises import Exercise
from poslab.lessons import Lesson
from poslab.store import StudentProgress
from poslab.viz.common import axis_title

EXERCISE_PAGE = "app_pages/exercise.py"


def lesson_steps(visited: bool, checks_right: int, checks_total: int, done: bool) -> float:
    """A lesson's bar: visiting, each quick check answered right and finishing are equal steps."""
    if done:
        return 1.0
    return (int(visited) + checks_right) / (checks_total + 2)


def lesson_rows(progress: StudentProgress, lessons: Sequence[Lesson]) -> pd.DataFrame:
    """Columns: lesson, title, page, visited, checks_right, checks_total, done, fraction, status."""
    rows = []
    for lesson in lessons:
        item = progress.lesson(lesson.id)
        right = len(item.checks_right)
        status = "done" if item.done else ("visited" if item.visited else "not started")
        if item.checks_total:
            status += f" · {right}/{item.checks_total} quick checks right"
        # The bar counts steps, Overall counts finished lessons: say which, so the two never seem to disagree.
        status += " · counted in Overall" if item.done else " · counts in Overall once done"
        rows.append(
            {
                "lesson": lesson.id,
                "title": lesson.title,
                "page": lesson.page_path,
                "visited": item.visited,
                "checks_right": right,
                "checks_total": item.checks_total,
                "done": item.done,
                "fraction": lesson_steps(item.visited, right, item.checks_total, item.done),
                "status": status,
            }
        )
    return pd.DataFrame(rows)


def _score_text(score: float | None, maximum: float | None) -> str:
    return f"{score:g}/{maximum:g}" if score is not None and maximum else "none yet"


def exercise_rows(progress: StudentProgress, exercises: Sequence[Exercise]) -> pd.DataFrame:
    """Columns: exercise, title, attempts, best, public_best, hints_used, fraction, status.

    ``fraction`` is the grade (best hidden-suite score); public-tests-only scores are shown as
    feedback but never fill the bar, since the hidden suite has not judged them.
    """
    rows = []
    for exercise in exercises:
        item = progress.exercise(exercise.id)
        status = f"{item.attempts} attempt{'s' if item.attempts != 1 else ''} · grade {_score_text(item.best_score, item.max_score)}"
        if item.best_public_score is not None:
            status += f" · public tests {_score_text(item.best_public_score, item.public_max_score)}"
        rows.append(
            {
                "exercise": exercise.id,
                "title": exercise.title,
                "attempts": item.attempts,
                "best": item.best_score,
                "max": item.max_score,
                "public_best": item.best_public_score,
                "hints_used": item.hints_used,
                "fraction": item.best_fraction,
                "status": status,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class NextStep:
    text: str
    page: str  # the page script to link to


def _lesson_step(lesson: Lesson, progress: StudentProgress) -> NextStep | None:
    item = progress.lesson(lesson.id)
    if item.done:
        return None
    if not item.visited:
        return NextStep(f"Read “{lesson.title}”.", lesson.page_path)
    missing = item.checks_total - len(item.checks_right)
    if missing:
        return NextStep(
            f"Answer the {missing} remaining quick check{'s' if missing > 1 else ''} in “{lesson.title}”.",
            lesson.page_path,
        )
    return NextStep(f"Mark “{lesson.title}” done when you are happy with it.", lesson.page_path)


def _exercise_step(exercise: Exercise, progress: StudentProgress) -> NextStep | None:
    item = progress.exercise(exercise.id)
    if item.best_fraction >= 1.0:
        return None
    if item.attempts == 0:
        return NextStep(f"Try the exercise “{exercise.title}”.", EXERCISE_PAGE)
    if item.best_score is None:  # public tests only so far
        return NextStep(
            f"“{exercise.title}”: your public-tests score is feedback; your instructor's "
            "grading runs the hidden tests.",
            EXERCISE_PAGE,
        )
    return NextStep(
        f"Improve “{exercise.title}” (best {item.best_score:g}/{item.max_score:g}); "
        f"{'a hint may help' if item.hints_used == 0 else 'the next hint may help'}.",
        EXERCISE_PAGE,
    )


def next_steps(
    progress: StudentProgress, lessons: Sequence[Lesson], exercises: Sequence[Exercise], limit: int = 3
) -> list[NextStep]:
    """The first unfinished lessons in course order, then the exercises not yet at full marks."""
    candidates = [_lesson_step(lesson, progress) for lesson in lessons]
    candidates += [_exercise_step(exercise, progress) for exercise in exercises]
    return [step for step in candidates if step is not None][:limit]


# Labels written by an expression: without it, attempts seconds apart were labelled ".500"
# (milliseconds). The times are the student's wall-clock, drawn on a UTC scale so that the browser
# adds no zone of its own.
TIME_LABEL = "utcFormat(datum.value, '%b %d %H:%M:%S')"
NOT_RUN = "did not import: no test ran"
JUDGED_BY = {False: "hidden suite", True: "public tests only"}


def attempts_chart(attempts: pd.DataFrame, titles: dict[str, str], zone: tzinfo = UTC) -> alt.LayerChart:
    """Every attempt's score over time (store ``attempts`` columns), a line and points per exercise.

    ``ran`` (a column, optional): False for an attempt none of whose tests ran (its file did not
    import). Its 0 is no score: it is drawn as a cross at 0, off the score line, which joins the
    attempts that were graded. Times are shown in ``zone`` (the student's), and the axis says which.
    """
    ran = attempts["ran"].astype(bool) if "ran" in attempts else pd.Series(True, index=attempts.index)
    when = pd.to_datetime(attempts["time"], utc=True).dt.tz_convert(zone)
    frame = attempts.assign(
        percent=attempts["fraction"] * 100.0,
        exercise_title=attempts["exercise"].map(lambda exercise: titles.get(exercise, exercise)),
        ran=ran,
        judged_by=[
            JUDGED_BY[bool(public)] if did_run else NOT_RUN
            for public, did_run in zip(attempts["public_tests_only"], ran)
        ],
        wall_clock=when.dt.tz_localize(None),
        submitted=when.dt.strftime("%Y-%m-%d %H:%M:%S %Z"),
    )
    zone_label = getattr(zone, "key", None) or zone.tzname(None)
    x = alt.X(
        "wall_clock:T",
        title=axis_title("submitted", zone_label),
        scale=alt.Scale(type="utc"),
        axis=alt.Axis(labelExpr=TIME_LABEL, labelOverlap=True),
    )
    y = alt.Y("percent:Q", title=axis_title("score", "% of maximum"), scale=alt.Scale(domain=[0, 100]))
    tooltip = [
        alt.Tooltip("exercise_title:N", title="exercise"),
        alt.Tooltip("submitted:N", title="submitted"),
        alt.Tooltip("score:Q", title="score (points)", format="g"),
        alt.Tooltip("max_score:Q", title="maximum (points)", format="g"),
        alt.Tooltip("judged_by:N", title="judged by"),
    ]
    color = alt.Color("exercise_title:N", title="exercise")
    base = alt.Chart(frame, title="Your attempts over time")
    # A dash per exercise as well as a colour; the points' shape says which suite judged them.
    line = (
        base.mark_line()
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=alt.StrokeDash("exercise_title:N", title="exercise"),
        )
        .transform_filter("datum.ran")
    )
    shapes = alt.Scale(domain=[*JUDGED_BY.values(), NOT_RUN], range=["circle", "square", "cross"])
    points = base.mark_point(filled=True, size=70).encode(
        x=x, y=y, color=color, shape=alt.Shape("judged_by:N", title="judged by", scale=shapes), tooltip=tooltip
    )
    return alt.layer(line, points).properties(height=280, description=_attempts_description(frame))


def _attempts_description(frame: pd.DataFrame) -> str:
    parts = []
    for title, rows in frame.groupby("exercise_title", sort=False):
        graded = rows[rows["ran"]]
        part = f"{title}: {len(rows)} attempt{'s' if len(rows) != 1 else ''}"
        if len(graded):
            part += f", best {graded['percent'].max():.0f}%, last graded {graded['percent'].iloc[-1]:.0f}%"
        if len(graded) < len(rows):
            part += f", {len(rows) - len(graded)} that did not import (no score)"
        parts.append(part)
    return (
        "Line chart of the score (% of maximum) of each of your graded attempts against submission time, one "
        f"line per exercise; an attempt that did not import is a cross at 0, off the line: {'; '.join(parts)}."
    )
