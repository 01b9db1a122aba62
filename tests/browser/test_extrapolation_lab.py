"""The extrapolation lab in Chromium: the shipped charts draw, the prediction opens the passkey probe,
the probe's length control and the distance chart's arm redraw their charts, every chart title lies
inside its chart's box, and a live quick run (a child process on the server) shows its time left,
then its own accuracy, perplexity, passkey and distance charts."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.app_driver import exception_boxes, wait_for_charts, wait_for_run
from tests.browser.conftest import LAB_QUICK_RUN, watched_page
from tests.browser.flow_fixtures import open_at, screenshot_after
from tests.browser.test_accessibility import blocking_violations, structure_problems

LAB = "extrapolation"  # the lab's address: opened straight, not through Home
QUICK_RUN_TIMEOUT_MS = 180_000  # the app's shortened quick run, on a machine shared with a warming judge
LIVE = f"Your quick run (seed 0, {LAB_QUICK_RUN['POSLAB_LAB_QUICK_STEPS']} steps)"


@pytest.fixture(scope="module")
def lab_page(playwright_browser, app_url):
    """One page for the module's tests; each opens the lab with ``open_at`` unless it is open."""
    context, page = watched_page(playwright_browser, app_url)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def page(lab_page, request):
    lab_page.console_log.errors.clear()  # each test judges the console errors of its own steps
    yield lab_page
    screenshot_after(lab_page, request)


def drawn(report: list[dict]) -> bool:
    return all(chart["marks"] or chart["painted"] for chart in report)


# A long title is one <text> of several <tspan> lines (app_pages/ui/charts.py wraps it).
CHART_TITLES = """[...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .map(chart => [...new Set(chart.querySelectorAll('svg .role-title-text, svg g.role-title text'))]
        .map(text => text.children.length ? [...text.children].map(line => line.textContent).join(' ')
                                          : text.textContent).join(' '))"""


# Each title line's box against its chart's svg: a line above the svg's top is cut off on screen.
TITLES_OUTSIDE = """[...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg')].flatMap(svg => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('.role-title-text tspan, .role-title-text')]
        .filter(line => line.getBoundingClientRect().height > 0 && line.getBoundingClientRect().top < box.top - 4)
        .map(line => line.textContent); })"""


def chart_titles(page) -> list[str]:
    return page.evaluate(f"() => {CHART_TITLES}")


def wait_for_title(page, words: str, timeout_ms: int = 15_000) -> None:
    page.wait_for_function(
        f"words => ({CHART_TITLES}).some(title => title.includes(words))", arg=words, timeout=timeout_ms
    )


def choose(page, box: str, option: str, attempts: int = 3) -> None:
    """Pick ``option`` in the select box labelled ``box``. Its menu opens on a click and closes on any
    blur or redraw, which a loaded machine can bring between the click and the option's: open it again."""
    combobox = page.get_by_role("combobox", name=box)
    assert combobox.count() == 1, f"{combobox.count()} select boxes named {box!r}: {combobox.all_inner_texts()}"
    choice = page.get_by_role("option", name=option, exact=True)
    for _ in range(attempts):
        wait_for_run(page)
        combobox.click()
        try:
            choice.click(timeout=10_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"the option {option!r} of {box!r} did not show in {attempts} tries")


def test_the_probe_opens_after_the_prediction_and_follows_its_length(page, app_url):
    open_at(page, app_url, LAB)
    report = wait_for_charts(page, minimum=2)
    assert len(report) == 2 and drawn(report), report  # accuracy and perplexity
    page.get_by_role("button", name="Skip: show me").click()
    wait_for_run(page)
    report = wait_for_charts(page, minimum=4)
    assert len(report) == 4 and drawn(report), report  # and the distance chart
    assert any("passkey retrieval at 512 tokens" in title for title in chart_titles(page)), chart_titles(page)
    assert any("RoPE's passkey retrieval by distance" in title for title in chart_titles(page)), chart_titles(page)
    assert page.evaluate(f"() => {TITLES_OUTSIDE}") == []  # two-line titles inside their charts
    page.get_by_text("Does the encoding that extrapolates in perplexity also retrieve?").first.wait_for()
    slider = page.get_by_role("slider", name="test length for the chart (tokens)").first
    slider.focus()
    page.keyboard.press("ArrowLeft")  # one stop down: 256 tokens
    wait_for_run(page)
    wait_for_title(page, "passkey retrieval at 256 tokens")
    assert drawn(wait_for_charts(page, minimum=4))
    choose(page, "arm", "ALiBi")
    wait_for_run(page)
    wait_for_title(page, "ALiBi's passkey retrieval by distance")
    page.get_by_text("Effective length").first.wait_for()
    assert not exception_boxes(page) and not page.console_log.errors, page.console_log.errors
    problems = blocking_violations(page, "lab with the probe") + structure_problems(page, "lab with the probe")
    assert not problems, "\n".join(problems)  # the tour judges the page before the probe opens


def test_a_live_quick_run_shows_its_time_left_then_its_own_charts(page, app_url):
    """On the lab as the test before left it, if it did (the live run's widgets are keyed apart from
    the shipped charts', which it counts before): a page load of the lab saved; alone, it opens the lab."""
    if urlparse(page.url).path != f"/{LAB}":
        open_at(page, app_url, LAB)
    before = len(wait_for_charts(page, minimum=2))
    page.get_by_role("button", name="Run the quick mode live").click()
    # The bar's text comes from the child's progress lines, with the time left from the run's own pace.
    page.get_by_text(re.compile(r"s left at this run's pace|almost done")).first.wait_for(timeout=QUICK_RUN_TIMEOUT_MS)
    page.get_by_text("Quick run finished in").first.wait_for(timeout=QUICK_RUN_TIMEOUT_MS)
    wait_for_run(page)
    report = wait_for_charts(page, timeout_ms=30_000, minimum=before + 4)
    assert len(report) == before + 4 and drawn(report), report  # accuracy, perplexity, passkey, distance
    titles = " ".join(chart_titles(page))
    assert f"{LIVE}: passkey retrieval at 512 tokens" in titles, titles
    # The run has no RoPE (LAB_QUICK_RUN): the distance chart opens on its first arm.
    assert f"{LIVE}: learned's passkey retrieval by distance" in titles, titles
    page.get_by_text("On this server the quick run is shortened: 10 training steps and only learned, alibi").wait_for()
    page.get_by_text(re.compile(r"Your quick run took \d+ s from the button to the results")).first.wait_for()
    page.get_by_text(re.compile(r"The last quick run on this server took \d+ s")).first.wait_for()
    assert not exception_boxes(page) and not page.console_log.errors, page.console_log.errors
    problems = blocking_violations(page, "lab after a quick run") + structure_problems(page, "lab after a quick run")
    assert not problems, "\n".join(problems)
