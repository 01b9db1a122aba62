"""What a new student hits on the Exercises page and around it, in Chromium (issue 34): the last result
is the chosen exercise's, Load into the editor asks before replacing a draft, a draft typed just
before a reload comes back, and a dark theme chosen on one page holds after a reload on another.

One student per test (one app serves every browser test); each test stays on one or two pages."""

from __future__ import annotations

import re

from poslab.exercises import get_exercise
from tests.browser.app_driver import go_to, open_app, wait_for_run
from tests.browser.test_flows import sign_in
from tests.browser.test_workspace import editor_frame, editor_text, open_rope

DECODE = get_exercise("decode")


def choose_exercise(page, title: str) -> None:
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Exercise").first.click()
    page.get_by_role("option", name=title).click()
    wait_for_run(page)


def type_at_the_end(page, text: str) -> None:
    editor_frame(page).locator(".ace_content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def reload(page) -> None:
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    editor_frame(page).locator(".ace_content").wait_for(timeout=30_000)


def test_a_draft_typed_just_before_a_reload_comes_back(page, app_url):
    open_rope(page, app_url, student="Ada Quick Reload")
    type_at_the_end(page, "\n# typed just before the reload\n")
    page.wait_for_timeout(300)  # far less than the editor's pause before it sends its text
    reload(page)
    page.wait_for_timeout(500)
    assert "# typed just before the reload" in editor_text(page), "the last words before the reload were lost"


def test_the_last_result_is_the_chosen_exercises_and_loading_an_attempt_asks_first(page, app_url):
    open_rope(page, app_url, student="Ada Last Result")
    page.get_by_role("button", name="Submit for grading").click()  # the starter code: a low score, but a result
    page.get_by_text("Your last result").wait_for(timeout=180_000)
    page.get_by_text(re.compile(r"Attempt 1 ·")).first.wait_for(timeout=60_000)

    choose_exercise(page, DECODE.title)
    page.get_by_text("Your attempts (0)").wait_for(timeout=30_000)
    assert page.get_by_text("Your last result").count() == 0, "decode shows rope's result as its last result"

    choose_exercise(page, get_exercise("rope").title)
    page.get_by_text("Your last result").wait_for(timeout=30_000)
    type_at_the_end(page, "\n# my draft, not in any attempt\n")
    page.wait_for_timeout(2500)  # the editor sends its text after a pause in typing
    wait_for_run(page)
    page.get_by_text(re.compile(r"Attempt 1 ·")).first.click()
    wait_for_run(page)
    attempt = page.locator('[data-testid="stExpander"]').filter(has_text=re.compile(r"Attempt 1 ·")).first
    attempt.get_by_role("tab", name="Code").click()
    attempt.get_by_role("button", name="Load into the editor").click()
    page.get_by_text("Your draft differs from attempt 1's code").wait_for(timeout=30_000)
    assert "# my draft, not in any attempt" in editor_text(page), "the draft was replaced before the student chose"
    page.get_by_role("button", name="Replace my draft with attempt 1").click()
    wait_for_run(page)
    page.get_by_text("Attempt 1's code is in the editor now").wait_for(timeout=30_000)
    assert "# my draft, not in any attempt" not in editor_text(page)


def test_a_dark_theme_chosen_on_one_page_holds_after_a_reload_on_another(page, app_url):
    open_app(page, app_url)
    sign_in(page, "Ada Dark Theme")
    go_to(page, "RoPE")
    page.get_by_test_id("stMainMenuButton").click()
    page.get_by_text("Dark", exact=True).first.click()  # the app menu's theme: System, Light, Dark
    page.wait_for_timeout(500)
    go_to(page, "Exercises")
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    background = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )
    assert background in ("rgb(0, 0, 0)",), f"after a reload on Exercises the app is {background}, not dark"
