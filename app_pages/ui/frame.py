"""The frame of every lesson page: ``lesson_header`` first, ``text`` and ``chart`` between, ``lesson_footer`` last.

``lesson_header`` stores the visit; the footer's quick checks store their answers as they are
revealed, then come "mark lesson done", links to the previous and the next lesson, and the comments.
``predict`` shows one quick check in place, before the section whose result it asks about; the
footer then leaves it out; with ``reveal_after`` the page shows that section once the check is
answered or skipped. Answers are kept in the store: after a reload a check shows its answer. ``chart(..., numbers=True)`` puts the chart's numbers in a table one
click below it.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from app_pages.ui import charts
from app_pages.ui.comments import comments_section
from app_pages.ui.identity import current_student, prompt
from app_pages.ui.store_calls import progress_this_run, store_call
from poslab.exercises import get_exercise
from poslab.lessons import Lesson, QuickCheck, get_lesson, lesson_text, neighbours
from poslab.viz.progress import EXERCISE_PAGE as EXERCISE_PAGE_PATH

CHECKS_KEY = "quick_checks"  # session_state[CHECKS_KEY][lesson_id][check_id] = {"choice": i, "correct": b}
VISITS_KEY = "visits_recorded"  # (student, lesson id) pairs whose visit this session already stored
CHOICES_LOADED_KEY = "check_choices_loaded"  # (student, lesson id) pairs whose stored answers were read
SKIPPED_KEY = "checks_skipped"  # (lesson id, check id) predictions the student skipped this session
INLINE_KEY = "quick_checks_inline"  # (lesson id, check id) shown in place on this run: the footer skips them


def text(lesson_id: str, key: str) -> None:
    """Render one Markdown block of the lesson's text file."""
    st.markdown(lesson_text(lesson_id, key))


def chart(altair_chart: alt.TopLevelMixin, numbers: bool = False) -> None:
    """The chart at the page's width (converted once per content: ``charts``); its numbers one click below."""
    key = charts.draw(altair_chart)
    if numbers:
        with st.expander("The numbers behind this chart", icon=":material/table:"):
            st.dataframe(charts.numbers(altair_chart, key))


def row(count: int) -> list:
    """``count`` boxes side by side, each as wide as what it holds, wrapping onto another line when the
    page is narrower than they are together (for metrics and links).

    ``st.columns`` gives each a fixed share of the width and stacks them only when the whole window
    is narrow (at most 640 px), not when the sidebar leaves a narrow page beside it: at 800 px a
    metric's label and value, or a link's title, ended in an ellipsis there."""
    holder = st.container(horizontal=True, horizontal_alignment="distribute", gap="medium")
    return [holder.container(width="content") for _ in range(count)]


def chart_row(*widths: int) -> list:
    """Boxes of these widths (px) for charts side by side, wrapping one under another when the page is
    narrower than they are together (columns would shrink each chart to a sliver at 800 px)."""
    holder = st.container(horizontal=True, gap="medium")
    return [holder.container(width=width) for width in widths]


def lesson_header(lesson_id: str) -> Lesson:
    lesson = get_lesson(lesson_id)
    st.title(lesson.title)
    st.session_state[INLINE_KEY] = set()
    record_visit(lesson.id)
    return lesson


def predict(lesson_id: str, check_id: str, reveal_after: bool = False) -> bool:
    """One quick check in place, before what it predicts; the footer leaves it out.

    Returns whether it is answered (now or before: the store keeps answers). With
    ``reveal_after``, a "Skip" button is offered too, and the page shows what the check predicts
    only once this returns True::

        if frame.predict(LESSON, "learned-table-params", reveal_after=True):
            st.dataframe(...)   # the table the check asked about
    """
    check = next((c for c in get_lesson(lesson_id).checks if c.id == check_id), None)
    if check is None:
        raise KeyError(f"lesson {lesson_id} has no quick check {check_id!r}")
    shown = quick_check(lesson_id, check, skip_label="Skip: show me" if reveal_after else None)
    st.session_state.setdefault(INLINE_KEY, set()).add((lesson_id, check_id))
    return shown


def lesson_footer(lesson_id: str) -> None:
    """Quick checks, "mark lesson done", links to the previous and the next lesson, comments."""
    lesson = get_lesson(lesson_id)
    shown = st.session_state.get(INLINE_KEY, set())
    remaining = [check for check in lesson.checks if (lesson.id, check.id) not in shown]
    if remaining:
        st.divider()
        st.header("Check your understanding")
        st.caption("Predict first, then reveal. A wrong answer explains the misconception behind it.")
        for check in remaining:
            quick_check(lesson.id, check)
    practice_link(lesson)
    mark_done(lesson.id)
    prev_next(lesson.id)
    comments_section(lesson.id)


def practice_link(lesson: Lesson) -> None:
    """The exercise that practises this lesson, opened on the Exercises page."""
    if lesson.exercise is not None:
        st.page_link(
            EXERCISE_PAGE_PATH,
            label=f"Practise it: {get_exercise(lesson.exercise).title}",
            icon=":material/code:",
            query_params={"exercise": lesson.exercise},
        )


def record_visit(lesson_id: str) -> None:
    """Store the first visit of each lesson per session (reruns would otherwise repeat it)."""
    student = current_student()
    recorded = st.session_state.setdefault(VISITS_KEY, set())
    if student is None or (student, lesson_id) in recorded:
        return
    # Queued: nobody waits for a visit to be written (poslab/store/queued_writes.py).
    store_call("save your visit", lambda opened: opened.record_visit_soon(student, lesson_id), None, in_place=True)
    recorded.add((student, lesson_id))


def record_check(lesson_id: str, check_id: str, choice: int, correct: bool) -> None:
    student = current_student()
    if student is not None:
        store_call(
            "save your answer",
            lambda opened: (
                opened.record_check(student, lesson_id, check_id, correct),
                opened.record_check_choice(student, lesson_id, check_id, choice),
            ),
            None,
        )


def check_answers() -> dict[str, dict[str, dict]]:
    return st.session_state.setdefault(CHECKS_KEY, {})


def _lesson_answers(lesson_id: str, checks: tuple[QuickCheck, ...]) -> dict[str, dict]:
    """This session's answers, completed (once per session and lesson) with the ones in the store."""
    answers = check_answers().setdefault(lesson_id, {})
    student = current_student()
    loaded = st.session_state.setdefault(CHOICES_LOADED_KEY, set())
    if student is None or (student, lesson_id) in loaded:
        return answers
    stored = store_call("load your answers", lambda opened: opened.check_choices(student, lesson_id), {})
    by_id = {check.id: check for check in checks}
    for check_id, choice in stored.items():
        check = by_id.get(check_id)
        if check is not None and check_id not in answers and 0 <= choice < len(check.options):
            answers[check_id] = {"choice": choice, "correct": check.options[choice].correct}
    loaded.add((student, lesson_id))
    return answers


def _reveal(lesson_id: str, check: QuickCheck, answers: dict[str, dict]) -> None:
    choice = st.session_state.get(f"qc-choice-{lesson_id}-{check.id}")
    if choice is None:
        return
    answers[check.id] = {"choice": choice, "correct": check.options[choice].correct}
    record_check(lesson_id, check.id, choice, check.options[choice].correct)


def quick_check(lesson_id: str, check: QuickCheck, skip_label: str | None = None) -> bool:
    """One check: the student picks, then reveals the feedback; an answer kept in the store shows again.

    Returns whether it is answered (or, with ``skip_label``, skipped): a prediction's content may show.
    """
    answers = _lesson_answers(lesson_id, get_lesson(lesson_id).checks)
    key = f"qc-choice-{lesson_id}-{check.id}"
    answer = answers.get(check.id)
    if answer is not None and key not in st.session_state:
        st.session_state[key] = answer["choice"]  # the stored answer, selected again after a reload
    skipped = st.session_state.setdefault(SKIPPED_KEY, set())
    with st.container(border=True):
        st.markdown(f"**{check.question}**")
        choice = st.radio(
            "Your prediction",
            options=list(range(len(check.options))),
            format_func=lambda i: check.options[i].text,
            index=None,
            key=key,
        )
        reveal, skip = st.columns([1, 4]) if skip_label and answer is None else (st.container(), None)
        reveal.button(
            "Reveal",
            key=f"qc-reveal-{lesson_id}-{check.id}",
            disabled=choice is None,
            on_click=_reveal,
            args=(lesson_id, check, answers),
        )
        if skip is not None and (lesson_id, check.id) not in skipped:
            if skip.button(skip_label, key=f"qc-skip-{lesson_id}-{check.id}"):
                skipped.add((lesson_id, check.id))
        answer = answers.get(check.id)
        if answer is not None:
            option = check.options[answer["choice"]]
            (st.success if option.correct else st.error)(
                ("Right. " if option.correct else "Not quite. ") + option.feedback
            )
    return answer is not None or (lesson_id, check.id) in skipped


def mark_done(lesson_id: str) -> None:
    """A "mark lesson done" control, or the note that it is done."""
    student = current_student()
    if student is None:
        st.caption(prompt("save your progress through this lesson"))
        return
    progress = progress_this_run(student)
    if progress is not None and progress.lesson(lesson_id).done:
        st.success("You have finished this lesson.", icon=":material/task_alt:")
    elif st.button("Mark lesson done", key=f"done-{lesson_id}", icon=":material/check:"):
        store_call("mark the lesson done", lambda opened: opened.complete_lesson(student, lesson_id), None)
        st.rerun()  # the sidebar (already drawn) shows the new percentage


def prev_next(lesson_id: str) -> None:
    previous, following = neighbours(lesson_id)
    left, right = row(2)
    if previous is not None:
        left.page_link(previous.page_path, label=f"Previous: {previous.title}", icon=":material/arrow_back:")
    if following is not None:
        right.page_link(following.page_path, label=f"Next: {following.title}", icon=":material/arrow_forward:")
    else:  # the last lesson leads on to the practice
        right.page_link(EXERCISE_PAGE_PATH, label="Next: the exercises", icon=":material/arrow_forward:")
