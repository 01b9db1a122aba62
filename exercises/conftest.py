"""Plumbing for the public tests in this folder: which implementation they check.

By default your own files next to this one (each exercise's stub, as the catalogue poslab/exercises.py
names it; a name found in none of them is looked up in the other .py files here),
each loaded only when a test needs it, so a mistake in one file does not stop the others' tests.
``pytest exercises/ --impl=reference`` (or ``POSLAB_IMPL=reference``) checks the course's
reference implementation instead; it must pass every test here.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE.parent / "poslab" / "exercises.py"


def _file_of() -> dict[str, str]:
    """Each name the exercises ask for -> its stub, read from the catalogue's ``Exercise(...)`` lines
    with ast (importing the project here would load torch and the app before any test). Where the
    catalogue is not beside this folder (the grader's sandbox holds only the submission and these
    tests), each top-level name defined in the files here."""
    if not CATALOGUE.is_file():
        return _defined_here()
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(CATALOGUE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Exercise" and len(node.args) == 4:
            names, filename = ast.literal_eval(node.args[2]), ast.literal_eval(node.args[3])
            found.update(dict.fromkeys(names, filename))
    return found


def _defined_here() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(HERE.glob("*.py")):
        if path.name == "conftest.py" or path.name.startswith("test_"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # the test that loads it says what is wrong
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.setdefault(node.name, path.name)
    return found


FILE_OF = _file_of()
IMPLEMENTATIONS = ("student", "reference")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--impl",
        choices=IMPLEMENTATIONS,
        default=None,
        help="which implementation the public tests check: your files (student, the default) "
        "or the course's reference (also POSLAB_IMPL=reference)",
    )


def _choice(config: pytest.Config) -> str:
    choice = config.getoption("--impl") or os.environ.get("POSLAB_IMPL", "student")
    if choice not in IMPLEMENTATIONS:
        raise pytest.UsageError(f"POSLAB_IMPL must be one of {IMPLEMENTATIONS}, got {choice!r}")
    return choice


def _load_file(filename: str) -> ModuleType:
    path = HERE / filename
    spec = importlib.util.spec_from_file_location(f"exercise_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import does: a dataclass in the file looks its module up there
    spec.loader.exec_module(module)
    return module


def _other_files(preferred: str) -> list[str]:
    """Every other solution file here, for names defined outside their usual file."""
    return sorted(
        path.name
        for path in HERE.glob("*.py")
        if path.name not in (preferred, "conftest.py") and not path.name.startswith("test_")
    )


class Implementation:
    """``impl.attention``, ``impl.apply_rope``, ...: the name from the implementation under test."""

    def __init__(self, choice: str) -> None:
        self.choice = choice
        self._modules: dict[str, ModuleType] = {}

    def _module(self, filename: str) -> ModuleType:
        if filename not in self._modules:
            self._modules[filename] = _load_file(filename)
        return self._modules[filename]

    def __getattr__(self, name: str):
        if name.startswith("_") or (name not in FILE_OF and CATALOGUE.is_file()):
            raise AttributeError(name)
        if self.choice == "reference":
            import poslab.encodings  # the course's package: only in the course repository

            return getattr(poslab.encodings, name)
        # Without the catalogue, a name no file here parses to define: every file is loaded in
        # turn, so one that does not import says why.
        preferred = FILE_OF.get(name, "")
        if preferred and (HERE / preferred).is_file() and hasattr(self._module(preferred), name):
            return getattr(self._module(preferred), name)
        for filename in _other_files(preferred):  # e.g. everything in one solution.py
            if hasattr(self._module(filename), name):
                return getattr(self._module(filename), name)
        raise NotImplementedError(f"{name} is not defined in {preferred or 'these files'}: not implemented yet")


@pytest.fixture(scope="session")
def impl(request: pytest.FixtureRequest) -> Implementation:
    return Implementation(_choice(request.config))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """An unfinished stub fails with one clear line instead of a traceback."""
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(NotImplementedError):
        report.longrepr = f"NotImplementedError: {call.excinfo.value} (write it in exercises/)"
    return report
