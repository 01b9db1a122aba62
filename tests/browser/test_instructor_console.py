"""The Instructor console in Chromium with a roster of 40 (six with activity): the unlock lasts
across a reload (an HttpOnly pass cookie, not the password), one student's page opens at its own
address and a browser without the pass gets the password form there, the class table's CSV has 40
rows, and screenshots of the page at 1,400 and 800 px (saved under /tmp and artifacts/browser)."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

from poslab.instructor_pass import PASS_COOKIE
from poslab.store import Store
from tests.browser.app_driver import full_page_screenshot, wait_for_run
from tests.browser.conftest import ARTIFACTS, INSTRUCTOR_PASSWORD, running_app
from tests.browser.test_accessibility import unlock_instructor
from tests.console_seed import CLASS_SIZE, key, seed_class


@pytest.fixture(scope="module")
def console_app(tmp_path_factory, playwright_browser):
    folder = tmp_path_factory.mktemp("console-app")
    db_url = f"sqlite:///{folder / 'store.db'}"
    seed_class(Store(db_url))
    env = {
        "POSLAB_DB_URL": db_url,
        "POSLAB_DATA_DIR": str(folder),
        "POSLAB_GRADER_START": "on_demand",
        "POSLAB_INSTRUCTOR_PASSWORD": INSTRUCTOR_PASSWORD,
    }
    with running_app(folder, env) as url:
        yield url


def open_instructor(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="Instructor").first.wait_for(timeout=60_000)
    wait_for_run(page)


def screenshot(page, name: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    page.wait_for_timeout(400)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    full_page_screenshot(page, str(ARTIFACTS / name))
    shutil.copy(ARTIFACTS / name, f"/tmp/{name}")


def test_the_unlock_lasts_across_a_reload_and_a_student_page_has_its_own_address(playwright_browser, console_app):
    context = playwright_browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    try:
        page = context.new_page()
        open_instructor(page, f"{console_app}/instructor")
        unlock_instructor(page)
        page.wait_for_timeout(500)  # the page's script hands the ticket over for the pass
        cookie = next(item for item in context.cookies() if item["name"] == PASS_COOKIE)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] == -1  # session cookie
        assert INSTRUCTOR_PASSWORD not in cookie["value"] and INSTRUCTOR_PASSWORD not in page.url

        page.reload()
        page.get_by_role("button", name="Lock this page").wait_for(timeout=60_000)
        assert not page.get_by_label("Instructor password", exact=True).count()
        with page.expect_download() as download:
            page.get_by_role("button", name="Download the class table (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
        assert len(rows) == CLASS_SIZE and rows[0]["key"] == key(1)
        screenshot(page, "instructor_console_1400.png", 1400)
        screenshot(page, "instructor_console_800.png", 800)

        page.set_viewport_size({"width": 1400, "height": 1000})
        open_instructor(page, f"{console_app}/instructor?student_key={key(1)}")
        page.get_by_role("heading", name=f"Student 01 ({key(1)})").wait_for(timeout=60_000)
        page.get_by_text("Changes since the attempt before").first.wait_for()
        screenshot(page, "instructor_student_1400.png", 1400)

        stranger = playwright_browser.new_context(viewport={"width": 1400, "height": 1000})
        other = stranger.new_page()
        open_instructor(other, f"{console_app}/instructor?student_key={key(1)}")
        other.get_by_label("Instructor password", exact=True).wait_for()
        assert not other.get_by_text(key(1)).count()
        stranger.close()

        page.get_by_role("button", name="Lock this page").click()
        wait_for_run(page)
        page.wait_for_timeout(500)
        assert PASS_COOKIE not in {item["name"] for item in context.cookies()}
        page.reload()
        page.get_by_label("Instructor password", exact=True).wait_for(timeout=60_000)
    finally:
        context.close()
