"""The lessons added since the first course in Chromium: every chart draws, and a widget changes what is shown.

The page tour (``tour.py``) opens each of these lessons once: it counts the charts as the page opens,
then changes the lesson's widget (``FOLLOWED``) and records what the page shows; the test judges it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.browser.app_driver import wait_for_run


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``, as a student would."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    # Scroll first and let the page settle: a select opened while the page still scrolls closes again.
    box.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_for_run(page)


def nudge(page, label: str, key: str) -> None:
    """Move the slider labelled ``label`` one step with the keyboard, as a student could."""
    thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).first.get_by_role("slider").first
    thumb.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    thumb.focus()
    page.keyboard.press(key)
    wait_for_run(page)


@dataclass(frozen=True)
class Lesson:
    title: str
    charts: int  # the charts the page draws
    change: Callable  # (page) -> None: the widget changed, as a student would
    shown: str  # a text the page must show after the change (and not before)


def selectbox(label: str, option: str) -> Callable:
    return lambda page: choose(page, label, option)


def slider(label: str, key: str) -> Callable:
    return lambda page: nudge(page, label, key)


NEW_LESSONS = [
    Lesson(
        "Relative position biases",
        4,
        selectbox("number of buckets", "8"),
        "T5 buckets, bidirectional (encoder): 8 buckets",
    ),
    Lesson("RoPE's base and the context length", 3, selectbox("base b", "500,000"), "Base 500,000, D = 128"),
    Lesson(
        "Long context in practice", 3, selectbox("model", "GPT-NeoX-20B"), "Partial rotary: 24 of 96 features rotated"
    ),
    Lesson("Extension in production", 2, selectbox("model", "Qwen3 8B"), "Qwen3 8B: the cost of one training token"),
    Lesson("Attention entropy and temperature", 2, slider("keys n, for the numbers below", "ArrowLeft"), "11.09"),
    Lesson("Non-uniform and hybrid schemes", 5, slider("context length (tokens)", "ArrowLeft"), "18.8%"),
    Lesson(
        "Positions in an inference engine",
        5,
        slider("window W (buffer slots)", "ArrowRight"),
        "A rolling buffer of 7 slots",
    ),
    Lesson(
        "Positions in 2D and 3D: images and video", 3, slider("image rows", "ArrowRight"), "position ids of 32 tokens"
    ),
    Lesson(
        "Positions in real engines",
        3,
        slider("original length L (short factors up to it)", "ArrowRight"),
        "First step that goes wrong: 11.",
    ),
    Lesson(
        "Precision: positions in 16-bit floats",
        2,
        slider("offset between query and key", "ArrowRight"),
        "One query and one key 16 positions apart",
    ),
]
FOLLOWED = {lesson.title: lesson for lesson in NEW_LESSONS}


def drawn(report: list[dict]) -> bool:
    return all(chart["marks"] or chart["painted"] for chart in report)


def test_new_lessons_draw_every_chart_and_follow_their_widgets(page_tour):
    assert {lesson.title for lesson in NEW_LESSONS} <= set(page_tour.titles), page_tour.titles
    problems = []
    for lesson in NEW_LESSONS:
        stop = page_tour.stop(lesson.title)
        followed = stop.followed
        if len(stop.charts) != lesson.charts or not drawn(stop.charts):
            problems.append(f"{lesson.title}: {lesson.charts} charts drawn expected as it opens, got {stop.charts}")
        if followed.shown_before:
            problems.append(f"{lesson.title}: {lesson.shown!r} is shown before the widget changed")
        if not drawn(followed.charts_after):
            problems.append(f"{lesson.title}: after the widget changed a chart drew nothing: {followed.charts_after}")
        if not followed.shown_after:
            problems.append(f"{lesson.title}: {lesson.shown!r} is not shown after the widget changed")
        if followed.exceptions_after:
            problems.append(f"{lesson.title}: exception after the widget changed: {followed.exceptions_after[0][:300]}")
    assert not problems, "\n".join(problems)
    assert not page_tour.console_errors, page_tour.console_errors
