"""Shared fixtures and the rule for tests that need a system part.

``lesson_page("rope")`` opens a lesson page in a fresh app session (app.py, its sidebar and this
test's own store); ``app_env`` is that store's URL, to check what the app wrote.

A test that needs Chromium, PostgreSQL or bubblewrap calls ``require_system_part``: locally it
skips with the reason, under ``CI=true`` it fails, so CI cannot pass by skipping.

``warm_grader`` is one Grader per test process for the modules that grade many small
submissions. The suite runs on two processes: ``tests/parallel.py`` says how.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

from tests import parallel

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    # The suite starts about a hundred Python processes (apps, CLI runs, judges): with
    # PYTHONDONTWRITEBYTECODE set, each compiles the project again and each test process rewrites
    # every test module's asserts (runs took 873 and 883 s of CPU so, 860 s with bytecode kept).
    # Here, before xdist starts its workers, so that they and every process they start keep what
    # was compiled once in __pycache__.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    if getattr(config, "workerinput", None) is not None:  # an xdist worker
        # Two test processes share the two cores: one torch thread each, as the grader's judges
        # take (grader/cluster.py); two each oversubscribe the cores, where torch's threads slow
        # down most (the suite's speed tests timed a correct in-process call at 0.4 s so).
        torch.set_num_threads(1)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    return parallel.make_scheduler(config, log)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_system_part(available: bool, reason: str) -> None:
    if available:
        return
    if in_ci():
        pytest.fail(f"CI=true and a required system part is missing: {reason}")
    pytest.skip(reason)


@pytest.fixture
def generator() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def warm_grader():
    """A Grader with the environment's settings and the hidden suite, shared by the modules that
    grade many small submissions: its sandbox worker (bubblewrap, torch imported) starts once per
    test process instead of once per module. Each submission still runs in a child of its own, and
    a worker that died is replaced at the next grading. As a judge's: the suite drawn and its shared calls
    planned (``grader.suite.prepare``), so that every grading makes them ahead, as in a class."""
    from grader.api import Grader
    from grader.settings import GraderSettings
    from grader.suite import prepare

    prepare()
    with Grader(GraderSettings.from_env()) as grader:
        yield grader


@pytest.fixture(scope="module")
def worker():
    """A warm bubblewrap sandbox worker for the module's tests (``SANDBOX_SETTINGS``: a short time
    limit); skips without bubblewrap, fails under CI=true."""
    from grader.sandbox import WorkerProcess
    from tests.hostile._support import SANDBOX_SETTINGS, require_bwrap

    require_bwrap()
    process = WorkerProcess(SANDBOX_SETTINGS, isolation="bwrap")
    yield process
    process.close()


@pytest.fixture(scope="session", autouse=True)
def one_component_scan() -> Iterator[None]:
    """Streamlit 1.67's AppTest scans every installed distribution for v2 component manifests at each
    run: 0.25 s of CPU per run here (about 400 distributions, none a component), about a tenth of the
    suite's CPU (989 s before, 880 s after). What is installed does not change during a test run: scanned once."""
    from streamlit.components.v2 import manifest_scanner

    with pytest.MonkeyPatch.context() as patch:
        scan = functools.cache(manifest_scanner.scan_component_manifests)
        patch.setattr(manifest_scanner, "scan_component_manifests", scan)
        yield


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own progress database and no instructor password; none touches ~/.poslab."""
    monkeypatch.setenv("POSLAB_DB_URL", f"sqlite:///{tmp_path / 'progress.db'}")
    monkeypatch.setenv("POSLAB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("POSLAB_INSTRUCTOR_PASSWORD", raising=False)


@pytest.fixture
def app_env(isolated_environment: None, tmp_path: Path) -> str:
    """The URL of this test's own store, the one the app writes to."""
    return f"sqlite:///{tmp_path / 'progress.db'}"


@pytest.fixture
def lesson_page(app_env: str) -> Callable[..., AppTest]:
    """``lesson_page(lesson_id, student=None)``: a new session opened on Home, then switched to the lesson."""
    from poslab.lessons import get_lesson
    from tests.app_harness import go, open_app  # streamlit is imported only by tests that drive the app

    def open_lesson(lesson_id: str, student: str | None = None) -> AppTest:
        return go(open_app(student), get_lesson(lesson_id).page_path)

    return open_lesson
