"""The layers import one way, read from the sources with ``ast`` (nothing is imported to check).

* ``poslab/`` (the library) imports neither ``grader`` nor ``streamlit``;
* ``grader/sandboxed/`` (what runs inside the sandbox) imports only the standard library, torch,
  numpy, pytest and itself;
* the pages (``app_pages/``) never import ``sqlalchemy``: they go through the store;
* outside the app layer (``app.py``, ``app_pages/``), ``tests/`` and ``benchmarks/``, nothing
  imports ``streamlit``.
* only ``tests/`` imports ``transformers`` (a test-only dependency: the decode reference is held
  against it).

Every import counts, also one inside a function (a lazy import is still a dependency) and
``importlib.import_module("...")`` with a literal name. Each rule is also run once on a small
made-up source with a forbidden import, to show it can fail.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Callable, Iterable

import pytest

from poslab.config import PROJECT_ROOT

SANDBOXED = "grader/sandboxed"
APP_PAGES = "app_pages"
SANDBOX_MAY_IMPORT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "pytest"}
SKIPPED_FOLDERS = {"__pycache__", "node_modules"}  # and every folder whose name starts with "."


@dataclass(frozen=True)
class Import:
    path: str  # relative to the project root, with "/"
    line: int
    module: str  # absolute dotted name; a relative import is resolved against the file's package

    @property
    def top(self) -> str:
        return self.module.split(".")[0]

    def is_within(self, package: str) -> bool:
        return self.module == package or self.module.startswith(package + ".")


def _package_of(path: str) -> list[str]:
    """``grader/sandboxed/child.py`` -> ["grader", "sandboxed"]; an ``__init__.py`` is its folder."""
    return path.removesuffix(".py").split("/")[:-1]


def _absolute(node: ast.ImportFrom, path: str) -> str:
    if node.level == 0:
        return node.module or ""
    package = _package_of(path)
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _literal_import_call(node: ast.Call) -> str | None:
    """The name in ``importlib.import_module("x")`` or ``__import__("x")``, when it is a literal."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_in(source: str, path: str) -> list[Import]:
    """Every import in ``source``, at any depth (module level, functions, classes, branches)."""
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            # `from grader import api` depends on grader.api: name each imported item as well.
            found += [Import(path, node.lineno, f"{module}.{alias.name}" if module else alias.name)
                      for alias in node.names]
        elif isinstance(node, ast.Call) and (name := _literal_import_call(node)):
            found.append(Import(path, node.lineno, name))
    return sorted(found, key=lambda item: item.line)


@dataclass(frozen=True)
class Rule:
    what: str  # the rule in words, for the failure message
    applies_to: Callable[[str], bool]  # a project-relative path
    forbidden: Callable[[Import], bool]

    def violations(self, sources: Iterable[tuple[str, str]]) -> list[str]:
        return [f"{item.path}:{item.line} imports {item.module}: {self.what}"
                for path, source in sources if self.applies_to(path)
                for item in imports_in(source, path) if self.forbidden(item)]


def _under(folder: str) -> Callable[[str], bool]:
    return lambda path: path.startswith(folder + "/")


def _in_app_tests_or_benchmarks(path: str) -> bool:
    return path == "app.py" or any(path.startswith(f"{folder}/") for folder in (APP_PAGES, "tests", "benchmarks"))


LIBRARY = Rule("the library (poslab/) imports neither grader nor streamlit",
               _under("poslab"), lambda item: item.top in ("grader", "streamlit"))
SANDBOXED_SIDE = Rule("grader/sandboxed/ imports only the standard library, torch, numpy, pytest and itself",
                      _under(SANDBOXED),
                      lambda item: not (item.top in SANDBOX_MAY_IMPORT or item.is_within("grader.sandboxed")))
PAGES = Rule("a page (app_pages/) never imports sqlalchemy; it goes through the store",
             _under(APP_PAGES), lambda item: item.top == "sqlalchemy")
TRANSFORMERS_IN_TESTS_ONLY = Rule("only tests/ import transformers (a test-only dependency, requirements-dev.txt)",
                                  lambda path: not path.startswith("tests/"), lambda item: item.top == "transformers")
STREAMLIT_IN_THE_APP_ONLY = Rule("only app.py, app_pages/, tests/ and benchmarks/ import streamlit",
                                 lambda path: not _in_app_tests_or_benchmarks(path),
                                 lambda item: item.top == "streamlit")


def project_sources() -> list[tuple[str, str]]:
    """(relative path, source) of every .py file in the project, outside hidden folders such as .venv."""
    sources = []
    for path in sorted(PROJECT_ROOT.rglob("*.py")):
        relative = path.relative_to(PROJECT_ROOT)
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts[:-1]):
            continue
        sources.append((relative.as_posix(), path.read_text(encoding="utf-8")))
    return sources


def _require_folder(folder: str) -> None:
    """A missing folder would make its rule pass without checking anything."""
    assert list((PROJECT_ROOT / folder).glob("*.py")), f"{folder}/ has no Python files: the rule would check nothing"


def _assert_none(violations: list[str]) -> None:
    assert not violations, "forbidden imports:\n" + "\n".join(violations)


# ---- the tree


def test_the_library_imports_neither_grader_nor_streamlit():
    _require_folder("poslab")
    _assert_none(LIBRARY.violations(project_sources()))


def test_the_sandboxed_side_imports_only_the_standard_library_torch_numpy_pytest_and_itself():
    _require_folder(SANDBOXED)
    _assert_none(SANDBOXED_SIDE.violations(project_sources()))


def test_pages_never_import_sqlalchemy():
    _require_folder(APP_PAGES)
    _assert_none(PAGES.violations(project_sources()))


def test_only_the_app_layer_tests_and_benchmarks_import_streamlit():
    _require_folder(APP_PAGES)
    _assert_none(STREAMLIT_IN_THE_APP_ONLY.violations(project_sources()))


def test_only_tests_import_transformers():
    _require_folder("tests")
    _assert_none(TRANSFORMERS_IN_TESTS_ONLY.violations(project_sources()))


# ---- each rule can fail

LAZY_GRADER_IMPORT = "import math\n\n\ndef grade():\n    from grader.api import grade_submission\n"


@pytest.mark.parametrize("rule, path, source, expected", [
    (LIBRARY, "poslab/grading.py", LAZY_GRADER_IMPORT, ["poslab/grading.py:5 imports grader.api.grade_submission"]),
    (LIBRARY, "poslab/ui.py", "import streamlit as st\n", ["poslab/ui.py:1 imports streamlit"]),
    (LIBRARY, "poslab/load.py", "import importlib\nimportlib.import_module('grader.cli')\n",
     ["poslab/load.py:2 imports grader.cli"]),
    (SANDBOXED_SIDE, f"{SANDBOXED}/child.py", "import os\nimport torch\nfrom . import protocol\nimport poslab\n",
     [f"{SANDBOXED}/child.py:4 imports poslab"]),
    (SANDBOXED_SIDE, f"{SANDBOXED}/child.py", "from .. import api\n", [f"{SANDBOXED}/child.py:1 imports grader.api"]),
    (SANDBOXED_SIDE, f"{SANDBOXED}/worker.py", "def run():\n    import pandas\n", [f"{SANDBOXED}/worker.py:2 imports pandas"]),
    (SANDBOXED_SIDE, f"{SANDBOXED}/worker.py", "from grader.student import Student\n",
     [f"{SANDBOXED}/worker.py:1 imports grader.student.Student"]),
    (PAGES, f"{APP_PAGES}/progress.py", "import streamlit as st\nfrom sqlalchemy import select\n",
     [f"{APP_PAGES}/progress.py:2 imports sqlalchemy.select"]),
    (STREAMLIT_IN_THE_APP_ONLY, "grader/cli.py", "def show():\n    import streamlit\n", ["grader/cli.py:2 imports streamlit"]),
    (STREAMLIT_IN_THE_APP_ONLY, "exercises/rope.py", "from streamlit import cache_data\n",
     ["exercises/rope.py:1 imports streamlit.cache_data"]),
    (TRANSFORMERS_IN_TESTS_ONLY, "poslab/encodings/decode.py", "def check():\n    import transformers\n",
     ["poslab/encodings/decode.py:2 imports transformers"]),
])
def test_a_forbidden_import_is_reported_with_its_file_and_line(rule, path, source, expected):
    reported = rule.violations([(path, source)])
    assert reported == [f"{where_and_what}: {rule.what}" for where_and_what in expected]


@pytest.mark.parametrize("rule, path, source", [
    (LIBRARY, "poslab/encodings/rope.py", "import torch\nfrom poslab.encodings._checks import require\n"),
    (SANDBOXED_SIDE, f"{SANDBOXED}/child.py",
     "from __future__ import annotations\nimport json, resource\nimport numpy\nimport pytest\n"
     "from grader.sandboxed import protocol\nfrom .protocol import Decoder\nfrom . import worker\n"),
    (PAGES, f"{APP_PAGES}/progress.py", "import streamlit as st\nfrom poslab.store import Store\n"),
    (STREAMLIT_IN_THE_APP_ONLY, "app.py", "import streamlit as st\n"),
    (STREAMLIT_IN_THE_APP_ONLY, f"{APP_PAGES}/ui/lesson_frame.py", "import streamlit as st\n"),
    (STREAMLIT_IN_THE_APP_ONLY, "tests/test_app.py", "from streamlit.testing.v1 import AppTest\n"),
    (STREAMLIT_IN_THE_APP_ONLY, "benchmarks/bench_pages.py", "import streamlit\n"),
    (TRANSFORMERS_IN_TESTS_ONLY, "tests/test_decode_hf.py", "from transformers import LlamaConfig\n"),
])
def test_an_allowed_import_is_not_reported(rule, path, source):
    assert rule.violations([(path, source)]) == []
