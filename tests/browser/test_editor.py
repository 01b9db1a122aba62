"""The code editor as a student sees it, in the app's light and in its dark theme: Python in colours, a
visible selection, and every line number level with its own line of code after a click and an edit,
after the autosave's resize and after scrolling.

Measured in Chromium from computed styles and boxes, never from a theme's name: a token is coloured
when its computed colour differs from the plain text's, and a line number N is level with line N when
the code drawn across from it is line N of the editor's text (Ace's public ``session.getLine``) and
their boxes' tops agree to a pixel.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.app_driver import full_page_screenshot
from tests.browser.conftest import ARTIFACTS, watched_page
from tests.browser.test_workspace import draft_saved_at, editor_frame, open_rope, wait_for_draft_saved

TYPED = '\n\ndef shifted(x):\n    label = "moved"  # one line more\n    return x + 1\n'
# Enough lines to take the editor past its 60 (app_pages.ui.exercise.editor_look.MAX_LINES): Ace scrolls inside.
LONG_TAIL = "".join(f"\ncheck_{number} = {number}  # line added to scroll" for number in range(40))

LOOK_JS = """() => {
    const editor = document.querySelector('.ace_editor');
    const colour = selector => [...document.querySelectorAll(selector)].map(el => getComputedStyle(el).color);
    const selection = document.querySelector('.ace_marker-layer .ace_selection');
    return {dark: editor.classList.contains('ace_dark'), plain: getComputedStyle(editor).color,
            background: getComputedStyle(editor).backgroundColor,
            keyword: colour('.ace_keyword'), string: colour('.ace_string'), comment: colour('.ace_comment'),
            selection: selection ? getComputedStyle(selection).backgroundColor : null};
}"""

# For each line number drawn in the gutter: the code drawn across from it, and both boxes' tops.
LEVEL_JS = """() => {
    const session = document.querySelector('.ace_editor').env.editor.session;
    const view = document.querySelector('.ace_scroller').getBoundingClientRect();
    const lines = [...document.querySelectorAll('.ace_text-layer .ace_line')];
    return [...document.querySelectorAll('.ace_gutter-cell')].map(cell => {
        const box = cell.getBoundingClientRect(), middle = box.top + box.height / 2;
        if (middle < view.top || middle > view.bottom) return null;  // drawn outside the view: clipped
        const number = Number(cell.textContent.trim());
        const line = lines.find(el => { const r = el.getBoundingClientRect(); return r.top <= middle && middle < r.bottom; });
        return {number, cellTop: box.top, lineTop: line ? line.getBoundingClientRect().top : null,
                drawn: line ? line.textContent : null, expected: session.getLine(number - 1)};
    }).filter(Boolean);
}"""


def channels(css_colour: str) -> tuple[float, ...]:
    """(r, g, b, alpha) of a computed ``rgb(...)``/``rgba(...)`` colour."""
    values = [float(value) for value in re.findall(r"[\d.]+", css_colour)]
    return tuple(values[:3] + [values[3] if len(values) > 3 else 1.0])


def relative_luminance(css_colour: str) -> float:
    def linear(channel: float) -> float:
        channel /= 255
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    red, green, blue, _ = channels(css_colour)
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def clean(text: str | None) -> str | None:
    return None if text is None else text.replace("\u00a0", " ").rstrip()


def level_problems(frame, moment: str) -> list[str]:
    """Each line number that is not level with its own line; fails when too few lines were compared."""
    rows = frame.evaluate(LEVEL_JS)
    compared = [row for row in rows if clean(row["expected"])]
    assert len(compared) >= 10, f"{moment}: only {len(compared)} numbered lines with code to compare: {rows[:3]}"
    return [
        f"{moment}: line number {row['number']} (top {row['cellTop']:.1f}) faces {clean(row['drawn'])!r} "
        f"(top {row['lineTop']}), not line {row['number']} {clean(row['expected'])!r}"
        for row in rows
        if row["lineTop"] is None
        or abs(row["cellTop"] - row["lineTop"]) > 1
        or clean(row["drawn"]) != clean(row["expected"])
    ]


def wait_for_save(page, before: str | None) -> None:
    wait_for_draft_saved(page, before)
    page.wait_for_timeout(500)  # the component reports its new height; Streamlit resizes the frame


@pytest.fixture(params=["light", "dark"])
def themed_page(request, playwright_browser, app_url):
    context, page = watched_page(playwright_browser, app_url, color_scheme=request.param)
    page.color_scheme = request.param
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        full_page_screenshot(page, str(ARTIFACTS / f"editor_{request.param}.png"))
    finally:
        context.close()


def test_the_editor_colours_python_shows_the_selection_and_keeps_its_line_numbers_level(themed_page, app_url):
    page, scheme = themed_page, themed_page.color_scheme
    open_rope(page, app_url, student=f"Ada Editor {scheme.title()}")
    app_background = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )
    assert (relative_luminance(app_background) < 0.2) == (scheme == "dark"), (scheme, app_background)
    editor = editor_frame(page)
    frame = next(frame for frame in page.frames if "code_editor" in frame.url)

    editor.locator(".ace_content").click()  # a click focuses the code: once, it scrolled it under the gutter
    page.keyboard.press("Control+End")
    page.keyboard.type(TYPED)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Shift+ArrowUp")  # select a line and a bit
    page.keyboard.press("Shift+End")
    page.wait_for_timeout(300)

    look = frame.evaluate(LOOK_JS)
    assert look["dark"] == (scheme == "dark"), f"the editor's theme is not the app's {scheme} one: {look}"
    for token in ("keyword", "string", "comment"):
        assert look[token], f"no {token} token drawn: {look}"
        plain_coloured = [colour for colour in look[token] if colour == look["plain"]]
        assert not plain_coloured, f"{scheme}: {token} tokens are drawn in the plain text's colour {look['plain']}"
    assert look["selection"] is not None, "no selection drawn"
    assert channels(look["selection"])[3] > 0, f"{scheme}: the selection is transparent ({look['selection']})"
    assert contrast(look["selection"], look["background"]) >= 1.3, (
        f"{scheme}: the selection {look['selection']} is hard to tell from the background {look['background']}"
    )

    problems = level_problems(frame, "after the click and the edit")
    wait_for_save(page, None)
    problems += level_problems(frame, "after the autosave's resize")
    saved = draft_saved_at(page)
    page.keyboard.press("Control+End")
    page.keyboard.insert_text(LONG_TAIL)  # as a paste: past the editor's height, so Ace scrolls
    wait_for_save(page, saved)
    problems += level_problems(frame, "after a long paste and its save")
    box = page.locator('iframe[title*="code_editor"]').bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 300))
    page.mouse.wheel(0, -600)  # Ace scrolls its code up, and the page around it
    page.wait_for_timeout(500)
    problems += level_problems(frame, "after scrolling")
    assert not problems, "\n".join(problems[:10])
    assert not page.console_log.errors, page.console_log.errors
