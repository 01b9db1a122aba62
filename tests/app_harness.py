"""Driving the whole app (app.py and its sidebar) in AppTest; each test has its own store (tests/conftest.py).

``open_app`` starts a browser session on Home, ``go`` switches page as a click in the sidebar
would; every run goes through app.py, as on a real server.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 120  # long enough for a grading in a worker process on a busy 2-core machine


def open_app(student: str | None = None) -> AppTest:
    """A new browser session; ``student`` arrives as ``?student=`` as after a reload."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if student is not None:
        at.query_params["student"] = student
    at.run()
    assert not at.exception, at.exception
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def button(block, label: str):
    """The one button with this label in ``block`` (an AppTest or one of its parts)."""
    found = [item for item in block.button if item.label == label]
    assert len(found) == 1, f"expected one button {label!r}, found {[item.label for item in block.button]}"
    return found[0]


def sign_in(at: AppTest, name: str) -> AppTest:
    at.sidebar.text_input[0].input(name)
    button(at.sidebar, "Start").click().run()
    assert not at.exception, at.exception
    return at


def texts(block) -> list[str]:
    return [item.value for item in block.text]


def progress_texts(block) -> list[str]:
    return [item.proto.text for item in block.get("progress")]
