"""One walk through every page of the app, recorded once for the tests that judge it.

Three tests look at every page: that it renders cleanly and draws its charts
(``test_pages_render``), that it requests nothing from another host (``test_offline``), and that
it meets WCAG 2.1 AA (``test_accessibility``). A walk costs about 20 s, so ``page_tour`` (a
session fixture in ``conftest.py``) walks once, signed in and with the Instructor page unlocked,
and keeps for each stop what each test needs; each test then asserts its own property.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stop:
    title: str
    exceptions: list[str] = field(default_factory=list)
    charts: list[dict] = field(default_factory=list)  # wait_for_charts' summaries
    accessibility: list[str] = field(default_factory=list)  # axe's blocking violations, heading/name problems
    clipped_titles: list[str] = field(default_factory=list)  # chart titles not inside their chart's box


@dataclass
class Tour:
    titles: list[str]  # the sidebar's pages, in order
    stops: list[Stop]  # one per page; the Instructor page twice, locked then unlocked
    requests: list[tuple[str, str]]  # (page title, url) of every request the browser made
    console_errors: list[str]


def walk(page, app_url: str, student: str) -> Tour:
    from tests.browser.app_driver import clipped_chart_titles, exception_boxes, go_to, open_app, wait_for_charts
    from tests.browser.test_accessibility import (
        blocking_violations,
        sidebar_titles,
        structure_problems,
        unlock_instructor,
    )
    from tests.browser.test_flows import sign_in

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
        stop = Stop(title, exception_boxes(page), wait_for_charts(page))
        stop.clipped_titles = clipped_chart_titles(page)
        stop.accessibility = blocking_violations(page, title) + structure_problems(page, title)
        page.wait_for_load_state("networkidle")
        stops.append(stop)
    return Tour(titles, stops, requests, list(page.console_log.errors))
