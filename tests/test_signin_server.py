"""The real server: ``streamlit run app.py`` with a roster, its sign-in route and its cookie.

A personal link, over HTTP as a browser follows it: the GET names the student and changes nothing;
a POST from another origin is refused; the POST from the page signs the browser in (an HttpOnly,
SameSite=Lax cookie) and redirects to the app without the token. Sessions over Streamlit's own
protocol (``benchmarks/streamlit_client.py``) then carry that cookie, as a browser's websocket
does: signed in, across a reload; a bad link comes back with a sentence. An unreadable
``POSLAB_ROSTER`` stops the server. (That the judges start with the server, before any page, is
checked by ``tests/test_listening_sockets.py``.)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from benchmarks.roster_signin import email, sign_in, write_roster
from benchmarks.server_watch import AppServer, free_port
from benchmarks.streamlit_client import ProtocolSession
from poslab.signin import COOKIE, link_url
from poslab.store import Store
from tests.conftest import ROOT

SECURE_COOKIE = f"__Host-{COOKIE}"  # written out, not imported: what a browser requires of it under HTTPS
ON_DEMAND = {"POSLAB_GRADER_START": "on_demand"}  # these tests grade nothing: no judges to start


class _Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def answer(url: str, method: str = "GET", headers: dict | None = None):
    """The response itself (a redirect is not followed): status, headers, body."""
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.build_opener(_Keep).open(request, timeout=30) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


@pytest.fixture(scope="module")
def roster_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("roster")
    roster = write_roster(folder / "roster.csv", ["ada", "bob"])
    # Loopback is the trusted proxy: a request saying X-Forwarded-Proto https is one HAProxy served over HTTPS.
    env = ON_DEMAND | {"POSLAB_ROSTER": str(roster), "POSLAB_TRUSTED_PROXIES": "127.0.0.1"}
    server = AppServer.start(ROOT, env=env)
    try:
        yield server, Store(f"sqlite:///{server.folder / 'store.db'}")
    finally:
        server.stop()


def run_apart(coroutine):
    """``asyncio.run`` in a thread of its own: the browser tests' Playwright may hold this thread's loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def sidebar_lines(run) -> list[str]:
    return [
        text
        for text in run.texts
        if text.startswith(
            ("Signed in as", "Studying as", "Open the personal", "This class signs in", "That sign-in link")
        )
    ]


def test_a_link_signs_the_browser_in_with_a_cookie_and_leaves_the_address_bar(roster_app):
    server, store = roster_app
    token = store.issue_links([email("ada")], timedelta(days=1))[email("ada")]
    url = link_url(server.url, token)
    status, headers, body = answer(url)
    assert status == 200 and "ada@class.test" in body and '<form method="post">' in body
    assert headers.get("Set-Cookie") is None and headers["Cache-Control"] == "no-store"
    assert store.roster_members()[0].link_used is None  # looking at the page signs nobody in
    status, _, _ = answer(url, "POST", {"Origin": "https://elsewhere.example"})
    assert status == 403  # another site cannot sign this browser in as someone
    status, headers, _ = answer(url, "POST", {"Origin": server.url})
    assert status == 303 and headers["Location"] == "/" and token not in headers["Location"]
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Max-Age=2592000" in cookie and token not in cookie  # 30 days; the cookie is the sign-in's own id

    async def tabs() -> tuple[list[str], list[str]]:
        first, run = await ProtocolSession.open(server.url, "", "rope", cookie=cookie.split(";")[0])
        await first.close()
        reload, again = await ProtocolSession.open(server.url, "", "progress", cookie=cookie.split(";")[0])
        await reload.close()
        return sidebar_lines(run), sidebar_lines(again)

    first, reloaded = run_apart(tabs())
    assert first == ["Signed in as ada (ada@class.test)"] and reloaded == first
    assert store.progress(email("ada")).lesson("rope").visited  # the visit went to Ada's key


def test_a_bad_link_and_a_typed_student_are_refused_with_a_sentence(roster_app):
    server, store = roster_app
    status, headers, _ = answer(link_url(server.url, "x" * 43), "POST", {"Origin": server.url})
    assert status == 303 and headers["Location"] == "/?signin=unknown" and headers.get("Set-Cookie") is None

    async def refused() -> tuple[list[str], list[str]]:
        bad, run = await ProtocolSession.open(server.url, "", "rope", params={"signin": "unknown"})
        await bad.close()
        typed, other = await ProtocolSession.open(server.url, email("bob"), "rope")  # ?student=bob@class.test
        await typed.close()
        return sidebar_lines(run), sidebar_lines(other)

    bad, typed = run_apart(refused())
    assert bad[0].startswith("That sign-in link is not valid") and not any(line.startswith("Signed") for line in bad)
    assert typed[0].startswith("This class signs in with personal links") and "Signed in as" not in " ".join(typed)
    assert email("bob") not in store.students()


def test_under_https_the_cookie_is_host_bound_and_secure_and_the_origin_is_the_forwarded_one(roster_app):
    server, store = roster_app
    url = link_url(server.url, store.issue_links([email("bob")], timedelta(days=1))[email("bob")])
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "class.example"}
    status, _, _ = answer(url, "POST", proxied | {"Origin": server.url})  # the proxy's origin is https://class.example
    assert status == 403
    status, _, _ = answer(url, "POST", proxied | {"Origin": "https://class.example:8443"})  # another port
    assert status == 403
    status, headers, _ = answer(url, "POST", proxied | {"Origin": "https://class.example"})
    cookie = headers["Set-Cookie"]
    assert status == 303 and cookie.startswith(f"{SECURE_COOKIE}=") and "Secure" in cookie and "Path=/" in cookie


def test_the_benchmarks_sign_in_is_the_browsers(roster_app):
    server, store = roster_app
    cookie = sign_in(server.url, store.issue_links([email("bob")], timedelta(days=1))[email("bob")])
    assert cookie.startswith(f"{COOKIE}=")


def test_an_unreadable_roster_stops_the_server_with_a_sentence(tmp_path):
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
    ]
    env = {
        **os.environ,
        **ON_DEMAND,
        "POSLAB_ROSTER": str(tmp_path / "missing.csv"),
        "POSLAB_DATA_DIR": str(tmp_path),
        "POSLAB_DB_URL": f"sqlite:///{tmp_path / 'store.db'}",
    }
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode != 0
    assert (
        "POSLAB_ROSTER" in finished.stderr + finished.stdout and "cannot be read" in finished.stderr + finished.stdout
    )
