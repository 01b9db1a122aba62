"""The public tests' failure messages (grader/sandboxed/pytest_plugin.py): what failed and why, with the
values, and none of pytest's plumbing (fixture reprs, object addresses, the loader's frames, paths).

pytest runs in a child process on a copy of exercises/, as it does inside the sandbox, with a file of
the student's written here: an assertion that fails, code that raises, a file that does not parse."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from grader.mutants import get_mutant
from tests.conftest import ROOT

# One interpreter (torch and pytest imported once) forks a child per folder, as the sandbox's worker
# forks one per submission: each child runs pytest on its own copy of exercises/ with a fresh import
# of the student's rope.py, and writes its failures to <folder>.json.
RUN = """
import contextlib, io, json, os, sys
import pytest, torch
from grader.sandboxed.pytest_plugin import run_pytest
for folder in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                recorder = run_pytest(folder, folder + "/test_rope.py")
            with open(folder + ".json", "w") as out:
                json.dump([test for test in recorder.tests if test["outcome"] != "passed"], out)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
"""
RAISES = "def apply_rope(x, positions=None, base=10000.0):\n    return helper(x)\n\n\ndef helper(x):\n    return x.view(-1, 7)\n"
SYNTAX = "def apply_rope(x:\n    return x\n"
SOURCES = {"clockwise": get_mutant("rope_clockwise").source, "raises": RAISES, "syntax": SYNTAX}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[list[dict], str]]:
    """Each source's failed public tests, and the folder they ran in: one subprocess for all."""
    folders = {}
    for name, source in SOURCES.items():
        folder = tmp_path_factory.mktemp(name) / "exercises"
        shutil.copytree(ROOT / "exercises", folder)
        (folder / "rope.py").write_text(source)
        folders[name] = folder
    subprocess.run(
        [sys.executable, "-c", RUN, *map(str, folders.values())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {name: (failures_in(folder), str(folder.parent)) for name, folder in folders.items()}


def failures_in(folder) -> list[dict]:
    found = json.loads(folder.with_suffix(".json").read_text())
    assert found, f"the broken rope.py ({folder.parent.name}) failed no public test: the check checked nothing"
    return found


def assert_no_plumbing(message: str, folder: str) -> None:
    assert "impl = " not in message and "<conftest" not in message, message  # the fixture's repr
    assert " at 0x" not in message, message  # object addresses
    assert "conftest.py" not in message and "<frozen" not in message, message  # the loader's frames
    assert folder not in message, message  # the sandbox's paths


def test_a_failed_assertion_shows_its_line_and_values(runs):
    [first, *_], folder = runs["clockwise"]
    message = first["message"]
    assert message.startswith("test_rope.py, line "), message
    assert "> " in message and "assert torch.allclose(out[p]" in message  # the failing line, marked
    assert "allclose(tensor([ 0.5403, -0.8415]), tensor([0.5403, 0.8415])" in message  # what was compared
    assert_no_plumbing(message, folder)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("raises", ["rope.py, line 6", "return x.view(-1, 7)", "RuntimeError: shape '[-1, 7]' is invalid"]),
        ("syntax", ['File "rope.py", line 1', "SyntaxError: '(' was never closed"]),
    ],
)
def test_an_error_in_the_students_code_shows_where_in_it(runs, source, expected):
    found, folder = runs[source]
    message = found[0]["message"]
    assert all(part in message for part in expected), message
    assert_no_plumbing(message, folder)
