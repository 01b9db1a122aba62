"""What a new student hits on the Exercises page and around it, in Chromium (issue 34): a draft typed
just before a reload comes back, and a dark theme chosen on one page holds after a reload on another,
also when it was chosen as the tab opened, before the app's script was in it.

One student per test (one app serves every browser test); each test stays on one or two pages."""

from __future__ import annotations

import re
from urllib.parse import urlparse

from tests.browser.app_driver import go_to, open_app, wait_for_run
from tests.browser.flow_fixtures import open_at
from tests.browser.test_workspace import editor_frame, editor_text, open_rope


def type_at_the_end(page, text: str) -> None:
    editor_frame(page).locator(".ace_content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def reload(page) -> None:
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    editor_frame(page).locator(".ace_content").wait_for(timeout=30_000)


# The blur at pagehide sends the text as the page goes, and under load that save can land after the
# reloaded page read the draft: the page also keeps the text in the browser (browser_memory.py).
def test_a_draft_typed_just_before_a_reload_comes_back(page, app_url):
    open_rope(page, app_url, student="Ada Quick Reload")
    type_at_the_end(page, "\n# typed just before the reload\n")
    page.wait_for_timeout(300)  # far less than the editor's pause before it sends its text
    reload(page)
    page.wait_for_timeout(500)
    assert "# typed just before the reload" in editor_text(page), "the last words before the reload were lost"


APP_BACKGROUND_JS = "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"


# The app's background is dark: its relative luminance below the middle grey.
DARK_JS = (
    "() => { const [r, g, b] = (" + APP_BACKGROUND_JS + ")().match(/[0-9]+/g).map(Number);"
    " return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128; }"
)


def dark_background(page) -> bool:
    return page.evaluate(DARK_JS)


def test_a_dark_choice_on_one_page_holds_after_a_reload_on_another(page, app_url):
    open_app(page, app_url)
    go_to(page, "RoPE")
    rope_address = page.url
    assert not dark_background(page), "the light browser's first page should be light"
    page.locator('[data-testid="stMainMenuButton"]').click()
    page.locator('[data-testid="stMainMenuItem-theme-Dark"]').click()
    page.wait_for_function(DARK_JS, timeout=10_000)  # the theme changes at once, without a run
    go_to(page, "ALiBi")
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    assert "alibi" in page.url.lower() or "ALiBi" in page.locator("h1").first.inner_text()
    assert dark_background(page), "the dark choice made on RoPE's page was lost after a reload on ALiBi's"

    # A choice made as a tab opened, before the app's script was in it, is kept by Streamlit under the
    # opened page's key only: the script spreads it when it comes. Here that choice is put where
    # Streamlit puts it (an assignment, past the script's hook), with nothing else in the browser.
    choice = page.evaluate("() => Object.entries(localStorage).find(([key]) => /^stActiveTheme-.*-v[0-9]+$/.test(key))")
    assert choice and "dark" in choice[1].lower(), choice
    version = choice[0].rsplit("-", 1)[1]
    rope_path = urlparse(rope_address).path
    page.evaluate(
        "([key, value]) => { localStorage.clear(); localStorage[key] = value; }",
        [f"stActiveTheme-{rope_path}-{version}", choice[1]],
    )
    page.goto(rope_address)
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    assert dark_background(page), "Streamlit did not read the choice kept under the opened page's key"
    go_to(page, "ALiBi")
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    assert dark_background(page), "a dark choice made before the app's script came was lost on another page"
