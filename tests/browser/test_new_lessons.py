"""The lessons added since the first course in Chromium: every chart draws, and a widget changes what is shown."""

import pytest

from tests.browser.app_driver import exception_boxes, go_to, open_app, wait_for_charts, wait_for_run

# title, charts the page draws, the widget to change (label, new option), a text it must show afterwards
NEW_LESSONS = [
    ("Relative position biases", 4, ("number of buckets", "8"), "T5 buckets, bidirectional (encoder): 8 buckets"),
    ("RoPE's base and the context length", 3, ("base b", "500,000"), "Base 500,000, D = 128"),
    ("Long context in practice", 3, ("model", "GPT-NeoX-20B"), "Partial rotary: 24 of 96 features rotated"),
    ("Extension in production", 2, ("model", "Qwen3 8B"), "Qwen3 8B: the cost of one training token"),
]
# the same for lessons whose widgets are sliders: (title, charts, (slider label, arrow key), text afterwards)
NEW_SLIDER_LESSONS = [
    ("Attention entropy and temperature", 2, ("keys n, for the numbers below", "ArrowLeft"), "11.09"),
    ("Non-uniform and hybrid schemes", 5, ("context length (tokens)", "ArrowLeft"), "18.8%"),
    ("Positions in an inference engine", 5, ("window W (buffer slots)", "ArrowRight"), "A rolling buffer of 7 slots"),
    ("Positions in 2D and 3D: images and video", 3, ("image rows", "ArrowRight"), "position ids of 32 tokens"),
    (
        "Positions in real engines",
        3,
        ("original length L (short factors up to it)", "ArrowRight"),
        "First step that goes wrong: 11.",
    ),
    (
        "Precision: positions in 16-bit floats",
        2,
        ("offset between query and key", "ArrowRight"),
        "One query and one key 16 positions apart",
    ),
]


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


def draws_then_follows(page, app_url, title, charts, shown, change) -> None:
    open_app(page, app_url)
    go_to(page, title)
    report = wait_for_charts(page, minimum=charts)
    assert len(report) == charts and all(c["marks"] or c["painted"] for c in report), report
    assert page.get_by_text(shown).count() == 0  # the widget's default shows something else
    change()
    report = wait_for_charts(page, minimum=charts)
    assert all(c["marks"] or c["painted"] for c in report), report
    page.get_by_text(shown).first.wait_for(timeout=15_000)
    assert not exception_boxes(page) and not page.console_log.errors, page.console_log.errors


@pytest.mark.parametrize(("title", "charts", "change", "shown"), NEW_LESSONS, ids=[t for t, *_ in NEW_LESSONS])
def test_new_lesson_draws_every_chart_and_follows_its_widgets(page, app_url, title, charts, change, shown):
    draws_then_follows(page, app_url, title, charts, shown, lambda: choose(page, *change))


@pytest.mark.parametrize(
    ("title", "charts", "change", "shown"), NEW_SLIDER_LESSONS, ids=[t for t, *_ in NEW_SLIDER_LESSONS]
)
def test_new_slider_lesson_draws_every_chart_and_follows_its_sliders(page, app_url, title, charts, change, shown):
    draws_then_follows(page, app_url, title, charts, shown, lambda: nudge(page, *change))
