"""One walk through every page of the app, recorded once for the tests that judge it.

Six tests look at every page: that it renders cleanly and draws its charts
(``test_pages_render``), that it requests nothing from another host (``test_offline``), that
it meets WCAG 2.1 AA (``test_accessibility``), in the light theme and, on the pages with chosen
controls and a few that stand for the rest, in the dark one, that the newer lessons follow their
widgets (``test_new_lessons``), and that at 800 px nothing scrolls sideways or is cut
(``test_narrow``); two more use the walk's session where a fresh one would load the app again:
the learned lesson's Train draws its fit (``test_pages_render``), and the allowance for
Streamlit's navigation markup reports the same markup elsewhere (``test_accessibility``). A walk
costs a minute or two of CPU (the app's pages, Vega's charts, axe), so ``page_tour`` (a session
fixture in ``conftest.py``) walks once, signed in and with the Instructor page unlocked, and keeps
for each stop what each test needs; each test then asserts its own property.

At each stop the page is judged as it opens at 1400 px; then the same page, without a reload, at
800 px (the viewport resized: the app's layout and Vega's charts follow the width); then, on the
dark theme's pages, with the browser's preference turned to dark (the app follows it live) and
the page's segments or pills chosen. On a page with a widget to follow
(``test_new_lessons.FOLLOWED``) the walk then changes that widget, back at 1400 px in the light
theme, and records what the page showed before and after; on the learned lesson it then presses
Train.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Followed:
    """A widget changed on a page, and what the page showed around the change."""

    shown_before: int  # how many times the text the change must bring was on the page before it
    charts_after: list[dict]  # wait_for_charts' summaries after the change
    shown_after: bool  # the text appeared after the change
    exceptions_after: list[str]


@dataclass
class Stop:
    title: str
    exceptions: list[str] = field(default_factory=list)
    charts: list[dict] = field(default_factory=list)  # wait_for_charts' summaries
    accessibility: list[str] = field(default_factory=list)  # axe's blocking violations, heading/name problems
    clipped_titles: list[str] = field(default_factory=list)  # chart titles not inside their chart's box
    followed: Followed | None = None
    narrow: list[str] = field(default_factory=list)  # at 800 px: sideways scrolling, cut content
    dark: Dark | None = None
    trained: Trained | None = None


@dataclass
class Trained:
    """The learned-embeddings lesson's Train pressed: the fit's tables, maps and loss curve drawn."""

    charts_before: int
    charts: list[dict]  # wait_for_charts' summaries after the fit showed
    shown: bool  # "Showing the fit for" appeared
    exceptions: list[str]


@dataclass
class Dark:
    """A stop judged in the dark theme, with its segments or pills chosen."""

    background: str  # the app's background colour once the browser prefers dark
    chosen: int  # chosen segments or pills on the page
    accessibility: list[str]  # axe's blocking violations, the whole page in view


@dataclass
class Tour:
    titles: list[str]  # the sidebar's pages, in order
    stops: list[Stop]  # one per page; the Instructor page twice, locked then unlocked
    requests: list[tuple[str, str]]  # (page title, url) of every request the browser made
    console_errors: list[str]
    exercise_buttons: list[dict]  # at 800 px: the Exercises buttons' labels, drawn and whole widths
    probe: list[str]  # the known framework issue's rules on the last page with a bad list added to it

    def stop(self, title: str) -> Stop:
        return next(stop for stop in self.stops if stop.title == title)


def follow(page, lesson) -> Followed:
    """Change ``lesson``'s widget (a ``test_new_lessons.Lesson``) and record what the page shows."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from tests.browser.app_driver import exception_boxes, wait_for_charts

    shown_before = page.get_by_text(lesson.shown).count()
    lesson.change(page)
    charts = wait_for_charts(page, minimum=lesson.charts)
    try:
        page.get_by_text(lesson.shown).first.wait_for(timeout=15_000)
        shown = True
    except PlaywrightTimeout:
        shown = False
    return Followed(shown_before, charts, shown, exception_boxes(page))


def judge_narrow(page, title: str) -> tuple[list[str], list[dict]]:
    """The page at ``test_narrow.NARROW`` px: what scrolls sideways or is cut; the Exercises buttons."""
    from tests.browser.app_driver import clipped_chart_titles, wait_for_charts, wait_for_run
    from tests.browser.conftest import ARTIFACTS
    from tests.browser.test_narrow import CUT_JS, EXERCISE_BUTTONS, LABELS_JS

    problems, labels = [], []
    if title == "Exercises":
        for name in EXERCISE_BUTTONS:  # the row draws button by button: measure it whole
            page.get_by_role("button", name=name).first.wait_for(timeout=60_000)
        labels = page.evaluate(LABELS_JS, list(EXERCISE_BUTTONS))
        problems += [
            f"Exercises: the button {label['text']!r} shows {label['client']} px of its {label['scroll']} px label"
            for label in labels
            if label["scroll"] > label["client"]
        ]
    wait_for_charts(page)
    wait_for_run(page)
    problems += [f"{title}: {problem}" for problem in page.evaluate(CUT_JS)]
    problems += [f"{title}: a chart title is cut: {clipped}" for clipped in clipped_chart_titles(page)]
    if title.split(" (")[0] in ("Exercises", "RoPE", "Progress", "Instructor"):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"narrow_{title.split(' (')[0].lower()}.png"))
    return problems, labels


APP_BACKGROUND_JS = """() => getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor"""


def judge_dark(page, title: str, names: list[str]) -> Dark:
    """Turn the browser's preference to dark, choose ``names`` (segments or pills), judge the whole page
    with axe; then back to light. A failing stop leaves a screenshot of the whole dark page."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from tests.browser.app_driver import full_page_screenshot, grow_to_content, wait_for_run
    from tests.browser.conftest import ARTIFACTS
    from tests.browser.test_accessibility import CHOSEN_CONTROLS, blocking_violations, choose

    page.emulate_media(color_scheme="dark")
    try:
        page.wait_for_function(f"() => ({APP_BACKGROUND_JS})() === 'rgb(0, 0, 0)'", polling=100, timeout=10_000)
    except PlaywrightTimeout:
        pass  # the background is recorded and judged
    background = page.evaluate(APP_BACKGROUND_JS)
    wait_for_run(page)
    for name in names:
        choose(page, name)
    chosen = page.locator(CHOSEN_CONTROLS).count()
    # The whole page in view: axe leaves a text it cannot see (scrolled out of Streamlit's own
    # container) undecided, and a control clicked far down scrolls the one above out of view.
    grow_to_content(page)
    problems = blocking_violations(page, f"{title} (dark)")
    if problems:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        full_page_screenshot(page, str(ARTIFACTS / f"dark-{title.split()[-1].lower()}.png"))
    page.emulate_media(color_scheme="light")
    page.wait_for_function(f"() => ({APP_BACKGROUND_JS})() !== 'rgb(0, 0, 0)'", polling=100, timeout=10_000)
    return Dark(background, chosen, problems)


TRAINED_PAGE = "Learned embeddings"


def train(page) -> Trained:
    """Press the learned-embeddings lesson's Train and record what the fit draws."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from tests.browser.app_driver import exception_boxes, wait_for_charts

    charts_before = len(wait_for_charts(page))
    page.get_by_role("button", name="Train (a second or so)").click()
    try:
        page.get_by_text("Showing the fit for").first.wait_for(timeout=60_000)
        shown = True
    except PlaywrightTimeout:
        shown = False
    # The fit shows two tables, two similarity maps and the loss curve.
    charts = wait_for_charts(page, timeout_ms=30_000, minimum=charts_before + 5)
    return Trained(charts_before, charts, shown, exception_boxes(page))


PROBE_JS = """() => { const list = document.createElement('ul');
    list.appendChild(document.createElement('div')).textContent = 'not an item';
    list.id = 'a11y-probe'; document.querySelector('[data-testid="stMain"]').appendChild(list); }"""


def probe_known_issue(page) -> list[str]:
    """The known framework issue's rules only, on the page with a list like the navigation's added to
    its main area: the allowance must keep the navigation's and report the probe's."""
    from tests.browser.test_accessibility import KNOWN_FRAMEWORK_ISSUES, blocking_violations

    page.evaluate(PROBE_JS)
    try:
        return blocking_violations(page, "probe", rules=sorted({rule for rule, _ in KNOWN_FRAMEWORK_ISSUES}))
    finally:
        page.evaluate("() => document.getElementById('a11y-probe')?.remove()")


def walk(page, app_url: str, student: str) -> Tour:
    from tests.browser.app_driver import (
        clipped_chart_titles,
        exception_boxes,
        go_to,
        open_app,
        set_width,
        wait_for_charts,
        wait_for_network_idle,
    )
    from tests.browser.test_accessibility import (
        DARK_THEME_STOPS,
        blocking_violations,
        sidebar_titles,
        structure_problems,
        unlock_instructor,
    )
    from tests.browser.test_flows import sign_in
    from tests.browser.test_narrow import NARROW
    from tests.browser.test_new_lessons import FOLLOWED

    wide = page.viewport_size["width"]
    dark_stops = dict(DARK_THEME_STOPS)
    requests: list[tuple[str, str]] = []
    where = {"title": "start"}
    page.on("request", lambda request: requests.append((where["title"], request.url)))
    open_app(page, app_url)
    sign_in(page, student)
    titles = sidebar_titles(page)
    stops = []
    exercise_buttons: list[dict] = []
    for title in titles:
        where["title"] = title
        set_width(page, wide)
        go_to(page, title)
        if title == "Instructor":
            stops.append(
                Stop(
                    "Instructor (locked)",
                    exception_boxes(page),
                    accessibility=blocking_violations(page, "Instructor (locked)"),
                )
            )
            unlock_instructor(page)
            title = "Instructor (unlocked)"
        lesson = FOLLOWED.get(title)
        stop = Stop(title, exception_boxes(page), wait_for_charts(page, minimum=lesson.charts if lesson else 0))
        stop.clipped_titles = clipped_chart_titles(page)
        stop.accessibility = blocking_violations(page, title) + structure_problems(page, title)
        set_width(page, NARROW)
        stop.narrow, labels = judge_narrow(page, title)
        exercise_buttons += labels
        if title in dark_stops or lesson is not None or title == TRAINED_PAGE:
            set_width(page, wide)
        if title in dark_stops:
            stop.dark = judge_dark(page, title, dark_stops[title])
            set_width(page, wide)
        if lesson is not None:
            stop.followed = follow(page, lesson)
        if title == TRAINED_PAGE:
            stop.trained = train(page)
        wait_for_network_idle(page)
        stops.append(stop)
    set_width(page, wide)
    probe = probe_known_issue(page)
    return Tour(titles, stops, requests, list(page.console_log.errors), exercise_buttons, probe)
