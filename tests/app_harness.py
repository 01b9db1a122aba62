"""Driving the whole app (app.py and its sidebar) in AppTest; each test has its own store (tests/conftest.py).

``open_app`` starts a browser session on Home, ``go`` switches page as a click in the sidebar
would; every run goes through app.py, as on a real server.
"""

from __future__ import annotations

import json
import os

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")
# app.py starts the grading service (a Dask cluster) at its first run; in AppTest every test has its
# own store and would start its own. Tests that grade start it when they submit (or stand one in).
os.environ.setdefault("POSLAB_GRADER_START", "on_demand")
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


NUMBERS = "The numbers behind this chart"  # the expander under a lesson chart


def chart_titles(at: AppTest) -> list[str]:
    """Each chart's title as one line (a long one is drawn in lines: app_pages/ui/charts.py)."""

    def text(title) -> str:
        title = title.get("text") if isinstance(title, dict) else title
        return " ".join(title) if isinstance(title, list) else str(title)

    return [text(json.loads(chart.proto.spec).get("title")) for chart in at.get("vega_lite_chart")]


def metrics(at: AppTest) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def numbers(at: AppTest, index: int):
    """The table one click below chart ``index`` (in page order)."""
    return [expander for expander in at.expander if expander.label == NUMBERS][index].dataframe[0].value


def browser_signed_in(monkeypatch, store, key: str) -> str:
    """The browser of the tests to come signed in by ``key``'s personal link (issued and used in the
    store): AppTest sends no cookies, so the frame's cookie reader answers with that sign-in's id."""
    from datetime import timedelta

    from app_pages.ui import identity

    token = store.issue_links([key], timedelta(days=1))[key]
    session = store.sign_in_with_link(token, timedelta(days=1)).session
    monkeypatch.setattr(identity, "sign_in_cookie", lambda: session)
    return session
