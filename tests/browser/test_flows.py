"""Cases 2, 4 and 5: the causal-mask verdict, a hostile comment, and the instructor's lock, in a real
browser against a real server and store. Case 3 (a student's submissions, right and wrong, and their
progress) is in ``test_workspace.py``, beside the other gradings: the judge warms up once.

The three go from page to page of one app, so they share one page (``flow_fixtures.kept_page``) and
one student, typed in by the first test that needs one."""

import pytest

from tests.browser.app_driver import exception_boxes, go_to, wait_for_charts, wait_for_run
from tests.browser.conftest import INSTRUCTOR_PASSWORD
from tests.browser.flow_fixtures import kept_page, screenshot_after, studying_as

STUDENT = "Katherine Johnson"  # she posts the hostile comment, then tries the instructor's page
HOSTILE_COMMENT = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> '
    "**not bold** [a link](http://example.invalid)"
)


@pytest.fixture(scope="module")
def one_page(playwright_browser, app_url):
    with kept_page(playwright_browser, app_url) as page:
        yield page


@pytest.fixture
def page(one_page, request):
    one_page.console_log.errors.clear()  # each test judges the console errors of its own steps
    yield one_page
    screenshot_after(one_page, request)


def verdict(page) -> str:
    alerts = page.locator('[data-testid="stAlert"]').filter(has_text="permutation-")
    return alerts.first.inner_text()


def sign_in(page, name: str) -> None:
    page.get_by_role("textbox", name="Your name").fill(name)
    page.get_by_role("button", name="Start").click()
    wait_for_run(page)
    page.get_by_text(f"Studying as {name}").wait_for()


def test_toggling_the_causal_mask_flips_the_verdict(page, app_url):
    go_to(page, "The position problem")
    before = verdict(page)
    page.get_by_text("Add a causal mask").click()
    wait_for_run(page)
    after = verdict(page)
    assert "holds" in before and "breaks" in after, (before, after)
    assert not exception_boxes(page) and not page.console_log.errors


def test_a_hostile_comment_is_shown_as_literal_text(page, app_url):
    studying_as(page, STUDENT)
    go_to(page, "ALiBi")
    page.get_by_role("textbox", name="Add a comment (plain text)").fill(HOSTILE_COMMENT)
    page.get_by_role("button", name="Post").click()
    wait_for_run(page)
    shown = page.locator('[data-testid="stMain"]')
    shown.get_by_text("window.__pwned = 1").first.wait_for()
    assert HOSTILE_COMMENT in shown.inner_text().replace("\n", " ")
    assert page.evaluate("() => window.__pwned") is None
    assert shown.locator("strong", has_text="not bold").count() == 0
    assert shown.locator('a[href="http://example.invalid"]').count() == 0
    assert not exception_boxes(page)


def test_the_instructor_page_refuses_a_wrong_password_and_opens_for_the_right_one(page, app_url):
    studying_as(page, STUDENT)
    go_to(page, "RoPE")  # a visit, so the class table has her row (the comment was one too)
    go_to(page, "Instructor")
    page.get_by_label("Instructor password", exact=True).fill("not the password")
    page.get_by_role("button", name="Unlock").click()
    wait_for_run(page)
    page.get_by_text("That password is not right.").wait_for()
    assert page.get_by_role("button", name="Lock this page").count() == 0

    page.get_by_label("Instructor password", exact=True).fill(INSTRUCTOR_PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    wait_for_run(page)
    page.get_by_role("button", name="Lock this page").wait_for()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    # The grid fills its (hidden, accessible) cells after the frame appears: wait, don't count once.
    her_row = page.locator('[data-testid="stDataFrame"] [role="gridcell"]').filter(has_text=STUDENT)
    her_row.first.wait_for(state="attached", timeout=20_000)
    undrawn = [chart for chart in wait_for_charts(page) if chart["marks"] == 0 and chart["painted"] == 0]
    assert not undrawn, f"charts that drew nothing: {undrawn}"
    assert not exception_boxes(page) and not page.console_log.errors
