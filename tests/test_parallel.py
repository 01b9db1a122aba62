"""tests/parallel.py's units: the browser modules that start an app of their own are the ones it names."""

from __future__ import annotations

from pathlib import Path

from tests import parallel

BROWSER_DIR = Path(__file__).parent / "browser"


def test_the_browser_modules_with_an_app_of_their_own_are_the_ones_named():
    starting = {
        f"tests/browser/{path.name}"
        for path in BROWSER_DIR.glob("test_*.py")
        if "running_app(" in path.read_text(encoding="utf-8")
    }
    assert starting == set(parallel.OWN_APPS)


def test_every_other_browser_module_joins_the_shared_app_and_other_modules_keep_their_units():
    scheduling = parallel.ModuleScheduling.__new__(parallel.ModuleScheduling)
    assert scheduling._split_scope("tests/browser/test_workspace.py::test_x") == parallel.SHARED_APP
    assert scheduling._split_scope("tests/browser/test_some_new_page.py::test_x") == parallel.SHARED_APP
    assert scheduling._split_scope("tests/browser/test_oidc_login.py::test_x") == "tests/browser/test_oidc_login.py"
    assert scheduling._split_scope("tests/test_corpus.py::test_x[a]") == "tests/warm_grader"
    assert scheduling._split_scope("tests/test_store.py::test_x") == "tests/test_store.py"
