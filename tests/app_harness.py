"""Driving the whole app (app.py and its sidebar) in AppTest, against a temporary database.

Why a harness: AppTest resets ``PagesManager.uses_pages_directory`` before every run, and because
this project keeps its page scripts in a folder named ``pages/``, Streamlit then treats every run
after the first as an old-style multipage app and runs the page script alone, without app.py
(so without the sidebar). A real server runs app.py each time, because ``st.navigation`` sets the
flag to False for the process; ``app_env`` makes AppTest do the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMEOUT = 120  # long enough for a grading in a worker process on a busy 2-core machine


@pytest.fixture
def app_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh SQLite store for the app (returns its URL), no instructor password, app.py on every run."""
    url = f"sqlite:///{tmp_path / 'progress.db'}"
    monkeypatch.setenv("POSLAB_DB_URL", url)
    monkeypatch.delenv("POSLAB_INSTRUCTOR_PASSWORD", raising=False)
    monkeypatch.setenv("POSLAB_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    original_init = PagesManager.__init__

    def init_as_after_st_navigation(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init_as_after_st_navigation)
    return url


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
