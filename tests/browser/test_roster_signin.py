"""A class with a roster, in Chromium: a student's personal link signs the browser in.

The app runs as ``streamlit run app.py`` with ``POSLAB_ROSTER``. Ada opens her link: a page names
her and asks; *Sign in* lands on the app with the token gone from the address bar and an HttpOnly,
SameSite=Lax cookie in the browser; the sign-in lasts across a reload; her work is stored under
her key; ``?student=`` is refused with a sentence; *Sign out* ends it. A browser without a sign-in
reads the lessons and is told how to sign in where it would save.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from benchmarks.roster_signin import email, write_roster
from poslab.lessons import get_lesson
from poslab.signin import COOKIE, link_url
from poslab.store import Store
from tests.browser.app_driver import full_page_screenshot, go_to, wait_for_run
from tests.browser.conftest import ARTIFACTS, running_app

ADA = email("ada")
LESSON = get_lesson("position-problem")
HOW = "Open the personal sign-in link your instructor sent you"


@pytest.fixture(scope="module")
def roster_app(tmp_path_factory, playwright_browser):
    folder = tmp_path_factory.mktemp("roster-app")
    db_url = f"sqlite:///{folder / 'store.db'}"
    env = {
        "POSLAB_DB_URL": db_url,
        "POSLAB_DATA_DIR": str(folder),
        "POSLAB_GRADER_START": "on_demand",
        "POSLAB_ROSTER": str(write_roster(folder / "roster.csv", ["ada", "bob"])),
    }
    with running_app(folder, env) as url:
        yield url, Store(db_url)


@pytest.fixture
def context(playwright_browser):
    context = playwright_browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context
    context.close()


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def test_a_link_signs_in_lasts_across_a_reload_and_a_sign_out_ends_it(context, roster_app):
    app_url, store = roster_app
    token = store.issue_links([ADA], timedelta(days=1))[ADA]
    page = context.new_page()
    page.goto(link_url(app_url, token))
    page.get_by_text(f"signs this browser in as {'ada'} ({ADA})").wait_for(timeout=30_000)
    page.get_by_role("button", name="Sign in as ada").click()
    page.wait_for_url(app_url + "/", timeout=60_000)
    assert token not in page.url
    sidebar(page).get_by_text(f"Signed in as ada ({ADA})").wait_for(timeout=60_000)
    cookie = next(item for item in context.cookies() if item["name"] == COOKIE)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["value"] != token

    page.reload()
    sidebar(page).get_by_text(f"Signed in as ada ({ADA})").wait_for(timeout=60_000)
    go_to(page, LESSON.title)
    page.get_by_role("button", name="Mark lesson done").click()
    wait_for_run(page)
    assert store.progress(ADA).lesson(LESSON.id).marked_done

    page.goto(app_url + f"/progress?student={email('bob')}")
    page.get_by_text("a name typed or given in the address (?student=) is not accepted").wait_for(timeout=60_000)
    sidebar(page).get_by_text(f"Signed in as ada ({ADA})").wait_for(timeout=30_000)
    assert email("bob") not in store.students()

    sidebar(page).get_by_role("button", name="Sign out").click()
    wait_for_run(page)
    sidebar(page).get_by_text(HOW).first.wait_for(timeout=30_000)
    page.reload()  # the cookie is still in the browser, but it signs nobody in any more
    sidebar(page).get_by_text(HOW).first.wait_for(timeout=60_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    full_page_screenshot(page, str(ARTIFACTS / "roster_signed_out.png"))


def test_without_a_sign_in_the_lessons_are_read_and_saving_says_how_to_sign_in(context, roster_app):
    app_url, store = roster_app
    page = context.new_page()
    page.goto(app_url + "/" + LESSON.id)
    page.get_by_role("heading", name=LESSON.title).first.wait_for(timeout=60_000)
    wait_for_run(page)
    page.get_by_text(f"{HOW} to save your progress through this lesson.").wait_for(timeout=30_000)
    page.get_by_text(f"{HOW} to comment.").wait_for(timeout=30_000)
    assert not page.get_by_role("button", name="Mark lesson done").count()
    page.goto(link_url(app_url, "not-a-real-token-but-long-enough"))
    page.get_by_text("That sign-in link is not valid").wait_for(timeout=60_000)
    wait_for_run(page)
    assert "signin=" not in page.url  # said once, then out of the address: a reload does not repeat it
