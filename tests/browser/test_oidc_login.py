"""Streamlit's login (OIDC) against a real OpenID Connect provider, in Chromium.

``oidc-provider-mock`` runs on loopback in this process: a real provider (discovery, an
authorization form, the code flow with its token and JWKS endpoints, the end-session endpoint)
that signs in whoever is typed into its form. The app runs as ``streamlit run app.py`` with a
temporary secrets file (``--secrets.files``) whose ``[auth]`` section points at that provider.

Ann clicks *Log in*, signs in at the provider and comes back: the sidebar shows her account; a
quick-check answer, a draft and a submission are stored under it (read back from the store);
``?student=someone-else`` is ignored and no name can be typed; *Log out* ends the session. Bob
then logs in and sees nothing of Ann's: no answer, the starter code, no attempt, no progress.

The app starts its grading service as a student's does (with the server), so this module also
checks that nothing it started listens beyond loopback but Streamlit's own port
(``tests/test_listening_sockets.py`` has the check and the command line's side).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass

import psutil
import pytest

from benchmarks.server_watch import metrics
from poslab.lessons import get_lesson
from poslab.store import Store
from tests.browser.app_driver import full_page_screenshot, go_to, wait_for_run
from tests.browser.conftest import ARTIFACTS, _free_port, running_app
from tests.browser.test_workspace import editor_frame, editor_text, wait_for_draft_saved
from tests.test_listening_sockets import (
    Listener,
    beyond_loopback,
    explain,
    grader_role,
    listeners,
    serving_process,
    wait_for_judges,
)

ANN, BOB = "ann@uni.edu", "bob@uni.edu"
LESSON = get_lesson("position-problem")
MARKER = "# Ann's draft, typed after logging in"
GRADED_WITHIN = 240.0  # seconds: a judge warming up on a loaded machine, then the grading


@pytest.fixture(scope="module")
def provider():
    from oidc_provider_mock import User, run_server_in_thread

    # The provider refuses plain HTTP unless told otherwise; it is the test's own, on loopback.
    previous = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        # Ann's and Bob's provider vouches for their emails: their emails are their keys.
        users = [User(sub=account, claims={"email": account, "email_verified": True}) for account in (ANN, BOB)]
        with run_server_in_thread(port=0, user_claims=users) as server:
            host, port = server.server_address[:2]
            assert host in ("127.0.0.1", "::1"), f"the provider must listen on loopback, not {host}"
            yield f"http://localhost:{port}"
    finally:
        if previous is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = previous


@pytest.fixture(scope="module")
def login_app(provider, tmp_path_factory, playwright_browser):
    folder = tmp_path_factory.mktemp("oidc-app")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    secrets_file = folder / "secrets.toml"
    secrets_file.write_text(f"""[auth]
redirect_uri = "{url}/oauth2callback"
cookie_secret = "{secrets.token_hex(32)}"
client_id = "position-lab"
client_secret = "{secrets.token_hex(16)}"
server_metadata_url = "{provider}/.well-known/openid-configuration"
""")
    db_url = f"sqlite:///{folder / 'store.db'}"
    env = {
        "POSLAB_DB_URL": db_url,
        "POSLAB_DATA_DIR": str(folder),
        "POSLAB_GRADER_WORKERS": "1",
        # As a student's app starts: said here, since tests/app_harness.py sets on_demand in this
        # process's environment for AppTest once a module that uses it has run.
        "POSLAB_GRADER_START": "startup",
    }
    with running_app(folder, env, "--secrets.files", str(secrets_file), port=port) as started:
        server = serving_process(port)
        sockets = wait_for_judges(server)  # its judges start with the server ...
        sessions = metrics(started).get("active_sessions", 0)  # ... before any page is opened
        yield LoginApp(started, Store(db_url), server, sockets, sessions)


@dataclass(frozen=True)
class LoginApp:
    url: str
    store: Store
    server: psutil.Process  # the app's process: its grading service's processes are its children
    sockets_at_start: set[Listener]  # listening once its judge listened
    sessions_at_start: float  # Streamlit's active sessions then


@pytest.fixture
def page(playwright_browser):
    context = playwright_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        full_page_screenshot(page, str(ARTIFACTS / "oidc_login.png"))
    finally:
        context.close()


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def log_in(page, app_url: str, account: str) -> None:
    """*Log in* in the sidebar, the provider's form, and back to the app signed in. The app is opened
    only if the page is not on it signed out already (after a log-out it is: no second load)."""
    log_in_button = sidebar(page).get_by_role("button", name="Log in")
    if not log_in_button.count():
        page.goto(app_url + "/")
    log_in_button.click()
    page.wait_for_url(re.compile(r".*/oauth2/authorize.*"), timeout=60_000)
    page.get_by_placeholder("sub").fill(account)  # the provider's subject; its verified email is the same
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(lambda address: address.startswith(app_url), timeout=60_000)
    sidebar(page).get_by_text(f"Signed in as {account}").wait_for(timeout=60_000)
    wait_for_run(page)


def log_out(page, app_url: str) -> None:
    sidebar(page).get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r".*/oauth2/end_session.*"), timeout=60_000)
    page.get_by_role("button", name="End session").click()  # the provider's own confirmation
    # The provider sends the browser back to the app's callback, which sends it on to the app: loaded there.
    page.wait_for_url(lambda address: address.startswith(app_url), timeout=60_000)
    sidebar(page).get_by_role("button", name="Log in").wait_for(timeout=60_000)
    wait_for_run(page)


def answer_the_first_check(page) -> None:
    check = LESSON.checks[0]
    go_to(page, LESSON.title)
    choices = page.locator(f".st-key-qc-choice-{LESSON.id}-{check.id}")  # Streamlit's class for a keyed widget
    choices.get_by_text(check.options[check.correct_index].text, exact=True).click()
    wait_for_run(page)
    page.locator(f".st-key-qc-reveal-{LESSON.id}-{check.id}").get_by_role("button", name="Reveal").click()
    wait_for_run(page)
    page.get_by_text("Right. " + check.options[check.correct_index].feedback).first.wait_for(timeout=30_000)


def open_rope(page, app_url: str) -> None:
    page.goto(app_url + "/exercise?exercise=rope")  # a reload: the login is the browser's, not the tab's
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    editor_frame(page).locator(".ace_content").wait_for(timeout=30_000)


def wait_for_graded_attempt(store: Store, student: str) -> None:
    deadline = time.monotonic() + GRADED_WITHIN
    while time.monotonic() < deadline:
        if store.attempt_details(student, "rope"):
            return
        time.sleep(0.2)
    pytest.fail(f"{student}'s submission was not graded within {GRADED_WITHIN:g} s: {store.grading_jobs(student)}")


def test_log_in_at_the_provider_work_log_out_and_the_next_account_sees_nothing_of_it(page, login_app):
    app_url, store = login_app.url, login_app.store
    log_in(page, app_url, ANN)
    assert not sidebar(page).get_by_role("textbox", name="Your name").count()  # no name can be typed

    answer_the_first_check(page)
    check = LESSON.checks[0]
    assert store.check_choices(ANN, LESSON.id) == {check.id: check.correct_index}

    open_rope(page, app_url)
    editor_frame(page).locator(".ace_content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(f"\n{MARKER}\n")
    wait_for_draft_saved(page, None)
    assert MARKER in store.draft(ANN, "rope").code
    page.get_by_role("button", name="Submit for grading").click()
    wait_for_run(page)
    # Under load the run the click starts may begin after wait_for_run has seen the page idle: poll for its job.
    deadline = time.monotonic() + 30
    while not store.grading_jobs(ANN) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [job.student for job in store.grading_jobs(ANN)] == [ANN]  # handed in under the account

    page.goto(app_url + "/progress?student=someone-else")  # a name in the address changes nothing
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_run(page)
    sidebar(page).get_by_text(f"Signed in as {ANN}").wait_for(timeout=30_000)
    sidebar(page).get_by_text("ignored").first.wait_for(timeout=30_000)
    assert "someone-else" not in store.students() and set(store.students()) == {ANN}

    log_out(page, app_url)
    assert not sidebar(page).get_by_text(f"Signed in as {ANN}").count()
    go_to(page, "Progress")
    page.get_by_text("Log in (in the sidebar) to see your progress.").wait_for(timeout=30_000)

    log_in(page, app_url, BOB)
    go_to(page, LESSON.title)
    assert not page.get_by_text("Right. " + check.options[check.correct_index].feedback).count()
    open_rope(page, app_url)
    assert MARKER not in editor_text(page)
    page.get_by_text("Your attempts (0)").wait_for(timeout=30_000)
    go_to(page, "Progress")
    page.get_by_text("No attempts yet").wait_for(timeout=30_000)
    assert sidebar(page).get_by_text("Course progress: 0%").count() == 1
    assert store.draft(BOB, "rope") is None and store.check_choices(BOB, LESSON.id) == {}
    # Ann's submission was graded meanwhile (the judge works while the browser goes on): under her account.
    wait_for_graded_attempt(store, ANN)
    assert MARKER in store.attempt_details(ANN, "rope")[0].code


def test_the_app_and_its_grading_service_listen_on_loopback_only(login_app):
    assert login_app.sessions_at_start == 0, "the judges waited for a page to be opened"
    found = login_app.sockets_at_start | listeners(login_app.server)
    port = int(login_app.url.rsplit(":", 1)[1])
    assert any(item.port == port for item in found), "Streamlit's own port is not among the listeners"
    assert {grader_role(item.command) for item in found} >= {"scheduler", "judge"}
    exposed = beyond_loopback(found, allowed_port=port)
    assert not exposed, explain(exposed)
