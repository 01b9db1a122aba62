"""``bench_sessions.py --browser``: the same walk in Chromium (Playwright, Debian's chromium), for small N.

Each session is its own browser context. A page's time runs from the click on its sidebar link
(or the address, for the first) to the app's ``data-test-script-state="notRunning"`` once the
run started: the server's run plus the browser's drawing. The slider moves by one ArrowRight
on its thumb, as a keyboard user would.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import quote, urlparse

from benchmarks.streamlit_client import PageRun

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APP = '[data-testid="stApp"]'
RUNNING = f'{APP}[data-test-script-state="running"]'
NOT_RUNNING = f'{APP}[data-test-script-state="notRunning"]'


async def _finish(page, action, label: str, timeout_ms: float, path: str | None = None) -> PageRun:
    """Time ``action`` until its run has ended: the page's address (if it changes) and title are
    there, and the app is no longer running."""
    run = PageRun(label)
    start = time.perf_counter()
    try:
        await action()
        if path is not None:
            await page.wait_for_url(
                lambda url: urlparse(url).path.endswith(f"/{path}"), wait_until="commit", timeout=timeout_ms
            )
        try:  # a fast run may end before the first look: then "running" is never seen
            await page.wait_for_selector(RUNNING, timeout=1_000)
        except Exception:  # noqa: BLE001
            pass
        await page.wait_for_selector(f'{NOT_RUNNING} [data-testid="stMain"] h1', timeout=timeout_ms)
        run.seconds = time.perf_counter() - start
        run.exceptions = [text[:300] for text in await page.locator('[data-testid="stException"]').all_inner_texts()]
    except Exception as error:  # noqa: BLE001 - a timeout: the session was not served
        run.problem = f"{type(error).__name__}: {str(error)[:120]}"
    return run


async def _walk(
    browser, base_url: str, student: str, pages: list[str], slider_page: str | None, timeout_ms: float
) -> list[PageRun]:
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    runs = []
    try:
        first = f"{base_url}/{pages[0]}?student={quote(student)}"
        runs.append(await _finish(page, lambda: page.goto(first), pages[0], timeout_ms, path=pages[0]))
        for index, name in enumerate(pages):
            if index:
                link = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{name}"]').first
                runs.append(await _finish(page, link.click, name, timeout_ms, path=name))
            if name == slider_page:  # the page's first slider, one step by the keyboard
                thumb = page.locator('[data-testid="stSlider"] [tabindex="0"]').first
                await thumb.focus()
                runs.append(
                    await _finish(page, lambda thumb=thumb: thumb.press("ArrowRight"), f"{name} (slider)", timeout_ms)
                )
    finally:
        await context.close()
    return runs


async def _run(base_url: str, args) -> tuple[list[list[PageRun]], float]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            await _walk(browser, base_url, "bench-alone", args.pages, args.slider_page, args.timeout * 1000)
            start = time.perf_counter()
            walks = await asyncio.gather(
                *(
                    _walk(browser, base_url, f"browser-{index:03d}", args.pages, args.slider_page, args.timeout * 1000)
                    for index in range(args.sessions)
                )
            )
            return list(walks), time.perf_counter() - start
        finally:
            await browser.close()


def run_browsers(base_url: str, args, watch) -> dict:
    from benchmarks.bench_sessions import page_table, print_table

    before = watch.snapshot("before")
    watch.start_sampling()
    walks, wall = asyncio.run(_run(base_url, args))
    during = watch.stop_sampling()
    after = watch.snapshot("after")
    rows = page_table(walks)
    print_table(f"{args.sessions} Chromium sessions at once (click to the end of the run, drawing included)", rows)
    print(f"\n  wall time for all: {wall:.1f} s")
    watch.print_resources(before, during, after)
    return {"browser": rows, "wall_seconds": wall, "server": {"before": before, "during": during, "after": after}}
