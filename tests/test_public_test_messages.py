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

RUN = """
import contextlib, io, json, sys
from grader.sandboxed.pytest_plugin import run_pytest
with contextlib.redirect_stdout(io.StringIO()):
    recorder = run_pytest(sys.argv[1], sys.argv[1] + "/test_rope.py")
print(json.dumps([test for test in recorder.tests if test["outcome"] != "passed"]))
"""
RAISES = "def apply_rope(x, positions=None, base=10000.0):\n    return helper(x)\n\n\ndef helper(x):\n    return x.view(-1, 7)\n"


def failures(tmp_path, source: str) -> list[dict]:
    folder = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises", folder)
    (folder / "rope.py").write_text(source)
    run = subprocess.run(
        [sys.executable, "-c", RUN, str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(run.stdout.splitlines()[-1])
    assert found, "the broken rope.py failed no public test: the check checked nothing"
    return found


def assert_no_plumbing(message: str, folder: str) -> None:
    assert "impl = " not in message and "<conftest" not in message, message  # the fixture's repr
    assert " at 0x" not in message, message  # object addresses
    assert "conftest.py" not in message and "<frozen" not in message, message  # the loader's frames
    assert folder not in message, message  # the sandbox's paths


def test_a_failed_assertion_shows_its_line_and_values(tmp_path):
    [first, *_] = failures(tmp_path, get_mutant("rope_clockwise").source)
    message = first["message"]
    assert message.startswith("test_rope.py, line "), message
    assert "> " in message and "assert torch.allclose(out[p]" in message  # the failing line, marked
    assert "allclose(tensor([ 0.5403, -0.8415]), tensor([0.5403, 0.8415])" in message  # what was compared
    assert_no_plumbing(message, str(tmp_path))


@pytest.mark.parametrize(
    "source, expected",
    [
        (RAISES, ["rope.py, line 6", "return x.view(-1, 7)", "RuntimeError: shape '[-1, 7]' is invalid"]),
        ("def apply_rope(x:\n    return x\n", ['File "rope.py", line 1', "SyntaxError: '(' was never closed"]),
    ],
)
def test_an_error_in_the_students_code_shows_where_in_it(tmp_path, source, expected):
    message = failures(tmp_path, source)[0]["message"]
    assert all(part in message for part in expected), message
    assert_no_plumbing(message, str(tmp_path))
