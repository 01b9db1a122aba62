"""Small verbs for driving a Streamlit page in Playwright: open, wait for a run, read what drew."""

from __future__ import annotations

from urllib.parse import urlparse

RUN_FINISHED = '[data-testid="stApp"][data-test-script-state="notRunning"]'


# The frontend marks a rerun it asked for at once ("rerunRequested"), before the server starts it.
RUN_BEGUN_JS = """() => document.querySelector('[data-testid="stApp"]')
    ?.getAttribute('data-test-script-state') !== 'notRunning'"""
RUN_BEGIN_MS = 150  # an action that starts a run has shown it by then


def wait_for_run(page, timeout_ms: float = 60_000) -> None:
    """Wait until the script run the last action started has finished and the page is quiet."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(RUN_BEGUN_JS, timeout=RUN_BEGIN_MS)
    except PlaywrightTimeout:
        pass  # no run began: an action that starts none, or a run over before a look saw it
    page.wait_for_selector(RUN_FINISHED, timeout=timeout_ms)
    wait_for_network_idle(page)


# Playwright (1.65) can lose a frame's "networkidle" for good: a request of the frame, once the event
# has fired, clears the frame's own idleness without clearing the event, and its end then starts no
# idle timer; the next recalculation (a child frame's event or removal: the code editor's iframe
# going with a client-side page change) drops the event, and nothing restores it until the frame
# makes another request. So a wait that sees no idleness within this long makes one.
NETWORK_IDLE_STALL_MS = 2_000
RESTART_IDLE_TIMER_JS = "() => fetch('/_stcore/health').then(() => null, () => null)"


def wait_for_network_idle(page, timeout_ms: float = 30_000) -> None:
    """Playwright's "networkidle" (no request for 500 ms), with the way out of its stall above."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_STALL_MS)
    except PlaywrightTimeout:
        page.evaluate(RESTART_IDLE_TIMER_JS)
        page.wait_for_load_state("networkidle", timeout=timeout_ms)


def click_until_shown(page, button, text: str, tries: int = 3, timeout_ms: float = 10_000) -> None:
    """Click ``button`` until ``text`` shows, at most ``tries`` times. Streamlit now and then drops a
    click with no run at all (the button visible, the script idle, nothing drawn: 2 runs in 9 of
    test_workspace's load flow); a student clicks again, and so does this, while the button is there."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    shown = page.get_by_text(text).first
    for attempt in range(1, tries + 1):
        if button.count():
            button.click()
        try:
            shown.wait_for(timeout=timeout_ms)
            return
        except PlaywrightTimeout:
            if attempt == tries:
                raise
            wait_for_run(page)


def open_app(page, app_url: str) -> None:
    page.goto(app_url + "/")
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)


def expand_sidebar_nav(page) -> None:
    """Show every page link: Streamlit folds a long navigation behind "View N more"."""
    more = page.locator('[data-testid="stSidebarNavViewButton"]')
    if more.count() and "more" in more.first.inner_text().lower():
        more.first.click()


def go_to(page, title: str) -> None:
    """Click the sidebar link with this title, as a student would."""
    expand_sidebar_nav(page)
    link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first
    target = link.get_attribute("href")
    link.click()
    # A rerun may start later than any fixed pause: wait for the new page's address first, so the
    # checks that follow never look at the page being left.
    target_path = urlparse(target).path if target else None
    if target_path and target_path != urlparse(page.url).path:
        # Compare paths: the app adds ?student=... to every address once a name is entered.
        page.wait_for_url(lambda url: urlparse(url).path == target_path, wait_until="commit", timeout=60_000)
    wait_for_run(page)


def exception_boxes(page) -> list[str]:
    return [box.inner_text() for box in page.locator('[data-testid="stException"]').all()]


def chart_report(page) -> list[dict]:
    """For every Vega chart on the page: how many SVG marks it drew, and painted canvas pixels."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map((chart, index) => {
            const marks = chart.querySelectorAll('svg .mark-rect path, svg .mark-line path, svg .mark-symbol path,'
                + ' svg .mark-area path, svg .mark-rule line, svg .mark-text text, svg .mark-arc path, svg g.mark-group path').length;
            let painted = 0;
            for (const canvas of chart.querySelectorAll('canvas')) {
                const context = canvas.getContext('2d');
                if (!context || canvas.width === 0 || canvas.height === 0) continue;
                const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
                for (let i = 3; i < pixels.length; i += 4) { if (pixels[i] !== 0) painted++; }
            }
            return {index, marks, painted};
        })"""
    )


def wait_for_charts(page, timeout_ms: float = 15_000, minimum: int = 0) -> list[dict]:
    """Poll until at least ``minimum`` charts are on the page and every one has drawn (Vega renders
    after the script run ends, elements mount one by one); return the last report."""
    deadline = timeout_ms / 200
    report = chart_report(page)
    while deadline > 0 and (
        len(report) < minimum or any(chart["marks"] == 0 and chart["painted"] == 0 for chart in report)
    ):
        page.wait_for_timeout(200)
        deadline -= 1
        report = chart_report(page)
    return report


def grow_to_content(page, max_height: int = 16_000) -> None:
    """Grow the viewport to the page's content, so that all of it is in view (Streamlit scrolls inside
    its own container, which Playwright's ``full_page`` does not see), and let Vega redraw."""
    height = page.evaluate(
        """() => Math.max(...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"], body')]
                .map(element => element.scrollHeight))"""
    )
    width = page.viewport_size["width"] if page.viewport_size else 1400
    page.set_viewport_size({"width": width, "height": min(max(height, 600) + 40, max_height)})
    page.wait_for_timeout(300)  # let Vega redraw at the new size


def full_page_screenshot(page, path: str, max_height: int = 16_000) -> None:
    """Screenshot the whole page: Streamlit scrolls inside its own container, so Playwright's
    ``full_page`` alone captures only the viewport. Grow the viewport to the content first."""
    grow_to_content(page, max_height)
    page.screenshot(path=path, full_page=True)


# For each chart: whether its drawing (Vega's <svg> or <canvas>) is as wide as the chart's box, as a
# chart drawn to the container's width ("stretch") is once Vega has drawn it at that width.
CHART_FITS_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(chart => {
    const drawing = chart.querySelector('svg.marks, canvas.marks');
    return !!drawing && Math.abs(drawing.getBoundingClientRect().width - chart.getBoundingClientRect().width) <= 2;
})"""


def set_width(page, width: int, height: int = 1000, timeout_ms: float = 10_000) -> None:
    """Resize the viewport in place (no reload, no script run) and wait until every chart that was
    drawn to its container's width is drawn to the new width (Vega redraws after the resize)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if page.viewport_size == {"width": width, "height": height}:
        return
    fitted = page.evaluate(CHART_FITS_JS)
    page.set_viewport_size({"width": width, "height": height})
    try:
        page.wait_for_function(
            f"(fitted) => ({CHART_FITS_JS})().every((fits, index) => fits || !fitted[index])",
            arg=fitted,
            polling=100,
            timeout=timeout_ms,
        )
    except PlaywrightTimeout:
        pass  # a chart that never fits is for the caller's checks to report
    page.evaluate(NEXT_FRAMES_JS)  # the layout around the redrawn charts, drawn


# Resolves once the browser has drawn two more frames: whatever a resize or a redraw changed is laid out.
NEXT_FRAMES_JS = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


CLIPPED_TITLES_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].flatMap(chart => {
    const box = chart.getBoundingClientRect();
    return [...chart.querySelectorAll('svg .role-title text')].filter(title => {
        const line = title.getBoundingClientRect();
        return line.top < box.top - 1 || line.bottom > box.bottom + 1 || line.left < box.left - 1 || line.right > box.right + 1;
    }).map(title => { const line = title.getBoundingClientRect();
        return `${JSON.stringify(title.textContent)}: its box ${Math.round(line.top - box.top)}..${Math.round(line.bottom - box.top)} px`
               + ` from the chart's top, the chart ${Math.round(box.height)} px tall`; });
})"""


def clipped_chart_titles(page) -> list[str]:
    """Every chart title (Vega's SVG title text) whose box is not inside its chart's box: cut off."""
    return page.evaluate(CLIPPED_TITLES_JS)
