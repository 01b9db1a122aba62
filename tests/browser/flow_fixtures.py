"""Helpers for the browser modules that drive flows: one page kept across a module's tests.

A fresh context per test costs a Chromium context and the app's first page rendered again (and the
student signed in again). Where a module's tests only go from page to page of one app, they share
one page (``kept_page``); each test still gets its screenshot (``screenshot_after``), as the
``page`` fixture of ``conftest.py`` takes them, and goes where it needs from wherever the test
before left the page, and signs its student in if none is yet (``studying_as``), so that each also
runs alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.browser.app_driver import full_page_screenshot, open_app, wait_for_run
from tests.browser.conftest import ARTIFACTS, watched_page


@contextmanager
def kept_page(browser, app_url: str, **options) -> Iterator:
    """A watched page (``conftest.watched_page``) with the app open, closed at the end."""
    context, page = watched_page(browser, app_url, **options)
    try:
        open_app(page, app_url)
        yield page
    finally:
        context.close()


def open_at(page, app_url: str, path: str = "") -> None:
    """The app at its page ``path`` (a lesson's id, ``exercise``...; Home if empty), its run over:
    straight there, not through Home (whose run and charts a test of another page does not need)."""
    if not path:
        open_app(page, app_url)
        return
    page.goto(f"{app_url}/{path}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)


def screenshot_after(page, request) -> None:
    """The test's screenshot: the whole page if it failed, what was in view if it passed."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = str(ARTIFACTS / f"{request.node.name}.png")
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        full_page_screenshot(page, path)
        page.set_viewport_size({"width": page.viewport_size["width"], "height": 1000})
    else:
        page.screenshot(path=path)


def studying_as(page, name: str) -> None:
    """Make sure ``name`` is the page's student: typed in the sidebar unless the page has one already
    (a test before on the same page); another student there is the caller's mistake."""
    from tests.browser.test_flows import sign_in

    if page.get_by_role("textbox", name="Your name").count():
        sign_in(page, name)
    page.get_by_text(f"Studying as {name}", exact=True).wait_for(timeout=10_000)
