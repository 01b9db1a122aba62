"""The one module that draws with ``st.*`` for more than one page. Only pages and app.py import it.

Pages call ``lesson_header`` first and ``lesson_footer`` last; between them they ask the library
for data and charts and render them with ``chart`` and ``text``.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from poslab.lessons import Lesson, QuickCheck, get_lesson, lesson_text, neighbours

CHECKS_KEY = "quick_checks"  # session_state[CHECKS_KEY][lesson_id][check_id] = {"choice": i, "correct": b}


def text(lesson_id: str, key: str) -> None:
    """Render one Markdown block of the lesson's text file."""
    st.markdown(lesson_text(lesson_id, key))


def chart(altair_chart: alt.TopLevelMixin) -> None:
    st.altair_chart(altair_chart, width="stretch")


def lesson_header(lesson_id: str) -> Lesson:
    lesson = get_lesson(lesson_id)
    st.title(lesson.title)
    return lesson


def lesson_footer(lesson_id: str) -> None:
    """Quick checks, then links to the previous and the next lesson."""
    lesson = get_lesson(lesson_id)
    if lesson.checks:
        st.divider()
        st.subheader("Check your understanding")
        st.caption("Predict first, then reveal. A wrong answer explains the misconception behind it.")
        for check in lesson.checks:
            quick_check(lesson.id, check)
    prev_next(lesson.id)


def check_answers() -> dict[str, dict[str, dict]]:
    return st.session_state.setdefault(CHECKS_KEY, {})


def quick_check(lesson_id: str, check: QuickCheck) -> None:
    answers = check_answers().setdefault(lesson_id, {})
    with st.container(border=True):
        st.markdown(f"**{check.question}**")
        choice = st.radio(
            "Your prediction",
            options=list(range(len(check.options))),
            format_func=lambda i: check.options[i].text,
            index=None,
            key=f"qc-choice-{lesson_id}-{check.id}",
        )
        if st.button("Reveal", key=f"qc-reveal-{lesson_id}-{check.id}", disabled=choice is None):
            answers[check.id] = {"choice": choice, "correct": check.options[choice].correct}
        answer = answers.get(check.id)
        if answer is not None:
            option = check.options[answer["choice"]]
            (st.success if option.correct else st.error)(
                ("Right. " if option.correct else "Not quite. ") + option.feedback)


def prev_next(lesson_id: str) -> None:
    previous, following = neighbours(lesson_id)
    left, right = st.columns(2)
    if previous is not None:
        left.page_link(previous.page_path, label=f"Previous: {previous.title}", icon=":material/arrow_back:")
    if following is not None:
        right.page_link(following.page_path, label=f"Next: {following.title}", icon=":material/arrow_forward:")


@st.cache_data(show_spinner=False, max_entries=256)
def _cached_call(module: str, name: str, kwargs: tuple[tuple[str, object], ...]) -> object:
    import importlib

    return getattr(importlib.import_module(module), name)(**dict(kwargs))


def cached(function, **kwargs):
    """``function(**kwargs)`` through ``st.cache_data``, keyed by the function's dotted name and the
    plain keyword arguments (ints, floats, strings, tuples; never tensors).

    Lets a page make its one library call per section without recomputing it on every rerun;
    the result (a frame, a chart, a small frozen dataclass) must pickle.
    """
    return _cached_call(function.__module__, function.__qualname__, tuple(sorted(kwargs.items())))
