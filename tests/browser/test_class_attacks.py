"""A class with a roster (``POSLAB_ROSTER``) in Chromium: its sign-in links, and a student attacking
the class. One app serves both (an app start is the dearest part of a browser test); the sign-in
tests come first, before Bob has signed in, so that Bob has no activity in the store when Ada's
address names him.

* **A link signs in.** Ada opens her link: a page names her and asks; *Sign in* lands on the app
  with the token gone from the address bar and an HttpOnly, SameSite=Lax cookie in the browser;
  the sign-in lasts across a reload; her work is stored under her key; ``?student=`` is refused
  with a sentence; *Sign out* ends it. A browser without a sign-in reads the lessons and is told
  how to sign in where it would save.

* **Another port of the same host.** Ada is signed in. A page the attacker serves on another
  loopback port opens the app's websocket itself (the browser attaches Ada's SameSite=Lax cookie:
  the same *site*) and runs the Progress page over Streamlit's protocol: it must get no student's
  data, only the signed-out page.
* **A leaked link re-issued.** Ada's browser is signed in with her link; the instructor re-issues
  it: that browser is signed out at its next run.
* **Comments seen signed out.** Bob comments; a browser without a sign-in sees no comment at all,
  and a signed-in classmate sees Bob's name, never his email.
"""

from __future__ import annotations

import base64
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.roster_signin import email, write_roster
from benchmarks.streamlit_client import TEXTS
from poslab.lessons import get_lesson
from poslab.signin import COOKIE, link_url
from poslab.store import Store
from tests.browser.app_driver import full_page_screenshot, go_to, wait_for_run
from tests.browser.conftest import ARTIFACTS, running_app

ADA, BOB = email("ada"), email("bob")
SIGNED_IN = f"Signed in as ada ({ADA})"
HOW = "Open the personal sign-in link your instructor sent you"
LESSON = get_lesson("position-problem")

ATTACKER_PAGE = """<!doctype html><html><body><script>
window.frames64 = []; window.closed = false;
const socket = new WebSocket("%(socket)s", ["streamlit"]);
socket.binaryType = "arraybuffer";
socket.onopen = () => socket.send(Uint8Array.from(atob("%(rerun)s"), c => c.charCodeAt(0)));
socket.onmessage = (event) => {
  let text = ""; for (const byte of new Uint8Array(event.data)) text += String.fromCharCode(byte);
  window.frames64.push(btoa(text));
};
socket.onclose = () => { window.closed = true; };
</script></body></html>"""


@pytest.fixture(scope="module")
def roster_app(tmp_path_factory, playwright_browser):
    folder = tmp_path_factory.mktemp("attacked-app")
    db_url = f"sqlite:///{folder / 'store.db'}"
    env = {
        "POSLAB_DB_URL": db_url,
        "POSLAB_DATA_DIR": str(folder),
        "POSLAB_GRADER_START": "on_demand",
        "POSLAB_ROSTER": str(write_roster(folder / "roster.csv", ["ada", "bob", "cyd"])),
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


def sign_in(context, app_url: str, store: Store, key: str, name: str):
    page = context.new_page()
    page.goto(link_url(app_url, store.issue_links([key], timedelta(days=1))[key]))
    page.get_by_role("button", name=f"Sign in as {name}").click()
    page.wait_for_url(app_url + "/", timeout=60_000)
    sidebar(page).get_by_text(f"Signed in as {name} ({key})").wait_for(timeout=60_000)
    return page


@pytest.fixture(scope="module")
def signed_out(playwright_browser):
    """A browser that never signs in, kept for the module: the lessons test reads in it, and the comments
    test looks at a lesson there again (a rerun, not another context and page load)."""
    context = playwright_browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


@pytest.fixture(scope="module")
def ada(playwright_browser, roster_app):
    """Ada's browser, signed in with her link once (after the sign-in tests, which sign her out): the
    websocket test attacks from it and the comments test reads in it; her link is not re-issued between."""
    app_url, store = roster_app
    context = playwright_browser.new_context(viewport={"width": 1400, "height": 1000})
    yield sign_in(context, app_url, store, ADA, "ada")
    context.close()


def open_lesson(page, app_url: str) -> None:
    """The lesson's page: a click in the app if the page is on it, else its address."""
    if page.url.startswith(app_url):
        go_to(page, LESSON.title)
    else:
        page.goto(f"{app_url}/{LESSON.id}")
        page.get_by_role("heading", name=LESSON.title).first.wait_for(timeout=60_000)
        wait_for_run(page)


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
    wait_for_run(page)  # a click while the lesson's run still draws it could land on a button being replaced
    page.get_by_role("button", name="Mark lesson done").click()
    page.get_by_text("You have finished this lesson.").wait_for(timeout=60_000)
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


def test_without_a_sign_in_the_lessons_are_read_and_saving_says_how_to_sign_in(signed_out, roster_app):
    app_url, store = roster_app
    page = signed_out
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


def rerun_message(app_url: str, page: str) -> str:
    """The BackMsg the app's own page sends to run ``page``, base64 (as benchmarks/streamlit_client.py)."""
    message = BackMsg()
    message.rerun_script.page_name = page
    message.rerun_script.context_info.timezone = "UTC"
    message.rerun_script.context_info.url = f"{app_url}/{page}"
    return base64.b64encode(message.SerializeToString()).decode()


def texts_of(frames: list[str]) -> tuple[list[str], bool]:
    """What the frames wrote on the page, and whether the run finished."""
    texts, finished = [], False
    for frame in frames:
        message = ForwardMsg()
        message.ParseFromString(base64.b64decode(frame))
        kind = message.WhichOneof("type")
        finished = finished or kind == "script_finished"
        if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            field = TEXTS.get(element.WhichOneof("type"))
            if field:
                texts.append(getattr(getattr(element, element.WhichOneof("type")), field))
    return texts, finished


def serve_attacker_page(html: str) -> ThreadingHTTPServer:
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_page_on_another_port_gets_no_student_data_over_the_websocket(ada, roster_app):
    app_url, store = roster_app
    store.save_draft(ADA, "rope", "# ada's secret draft", saved_by="tab")
    socket = app_url.replace("http://", "ws://") + "/_stcore/stream"
    attacker = serve_attacker_page(ATTACKER_PAGE % {"socket": socket, "rerun": rerun_message(app_url, "progress")})
    page = ada.context.new_page()  # Ada's browser: her cookie goes with the attacker's websocket
    try:
        page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        assert attacker.server_address[1] != int(app_url.rsplit(":", 1)[1])
        texts: list[str] = []
        for _ in range(120):  # the run's end, or the socket closed
            texts, finished = texts_of(page.evaluate("window.frames64"))
            if finished or page.evaluate("window.closed"):
                break
            page.wait_for_timeout(500)
        seen = json.dumps(texts)
        assert finished, f"the attacker's run did not finish: {seen[:2000]}"
        assert HOW in seen, seen[:2000]  # the protocol worked: the signed-out page was run
        assert "Signed in as" not in seen and ADA not in seen, seen[:2000]
    finally:
        page.close()
        attacker.shutdown()


def test_reissuing_a_link_signs_out_the_browser_signed_in_with_the_old_one(context, roster_app):
    app_url, store = roster_app
    page = sign_in(context, app_url, store, BOB, "bob")
    store.issue_links([BOB], timedelta(days=1))  # the instructor's "New links for the chosen"
    page.reload()
    sidebar(page).get_by_text(HOW).first.wait_for(timeout=60_000)
    assert not sidebar(page).get_by_text("Signed in as bob").count()


def test_comments_are_for_the_class_only_and_show_names_not_emails(signed_out, ada, roster_app):
    app_url, store = roster_app
    store.add_comment(email("cyd"), LESSON.id, "Why does the sum not depend on the order?")
    open_lesson(signed_out, app_url)
    signed_out.get_by_text(f"{HOW} to comment.").wait_for(timeout=60_000)
    wait_for_run(signed_out)
    content = signed_out.content()
    assert "Why does the sum not depend" not in content and email("cyd") not in content
    page = ada
    sidebar(page).get_by_text(SIGNED_IN).wait_for(timeout=30_000)
    go_to(page, LESSON.title)
    page.get_by_text("Why does the sum not depend on the order?").wait_for(timeout=60_000)
    byline = page.get_by_text("cyd ·").first
    byline.wait_for(timeout=30_000)
    assert email("cyd") not in page.content()
