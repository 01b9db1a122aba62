"""One walk through every page of the app, recorded once for the tests that judge it.

Four tests look at every page: that it renders cleanly and draws its charts
(``test_pages_render``), that it requests nothing from another host (``test_offline``), that
it meets WCAG 2.1 AA (``test_accessibility``), and that the newer lessons follow their widgets
(``test_new_lessons``). A walk costs about 20 s, so ``page_tour`` (a session fixture in
``conftest.py``) walks once, signed in and with the Instructor page unlocked, and keeps for each
stop what each test needs; each test then asserts its own property.

On a page with a widget to follow (``test_new_lessons.FOLLOWED``) the walk changes that widget
after the page was judged as it opens, and records what the page showed before and after.
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


@dataclass
class Tour:
    titles: list[str]  # the sidebar's pages, in order
    stops: list[Stop]  # one per page; the Instructor page twice, locked then unlocked
    requests: list[tuple[str, str]]  # (page title, url) of every request the browser made
    console_errors: list[str]

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


def walk(page, app_url: str, student: str) -> Tour:
    from tests.browser.app_driver import clipped_chart_titles, exception_boxes, go_to, open_app, wait_for_charts
    from tests.browser.test_accessibility import (
        blocking_violations,
        sidebar_titles,
        structure_problems,
        unlock_instructor,
    )
    from tests.browser.test_flows import sign_in
    from tests.browser.test_new_lessons import FOLLOWED

    requests: list[tuple[str, str]] = []
    where = {"title": "start"}
    page.on("request", lambda request: requests.append((where["title"], request.url)))
    open_app(page, app_url)
    sign_in(page, student)
    titles = sidebar_titles(page)
    stops = []
    for title in titles:
        where["title"] = title
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
        if lesson is not None:
            stop.followed = follow(page, lesson)
        page.wait_for_load_state("networkidle")
        stops.append(stop)
    return Tour(titles, stops, requests, list(page.console_log.errors))
