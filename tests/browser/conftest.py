"""Drive the real app in headless Chromium (Debian's package) through Playwright.

``app_url`` starts ``streamlit run app.py`` on a free localhost port with a temporary database
and a known instructor password, and waits for ``/_stcore/health``. Each test gets a fresh
browser context; its console errors are collected, and a screenshot is saved to
``artifacts/browser/<test>.png`` (ignored by git) whatever the outcome: of the whole page when the
test failed, of what was in view when it passed (growing a tall page to its height costs seconds).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.browser.app_driver import full_page_screenshot
from tests.conftest import ROOT, require_system_part

# Debian's full Chromium. Its headless shell (chromium-headless-shell) once took a fifth less CPU; with
# today's flags it took as much on test_workspace (53-60 s of machine CPU against 54-62 s, run by run).
# Its hang in a wait for "networkidle" was Playwright's stall, which app_driver.wait_for_network_idle
# gets out of.
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts" / "browser"
INSTRUCTOR_PASSWORD = "correct horse battery staple"
APP_LOG_LINES = 80  # of the shared app's log in a failed test's report
# The lab's live quick run in the app under test: two cheap models a few steps (poslab/experiments/config.py).
LAB_QUICK_RUN = {"POSLAB_LAB_QUICK_STEPS": "10", "POSLAB_LAB_QUICK_ENCODINGS": "learned alibi"}
# Playwright passes these in its own --disable-features (1.65.2's list). Chromium reads one
# --disable-features, the last, so ours repeats Playwright's (test_chromium_args.py checks it against
# the installed Playwright).
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
]
# Each new browser context started the address bar's two popups, WebUI pages in a renderer of their
# own that a headless browser never shows: about 1 s of CPU a context.
OMNIBOX_POPUPS = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]
# A test's page lives seconds, in a context of its own (no code cache shared): V8's optimizing compiler
# (TurboFan) spent more than its code saved. Without it, test_workspace, test_flows and test_new_lessons
# took 134, 126, 125 and 149 s of machine CPU (134 on average) against 129 to 161 s (147 on average, eight
# runs) with it; the tour, one page for minutes, took as much either way (82 to 86 s).
V8_FLAGS = "--js-flags=--no-opt"
# The machine has no internet: keep Chromium from trying to reach it.
CHROMIUM_ARGS = [
    V8_FLAGS,
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-features=" + ",".join([*PLAYWRIGHT_DISABLED_FEATURES, *OMNIBOX_POPUPS]),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer {url}/_stcore/health within {seconds} s")


@pytest.fixture(scope="session")
def playwright_browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    require_system_part(sync_playwright is not None, "the Python package playwright is not installed")
    require_system_part(
        Path(CHROMIUM).exists() and shutil.which("chromium") is not None,
        f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)",
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@contextmanager
def running_app(folder: Path, env: dict[str, str], *arguments: str, port: int | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a loopback port (a free one unless given) with ``env`` over this
    environment; yields its URL once it is healthy, and stops it (its log is ``folder/streamlit.log``)."""
    port = port or _free_port()
    url = f"http://127.0.0.1:{port}"
    with (folder / "streamlit.log").open("wb") as log:
        process = subprocess.Popen(
            [
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
                *arguments,
            ],
            cwd=ROOT,
            env=os.environ | env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_healthy(url, process, seconds=90)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def app_folder(tmp_path_factory) -> Path:
    """The shared app's store and log (``streamlit.log``), whose end a failed test's report shows."""
    return tmp_path_factory.mktemp("poslab-browser")


@pytest.fixture(scope="session")
def app_url(app_folder):
    env = {
        "POSLAB_DB_URL": f"sqlite:///{app_folder / 'browser.db'}",
        "POSLAB_DATA_DIR": str(app_folder),
        "POSLAB_INSTRUCTOR_PASSWORD": INSTRUCTOR_PASSWORD,
        # The browser tests hand in one thing at a time: one judge warms up on half the CPU the
        # default (one per core) takes, beside the pages under test. bench_browser.py sets the default.
        "POSLAB_GRADER_WORKERS": os.environ.get("POSLAB_GRADER_WORKERS", "1"),
        **LAB_QUICK_RUN,
        # One test process starts this app (tests/parallel.py), and only test_workspace hands anything
        # in: the judge starts at its first submission, not beside the tour's pages. The default
        # (with the server) is the OIDC test's app's.
        "POSLAB_GRADER_START": "on_demand",
    }
    with running_app(app_folder, env) as url:
        yield url


class ConsoleLog:
    """Console errors and failed requests of one page, less the outside world's refusals."""

    def __init__(self, app_url: str) -> None:
        self.app_url = app_url
        self.errors: list[str] = []

    def on_console(self, message) -> None:
        url = message.location.get("url", "")
        if message.type == "error" and self._is_ours(url) and not self._base_path_probe(url):
            self.errors.append(f"{message.text} ({url})")

    def on_page_error(self, error) -> None:
        self.errors.append(f"uncaught: {error}")

    def _base_path_probe(self, url: str) -> bool:
        # After a reload on a page's own address (/exercise), Streamlit's frontend first looks for
        # its server under that path (/exercise/_stcore/health), gets a 404, then finds it at /.
        path = url.removeprefix(self.app_url).lstrip("/")
        return "/" in path and path.split("/", 1)[1].split("?")[0] in ("_stcore/health", "_stcore/host-config")

    def _is_ours(self, url: str) -> bool:
        # Requests to other hosts fail here by design (no internet); they are not the app's errors.
        return url == "" or url.startswith(self.app_url)


def watched_page(browser, app_url: str, width: int = 1400, color_scheme: str = "light", timezone_id: str = "UTC"):
    """A page in a fresh context whose ``console_log`` collects its console errors; returns both.

    ``color_scheme`` is the browser's preference, which picks the app's light or dark theme;
    ``timezone_id`` its time zone, the one the app shows times in (UTC unless a test says otherwise)."""
    context = browser.new_context(
        viewport={"width": width, "height": 1000}, color_scheme=color_scheme, timezone_id=timezone_id
    )
    page = context.new_page()
    console = ConsoleLog(app_url)
    page.on("console", console.on_console)
    page.on("pageerror", console.on_page_error)
    page.console_log = console
    return context, page


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test, for the ``page`` fixture to know how the test went; a
    failed phase's report ends with the shared app's log (a CI run keeps nothing else of it)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    folder = item.funcargs.get("app_folder") if hasattr(item, "funcargs") else None
    if report.failed and folder is not None and (folder / "streamlit.log").exists():
        tail = (folder / "streamlit.log").read_text(errors="replace").splitlines()[-APP_LOG_LINES:]
        report.sections.append(("the shared app's log, its end", "\n".join(tail)))
    return report


@pytest.fixture
def page(playwright_browser, app_url, request):
    context, page = watched_page(playwright_browser, app_url)
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = str(ARTIFACTS / f"{request.node.name}.png")
    try:
        # The whole page (grown to its content, redrawn) where a test failed; what was in view otherwise.
        report = getattr(request.node, "report_call", None)
        if report is None or report.failed:
            full_page_screenshot(page, path)
        else:
            page.screenshot(path=path)
    finally:
        context.close()


@pytest.fixture(scope="session")
def page_tour(playwright_browser, app_url):
    """Every page visited once (``tests/browser/tour.py``), for the tests that judge every page."""
    from tests.browser.tour import walk

    context, page = watched_page(playwright_browser, app_url)
    try:
        yield walk(page, app_url, "Ada Lovelace")
    finally:
        context.close()
