"""The layers import one way, read from the sources with ``ast`` (nothing is imported to check).

* ``poslab/`` (the library) imports neither ``grader``, ``streamlit`` nor the app;
* ``grader/`` never imports the app (``app``, ``app_pages``);
* the grader's core (all of ``grader/`` but its service and its front ends) imports neither the
  service (``grader/service/`` and its Dask preload ``grader/cluster.py``) nor a front end: the
  command line (``grader/cli/``, ``grader/__main__.py`` and every module a command is registered
  with in ``grader/cli/commands.py``) and the Gradescope runner (``grader/gradescope/``, which, like
  the command line, is a way in that sits on the core);
* the service imports no front end;
* ``grader/sandboxed/`` (what runs inside the sandbox) imports only the standard library, torch,
  numpy, pytest and itself;
* ``exercises/`` (what a student gets) imports nothing of the project: only the standard library,
  torch, numpy and pytest. One exception, by name: ``exercises/conftest.py`` imports
  ``poslab.encodings`` when asked for ``--impl=reference``, which exists only in the course's own
  repository and bundle, never in the sandbox;
* the app (``app.py``, ``app_pages/``) imports from ``grader`` only the modules of
  ``APP_MAY_IMPORT_FROM_GRADER`` (the README's Layout section says why each);
* the pages (``app_pages/``) never import ``sqlalchemy``: they go through the store;
* a module's folder says who uses it: what every page shares (``app_pages/ui/``) imports no one
  page's part (``app_pages/ui/exercise/``, ``app_pages/ui/instructor/``), and no part imports another's;
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
import functools
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from poslab.config import PROJECT_ROOT

SANDBOXED = "grader/sandboxed"
APP_PAGES = "app_pages"
SANDBOX_MAY_IMPORT = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "pytest"}
EXERCISES_MAY_IMPORT = SANDBOX_MAY_IMPORT
EXERCISES_EXCEPTIONS = {("exercises/conftest.py", "poslab.encodings")}  # --impl=reference, see above
# What the app may import from the grader, and nothing else of it (the README's Layout says why):
APP_MAY_IMPORT_FROM_GRADER = (
    "grader.service",  # the grading service: the only way the app gets student code run
    "grader.results",  # the typed, plain results the pages render
    "grader.vocabulary",  # the typed words of those results (statuses, the page's watch states)
    "grader.submissions",  # the hand-in rules (size, file name), checked on the page before a hand-in
    "grader.gradebook",  # the reader of the gradebook folder that `python -m grader grade` writes
    "grader.api",  # running_in_bundle(): whether this app is a student bundle (no hidden suite)
    "grader.lms.fill",  # the Instructor page fills an uploaded Canvas/Moodle grade file with the app's grades
    "grader.lms.grades",  # ... from the class table, with the suite's maximum per exercise
    "grader.regrade",  # the Instructor page regrades stored submissions on the grading service's judges
    "grader.similarity",  # the Instructor page's "Similar code" compares the class's last submissions
)
GRADER_SERVICE = ("grader/service", "grader/cluster.py")
GRADER_FRONT_ENDS = ("grader/cli", "grader/__main__.py", "grader/gradescope")
COMMAND_TABLE = "grader/cli/commands.py"
PAGE_PARTS = ("app_pages/ui/exercise", "app_pages/ui/instructor")  # each used by its own pages only
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


@functools.cache  # each rule reads the same files
def imports_in(source: str, path: str) -> tuple[Import, ...]:
    """Every import in ``source``, at any depth (module level, functions, classes, branches)."""
    found = []
    for node in ast.walk(ast.parse(source, filename=path)):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, path)
            # `from grader import api` depends on grader.api: name each imported item as well.
            found += [
                Import(path, node.lineno, f"{module}.{alias.name}" if module else alias.name) for alias in node.names
            ]
        elif isinstance(node, ast.Call) and (name := _literal_import_call(node)):
            found.append(Import(path, node.lineno, name))
    return tuple(sorted(found, key=lambda item: item.line))


@dataclass(frozen=True)
class Rule:
    what: str  # the rule in words, for the failure message
    applies_to: Callable[[str], bool]  # a project-relative path
    forbidden: Callable[[Import], bool]

    def violations(self, sources: Iterable[tuple[str, str]]) -> list[str]:
        return [
            f"{item.path}:{item.line} imports {item.module}: {self.what}"
            for path, source in sources
            if self.applies_to(path)
            for item in imports_in(source, path)
            if self.forbidden(item)
        ]


def _under(folder: str) -> Callable[[str], bool]:
    return lambda path: path.startswith(folder + "/")


def _in_app_tests_or_benchmarks(path: str) -> bool:
    return path == "app.py" or any(path.startswith(f"{folder}/") for folder in (APP_PAGES, "tests", "benchmarks"))


def _module_of(path: str) -> str:
    """``grader/cli/grade.py`` -> ``grader.cli.grade``; a package's ``__init__.py`` is the package."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _within_any(module: str, packages: Iterable[str]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def registered_command_modules(source: str) -> tuple[str, ...]:
    """The module of every ``Command(name, module, help)`` in the CLI's command table, read with ast."""
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Command":
            arguments = [*node.args[1:2], *(keyword.value for keyword in node.keywords if keyword.arg == "module")]
            modules += [argument.value for argument in arguments if isinstance(argument, ast.Constant)]
    return tuple(modules)


def _service_modules() -> tuple[str, ...]:
    return tuple(_module_of(part) for part in GRADER_SERVICE)


def grader_core_rule(front_ends: tuple[str, ...]) -> Rule:
    upper = (*_service_modules(), *front_ends)
    return Rule(
        "the grader's core imports neither its service (grader.service, grader.cluster) nor a front end "
        "(the command line, its commands, Gradescope)",
        lambda path: path.startswith("grader/") and not _within_any(_module_of(path), upper),
        lambda item: _within_any(item.module, upper),
    )


def grader_service_rule(front_ends: tuple[str, ...]) -> Rule:
    return Rule(
        "the grading service (grader.service, grader.cluster) imports no front end",
        lambda path: _within_any(_module_of(path), _service_modules()),
        lambda item: _within_any(item.module, front_ends),
    )


LIBRARY = Rule(
    "the library (poslab/) imports neither grader, streamlit nor the app",
    _under("poslab"),
    lambda item: item.top in ("grader", "streamlit", "app", "app_pages"),
)
GRADER_BELOW_THE_APP = Rule(
    "grader/ never imports the app (app.py, app_pages/)",
    _under("grader"),
    lambda item: item.top in ("app", "app_pages"),
)
SANDBOXED_SIDE = Rule(
    "grader/sandboxed/ imports only the standard library, torch, numpy, pytest and itself",
    _under(SANDBOXED),
    lambda item: not (item.top in SANDBOX_MAY_IMPORT or item.is_within("grader.sandboxed")),
)
EXERCISES = Rule(
    "exercises/ imports nothing of the project: only the standard library, torch, numpy and pytest",
    _under("exercises"),
    lambda item: item.top not in EXERCISES_MAY_IMPORT and (item.path, item.module) not in EXERCISES_EXCEPTIONS,
)
APP_GRADER = Rule(
    f"the app (app.py, app_pages/) imports from grader only {', '.join(APP_MAY_IMPORT_FROM_GRADER)}",
    lambda path: path == "app.py" or _under(APP_PAGES)(path),
    lambda item: item.top == "grader" and not _within_any(item.module, APP_MAY_IMPORT_FROM_GRADER),
)
PAGES = Rule(
    "a page (app_pages/) never imports sqlalchemy; it goes through the store",
    _under(APP_PAGES),
    lambda item: item.top == "sqlalchemy",
)


def _page_part(path: str) -> str | None:
    return next((part for part in PAGE_PARTS if path.startswith(part + "/")), None)


UI_BY_WHO_USES_IT = Rule(
    "app_pages/ui/ (shared by every page) imports no page's part, and no part (exercise/, instructor/) another's",
    _under(f"{APP_PAGES}/ui"),
    lambda item: _page_part(item.module.replace(".", "/") + "/") not in (None, _page_part(item.path)),
)
TRANSFORMERS_IN_TESTS_ONLY = Rule(
    "only tests/ import transformers (a test-only dependency, requirements-dev.txt)",
    lambda path: not path.startswith("tests/"),
    lambda item: item.top == "transformers",
)
STREAMLIT_IN_THE_APP_ONLY = Rule(
    "only app.py, app_pages/, tests/ and benchmarks/ import streamlit",
    lambda path: not _in_app_tests_or_benchmarks(path),
    lambda item: item.top == "streamlit",
)


@functools.cache
def project_sources() -> tuple[tuple[str, str], ...]:
    """(relative path, source) of every .py file in the project, outside hidden folders such as .venv
    (not entered at all: walking .venv's files took most of this module's time)."""
    sources = []
    for folder, subfolders, files in os.walk(PROJECT_ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name not in SKIPPED_FOLDERS]
        for name in files:
            if name.endswith(".py"):
                path = Path(folder) / name
                sources.append((path.relative_to(PROJECT_ROOT).as_posix(), path.read_text(encoding="utf-8")))
    return tuple(sorted(sources))


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


def test_the_shared_ui_imports_no_pages_part():
    for part in PAGE_PARTS:
        _require_folder(part)
    _assert_none(UI_BY_WHO_USES_IT.violations(project_sources()))


def test_only_the_app_layer_tests_and_benchmarks_import_streamlit():
    _require_folder(APP_PAGES)
    _assert_none(STREAMLIT_IN_THE_APP_ONLY.violations(project_sources()))


def test_the_grader_never_imports_the_app():
    _require_folder("grader")
    _assert_none(GRADER_BELOW_THE_APP.violations(project_sources()))


def test_exercises_import_nothing_of_the_project():
    _require_folder("exercises")
    _assert_none(EXERCISES.violations(project_sources()))


def real_front_ends() -> tuple[str, ...]:
    registered = registered_command_modules((PROJECT_ROOT / COMMAND_TABLE).read_text(encoding="utf-8"))
    assert "grader.cli.grade" in registered, f"{COMMAND_TABLE} was not read: no command found"
    return (*(_module_of(part) for part in GRADER_FRONT_ENDS), *registered)


def test_the_graders_core_imports_neither_the_service_nor_a_front_end():
    for part in (*GRADER_SERVICE, *GRADER_FRONT_ENDS):
        assert (PROJECT_ROOT / part).exists(), f"{part} is gone: update GRADER_SERVICE / GRADER_FRONT_ENDS"
    _assert_none(grader_core_rule(real_front_ends()).violations(project_sources()))


def test_the_service_imports_no_front_end():
    _assert_none(grader_service_rule(real_front_ends()).violations(project_sources()))


def test_the_app_imports_only_the_listed_grader_modules():
    _require_folder(APP_PAGES)
    modules = {_module_of(path) for path, _ in project_sources() if path.startswith("grader/")}
    assert set(APP_MAY_IMPORT_FROM_GRADER) <= modules, "the allow-list names a module that no longer exists"
    _assert_none(APP_GRADER.violations(project_sources()))


def test_only_tests_import_transformers():
    _require_folder("tests")
    _assert_none(TRANSFORMERS_IN_TESTS_ONLY.violations(project_sources()))


# ---- each rule can fail

LAZY_GRADER_IMPORT = "import math\n\n\ndef grade():\n    from grader.api import grade_submission\n"


@pytest.mark.parametrize(
    "rule, path, source, expected",
    [
        (LIBRARY, "poslab/grading.py", LAZY_GRADER_IMPORT, ["poslab/grading.py:5 imports grader.api.grade_submission"]),
        (LIBRARY, "poslab/ui.py", "import streamlit as st\n", ["poslab/ui.py:1 imports streamlit"]),
        (
            LIBRARY,
            "poslab/load.py",
            "import importlib\nimportlib.import_module('grader.cli')\n",
            ["poslab/load.py:2 imports grader.cli"],
        ),
        (
            SANDBOXED_SIDE,
            f"{SANDBOXED}/child.py",
            "import os\nimport torch\nfrom . import protocol\nimport poslab\n",
            [f"{SANDBOXED}/child.py:4 imports poslab"],
        ),
        (
            SANDBOXED_SIDE,
            f"{SANDBOXED}/child.py",
            "from .. import api\n",
            [f"{SANDBOXED}/child.py:1 imports grader.api"],
        ),
        (
            SANDBOXED_SIDE,
            f"{SANDBOXED}/worker.py",
            "def run():\n    import pandas\n",
            [f"{SANDBOXED}/worker.py:2 imports pandas"],
        ),
        (
            SANDBOXED_SIDE,
            f"{SANDBOXED}/worker.py",
            "from grader.student import Student\n",
            [f"{SANDBOXED}/worker.py:1 imports grader.student.Student"],
        ),
        (
            PAGES,
            f"{APP_PAGES}/progress.py",
            "import streamlit as st\nfrom sqlalchemy import select\n",
            [f"{APP_PAGES}/progress.py:2 imports sqlalchemy.select"],
        ),
        (
            STREAMLIT_IN_THE_APP_ONLY,
            "grader/cli/grade.py",
            "def show():\n    import streamlit\n",
            ["grader/cli/grade.py:2 imports streamlit"],
        ),
        (
            STREAMLIT_IN_THE_APP_ONLY,
            "exercises/rope.py",
            "from streamlit import cache_data\n",
            ["exercises/rope.py:1 imports streamlit.cache_data"],
        ),
        (
            LIBRARY,
            "poslab/page.py",
            "from app_pages.ui import frame\n",
            ["poslab/page.py:1 imports app_pages.ui.frame"],
        ),
        (
            UI_BY_WHO_USES_IT,
            "app_pages/ui/comments.py",
            "from app_pages.ui.identity import prompt\nfrom app_pages.ui.instructor.lock import unlock\n",
            ["app_pages/ui/comments.py:2 imports app_pages.ui.instructor.lock.unlock"],
        ),
        (
            UI_BY_WHO_USES_IT,
            "app_pages/ui/exercise/hand_in.py",
            "from app_pages.ui.exercise import grading\nfrom app_pages.ui.instructor import class_table\n",
            ["app_pages/ui/exercise/hand_in.py:2 imports app_pages.ui.instructor.class_table"],
        ),
        (
            GRADER_BELOW_THE_APP,
            "grader/api.py",
            "def show():\n    from app_pages.ui.exercise import feedback\n",
            ["grader/api.py:2 imports app_pages.ui.exercise.feedback"],
        ),
        (
            EXERCISES,
            "exercises/rope.py",
            "import torch\nfrom poslab.encodings import apply_rope\n",
            ["exercises/rope.py:2 imports poslab.encodings.apply_rope"],
        ),
        (
            EXERCISES,
            "exercises/test_rope.py",
            "import pytest\nimport pandas\n",
            ["exercises/test_rope.py:2 imports pandas"],
        ),
        (EXERCISES, "exercises/rope.py", "import poslab.encodings\n", ["exercises/rope.py:1 imports poslab.encodings"]),
        (
            EXERCISES,
            "exercises/conftest.py",
            "def impl():\n    import poslab.store\n",
            ["exercises/conftest.py:2 imports poslab.store"],
        ),
        (
            EXERCISES,
            "exercises/alibi.py",
            "from grader.suite import inputs\n",
            ["exercises/alibi.py:1 imports grader.suite.inputs"],
        ),
        (
            APP_GRADER,
            f"{APP_PAGES}/ui/exercise/grading.py",
            "from grader.sandbox import WorkerProcess\n",
            [f"{APP_PAGES}/ui/exercise/grading.py:1 imports grader.sandbox.WorkerProcess"],
        ),
        (
            APP_GRADER,
            "app.py",
            "import grader.api\nfrom grader.suite import collect\n",
            ["app.py:2 imports grader.suite.collect"],
        ),
        (
            APP_GRADER,
            f"{APP_PAGES}/instructor.py",
            "def run():\n    from grader import cli\n",
            [f"{APP_PAGES}/instructor.py:2 imports grader.cli"],
        ),
        (
            TRANSFORMERS_IN_TESTS_ONLY,
            "poslab/encodings/decode.py",
            "def check():\n    import transformers\n",
            ["poslab/encodings/decode.py:2 imports transformers"],
        ),
    ],
)
def test_a_forbidden_import_is_reported_with_its_file_and_line(rule, path, source, expected):
    reported = rule.violations([(path, source)])
    assert reported == [f"{where_and_what}: {rule.what}" for where_and_what in expected]


FRONT_ENDS_WITH_A_NEW_COMMAND = ("grader.cli", "grader.__main__", "grader.gradescope", "grader.mutation")


@pytest.mark.parametrize(
    "path, source, expected",
    [
        (
            "grader/api.py",
            "from grader.service import GradingService\n",
            ["grader/api.py:1 imports grader.service.GradingService"],
        ),
        ("grader/results.py", "def f():\n    import grader.cli\n", ["grader/results.py:2 imports grader.cli"]),
        ("grader/submissions.py", "from grader import cluster\n", ["grader/submissions.py:1 imports grader.cluster"]),
        (
            "grader/sandbox/session.py",
            "from ..cli.common import atomic_write\n",
            ["grader/sandbox/session.py:1 imports grader.cli.common.atomic_write"],
        ),
        (
            "grader/release.py",
            "import importlib\nimportlib.import_module('grader.gradescope.package')\n",
            ["grader/release.py:2 imports grader.gradescope.package"],
        ),
        (
            "grader/api.py",
            "from grader.mutation import run\n",
            ["grader/api.py:1 imports grader.mutation.run"],
        ),  # a registered command
    ],
)
def test_the_graders_core_rule_can_fail(path, source, expected):
    rule = grader_core_rule(FRONT_ENDS_WITH_A_NEW_COMMAND)
    assert rule.violations([(path, source)]) == [f"{where_and_what}: {rule.what}" for where_and_what in expected]


@pytest.mark.parametrize(
    "path, source, expected",
    [
        (
            "grader/service/dispatch.py",
            "from grader.cli.common import atomic_write\n",
            ["grader/service/dispatch.py:1 imports grader.cli.common.atomic_write"],
        ),
        (
            "grader/cluster.py",
            "def f():\n    import grader.gradescope.run\n",
            ["grader/cluster.py:2 imports grader.gradescope.run"],
        ),
    ],
)
def test_the_service_rule_can_fail(path, source, expected):
    rule = grader_service_rule(FRONT_ENDS_WITH_A_NEW_COMMAND)
    assert rule.violations([(path, source)]) == [f"{where_and_what}: {rule.what}" for where_and_what in expected]


@pytest.mark.parametrize(
    "path, source",
    [
        (
            "grader/api.py",
            "from grader.results import SubmissionResult\nfrom grader.sandbox import GraderFault\nimport poslab\n",
        ),
        ("grader/cli/grading.py", "from grader.service import GradingService\n"),  # a front end may use the service
        ("grader/mutation/__init__.py", "from grader.cli.common import UsageError\n"),  # so may a registered command
        ("grader/gradescope/run.py", "from grader.api import Grader\n"),
        ("grader/service/__init__.py", "from grader.api import Grader\nfrom grader.cluster import load_suite\n"),
    ],
)
def test_the_grader_rules_allow_what_the_layers_allow(path, source):
    for rule in (grader_core_rule(FRONT_ENDS_WITH_A_NEW_COMMAND), grader_service_rule(FRONT_ENDS_WITH_A_NEW_COMMAND)):
        assert rule.violations([(path, source)]) == [], rule.what


def test_registered_commands_are_read_from_the_table():
    table = 'COMMANDS = (Command("grade", "grader.cli.grade", "..."), Command("mutation", module="grader.mutation", help=""))'
    assert registered_command_modules(table) == ("grader.cli.grade", "grader.mutation")


@pytest.mark.parametrize(
    "rule, path, source",
    [
        (LIBRARY, "poslab/encodings/rope.py", "import torch\nfrom poslab.encodings._checks import require\n"),
        (
            SANDBOXED_SIDE,
            f"{SANDBOXED}/child.py",
            "from __future__ import annotations\nimport json, resource\nimport numpy\nimport pytest\n"
            "from grader.sandboxed import protocol\nfrom .protocol import Decoder\nfrom . import worker\n",
        ),
        (PAGES, f"{APP_PAGES}/progress.py", "import streamlit as st\nfrom poslab.store import Store\n"),
        (STREAMLIT_IN_THE_APP_ONLY, "app.py", "import streamlit as st\n"),
        (STREAMLIT_IN_THE_APP_ONLY, f"{APP_PAGES}/ui/lesson_frame.py", "import streamlit as st\n"),
        (STREAMLIT_IN_THE_APP_ONLY, "tests/test_app.py", "from streamlit.testing.v1 import AppTest\n"),
        (STREAMLIT_IN_THE_APP_ONLY, "benchmarks/bench_pages.py", "import streamlit\n"),
        (
            EXERCISES,
            "exercises/conftest.py",
            "import importlib.util\nimport pytest\n\n\ndef f():\n    import poslab.encodings\n",
        ),
        (EXERCISES, "exercises/test_rope.py", "import math\nimport torch\nimport numpy as np\nimport pytest\n"),
        (
            APP_GRADER,
            f"{APP_PAGES}/ui/exercise/grading.py",
            "from grader import api\nfrom grader.service import GradingService\nfrom grader.results import SubmissionResult\n",
        ),
        (
            APP_GRADER,
            f"{APP_PAGES}/instructor.py",
            "from grader.gradebook import load_gradebook\nfrom poslab.store import Store\n",
        ),
        (GRADER_BELOW_THE_APP, "grader/api.py", "import poslab.config\n"),
        (TRANSFORMERS_IN_TESTS_ONLY, "tests/test_decode_hf.py", "from transformers import LlamaConfig\n"),
    ],
)
def test_an_allowed_import_is_not_reported(rule, path, source):
    assert rule.violations([(path, source)]) == []
