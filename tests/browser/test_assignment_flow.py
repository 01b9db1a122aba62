"""Assignments in Chromium, one app start with an assignments file and a class seeded at known
times (tests/assignment_seed.py): the Instructor page's class table for one assignment (its CSV)
and the Canvas gradebook filled from it and downloaded, checked against totals worked out by hand;
the Exercises page's deadline and Progress's due next; screenshots at 1,400 and 800 px."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

from poslab.store import Store
from tests.assignment_seed import seed_class, write_course
from tests.browser.app_driver import full_page_screenshot, wait_for_run
from tests.browser.conftest import ARTIFACTS, INSTRUCTOR_PASSWORD, running_app
from tests.browser.test_accessibility import unlock_instructor
from tests.lms_builders import CanvasStudent, canvas_gradebook

CLASS = [
    CanvasStudent("Lovelace, Ada", "101", sis_user_id="S1", sis_login_id="ada@example.edu"),
    CanvasStudent("Lei, Li", "103", sis_user_id="S3", sis_login_id="lilei"),
    CanvasStudent("Ångström, Zoë", "102", sis_user_id="S2", sis_login_id="zoe@example.edu"),
]
COLUMN = "Encodings 1 (5150)"


@pytest.fixture(scope="module")
def course_app(tmp_path_factory, playwright_browser):
    folder = tmp_path_factory.mktemp("assignments-app")
    db_url = f"sqlite:///{folder / 'store.db'}"
    seed_class(Store(db_url))
    env = {
        "POSLAB_DB_URL": db_url,
        "POSLAB_DATA_DIR": str(folder),
        "POSLAB_GRADER_START": "on_demand",
        "POSLAB_INSTRUCTOR_PASSWORD": INSTRUCTOR_PASSWORD,
        "POSLAB_ASSIGNMENTS": str(write_course(folder)),
    }
    with running_app(folder, env) as url:
        yield url


def screenshots(page, name: str) -> None:
    """The page at 1,400 and 800 px, grown to its content's height, under /tmp and the artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_function("!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(400)
        full_page_screenshot(page, str(ARTIFACTS / f"{name}_{width}.png"))
        shutil.copy(ARTIFACTS / f"{name}_{width}.png", f"/tmp/{name}_{width}.png")
    page.set_viewport_size({"width": 1400, "height": 1000})


def test_the_class_grades_for_one_assignment_and_the_filled_canvas_file(playwright_browser, course_app):
    context = playwright_browser.new_context(
        viewport={"width": 1400, "height": 1000}, accept_downloads=True, timezone_id="UTC"
    )
    try:
        page = context.new_page()
        page.goto(f"{course_app}/instructor")
        page.get_by_role("heading", name="Instructor").first.wait_for(timeout=60_000)
        wait_for_run(page)
        unlock_instructor(page)
        page.get_by_text("Encodings 1 as counted at each student's due date").wait_for(timeout=60_000)
        with page.expect_download() as download:
            page.get_by_role("button", name="Download the class table (CSV)").click()
        rows = {row["key"]: row for row in csv.DictReader(io.StringIO(download.value.path().read_text()))}
        # ada: 4 on time + rope 6 two started days late, 20 % off = 4.8; zoe: rope 5 days late, 30 % off
        # (the cap) = 4.2; 103: rope a day after the due date but within the 2-day extension, 6 + half of 4
        assert {key: float(row["total"]) for key, row in rows.items()} == {
            "103": 8.0,
            "ada@example.edu": 8.8,
            "bob@example.edu": 0.0,
            "zoe@example.edu": 4.2,
        }
        assert {key: row["status"] for key, row in rows.items() if row["status"] == "late"} == {
            "ada@example.edu": "late",
            "zoe@example.edu": "late",
        }
        assert {float(row["max"]) for row in rows.values()} == {10.0}

        page.locator('.st-key-lms-export-file input[type="file"]').set_input_files(
            files=[
                {
                    "name": "gradebook.csv",
                    "mimeType": "text/csv",
                    "buffer": canvas_gradebook(CLASS, points="100.00", assignment=COLUMN),
                }
            ]
        )
        page.get_by_role("button", name="Download the filled file (CSV)").wait_for(timeout=60_000)
        wait_for_run(page)
        with page.expect_download() as download:
            page.get_by_role("button", name="Download the filled file (CSV)").click()
        filled = list(csv.DictReader(io.StringIO(download.value.path().read_text(encoding="utf-8-sig"))))
        written = {row["ID"]: row[COLUMN] for row in filled if row["ID"] in {"101", "102", "103"}}
        assert written == {"101": "88.00", "102": "42.00", "103": "80.00"}  # out of 10, scaled to 100
        screenshots(page, "instructor_assignment")

        page.goto(f"{course_app}/exercise?exercise=rope&student=ada@example.edu")
        page.get_by_text("Encodings 1 was due 2026-03-11 05:59 UTC").wait_for(timeout=60_000)
        wait_for_run(page)
        page.get_by_text("Your attempts against the due date (2)").click()
        page.get_by_text("= 4.8, more than the on-time best 3").wait_for()
        screenshots(page, "exercise_deadline")

        page.goto(f"{course_app}/progress?student=ada@example.edu")
        page.get_by_text("Due next: Relative positions (alibi, t5), 2099-01-05 17:00 UTC").wait_for(timeout=60_000)
        wait_for_run(page)
        screenshots(page, "progress_due_next")
    finally:
        context.close()
