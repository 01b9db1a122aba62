"""The course with the keyboard alone (Tab, Shift+Tab, Enter, Space, arrows): the name field, a lesson's
quick check and the comments box are reached and used, and each shows a visible focus.

"Visible" is measured, not assumed: the pixels around a control differ between the moment before
the keyboard reaches it and the moment it has focus.
"""

from __future__ import annotations

from tests.browser.app_driver import wait_for_run

MAX_TABS = 400  # a long lesson has many stops: sliders, expanders, charts, links
LESSON_TITLE = "ALiBi"
FOCUS_MARGIN_PX = 6  # a focus ring is drawn around the control, partly outside its box


def focused(page, script: str) -> bool:
    """Whether ``script`` (a JS expression over ``el``, the focused element) holds."""
    return page.evaluate(f"() => {{ const el = document.activeElement; return !!el && ({script}); }}")


def tab_to(page, script: str, what: str, backwards: bool = False) -> None:
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(MAX_TABS):
        page.keyboard.press(key)
        if focused(page, script):
            return
    raise AssertionError(f"{MAX_TABS} presses of {key} never reached {what}")


def region(page, locator) -> dict:
    box = locator.bounding_box()
    assert box, "the control has no box on screen"
    return {
        "x": max(box["x"] - FOCUS_MARGIN_PX, 0),
        "y": max(box["y"] - FOCUS_MARGIN_PX, 0),
        "width": box["width"] + 2 * FOCUS_MARGIN_PX,
        "height": box["height"] + 2 * FOCUS_MARGIN_PX,
    }


class FocusCheck:
    """Pixels around a control before the keyboard reaches it, to compare with it focused."""

    def __init__(self, page, locator) -> None:
        self.page, self.locator = page, locator
        locator.scroll_into_view_if_needed()
        page.mouse.move(0, 0)  # no hover effect in either picture
        self.before = page.screenshot(clip=region(page, locator))

    def assert_visible(self, what: str) -> None:
        self.locator.scroll_into_view_if_needed()
        self.page.wait_for_timeout(250)  # focus styles may fade in
        after = self.page.screenshot(clip=region(self.page, self.locator))
        assert after != self.before, f"{what} looks the same focused as unfocused: no visible focus"


def test_name_quick_check_and_comment_with_the_keyboard_alone(page, app_url):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # installed: the page fixture needs it

    page.goto(app_url + "/")
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)

    # The name field: Tab to it, type, Enter.
    name_box = page.get_by_role("textbox", name="Your name")
    focus = FocusCheck(page, name_box)
    tab_to(page, "el.getAttribute('aria-label') === 'Your name'", "the name field")
    focus.assert_visible("the name field")
    page.keyboard.type("Ada Keyboard")
    page.keyboard.press("Enter")
    wait_for_run(page)
    signed_in = page.get_by_text("Studying as Ada Keyboard")
    try:
        signed_in.wait_for(timeout=5_000)
    except PlaywrightTimeout:  # Enter only filled the field: Tab on to Start
        tab_to(page, "el.tagName === 'BUTTON' && el.innerText.trim().endsWith('Start')", "the Start button")
        page.keyboard.press("Enter")
        wait_for_run(page)
    signed_in.wait_for()

    # A lesson, through the sidebar's link.
    link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=LESSON_TITLE).first
    focus = FocusCheck(page, link)
    tab_to(
        page,
        f"el.tagName === 'A' && el.innerText.trim().endsWith({LESSON_TITLE!r}) "
        "&& !!el.closest('[data-testid=\"stSidebarNav\"]')",
        f"the {LESSON_TITLE} link",
    )
    focus.assert_visible(f"the sidebar link to {LESSON_TITLE}")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/alibi" in url, wait_until="commit", timeout=60_000)
    wait_for_run(page)
    page.get_by_role("heading", level=1, name=LESSON_TITLE).wait_for()

    # The first quick check: into its radio group, an arrow to choose, Space to settle, Enter on Reveal.
    first_check = page.get_by_role("radiogroup", name="Your prediction").first
    first_option = first_check.get_by_role("radio").first
    focus = FocusCheck(page, first_check)
    tab_to(
        page,
        "el.type === 'radio' && !!el.closest('[role=\"radiogroup\"]')"
        " && el.closest('[role=\"radiogroup\"]').getAttribute('aria-label') === 'Your prediction'",
        "the first quick check",
    )
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Space")
    wait_for_run(page)
    focus.assert_visible("the quick check's options")
    assert first_option.is_checked(), "arrows and Space did not choose the first option"
    tab_to(page, "el.tagName === 'BUTTON' && el.innerText.trim() === 'Reveal'", "the Reveal button")
    page.keyboard.press("Enter")
    wait_for_run(page)
    page.get_by_text("Right. ").or_(page.get_by_text("Not quite. ")).first.wait_for()

    # The comments box: Tab in, type, Tab to Post, Enter.
    box = page.get_by_role("textbox", name="Add a comment (plain text)")
    focus = FocusCheck(page, box)
    tab_to(
        page,
        "el.tagName === 'TEXTAREA' && el.getAttribute('aria-label') === 'Add a comment (plain text)'",
        "the comments box",
    )
    focus.assert_visible("the comments box")
    page.keyboard.type("Typed without a mouse.")
    post = page.get_by_role("button", name="Post")
    tab_to(page, "el.tagName === 'BUTTON' && el.innerText.trim() === 'Post'", "the Post button")
    page.keyboard.press("Enter")
    wait_for_run(page)
    page.locator('[data-testid="stMain"]').get_by_text("Typed without a mouse.").first.wait_for()
    assert post.count() == 1

    # The exercise editor's own path (one Tab in, Enter, Tab indents, Esc, Tab on to the buttons) is
    # test_workspace.py's test_one_tab_reaches_the_code_and_the_keyboard_gets_out.

    assert not page.console_log.errors, page.console_log.errors
