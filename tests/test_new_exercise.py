"""``python -m grader new-exercise``: in a copy of the tree, a new exercise is new files plus two
changed ones, passes ruff as written, and shows up in the catalogue, the suite and validate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from poslab.config import PROJECT_ROOT


def run(args: list[str], cwd, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd), **(env or {})}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert not check or result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A git copy of the tracked files (as they are now), with ``demo`` added."""
    if shutil.which("git") is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    root = tmp_path_factory.mktemp("tree")
    listed = run(["git", "ls-files", "-z"], PROJECT_ROOT).stdout.split("\0")
    for name in filter(None, listed):
        source = PROJECT_ROOT / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run([*git, "commit", "-qm", "copy"], root)
    run([sys.executable, "-m", "grader", "new-exercise", "demo", "--title", "Demo"], root)
    return root


def test_only_new_files_and_the_two_catalogue_files_change(tree):
    status = run(["git", "status", "--porcelain", "--untracked-files=all"], tree).stdout.splitlines()
    modified = sorted(line[3:] for line in status if not line.startswith("??"))
    assert modified == ["poslab/content/exercises.toml", "poslab/exercises.py"]
    new = {line[3:] for line in status if line.startswith("??")}
    assert {"exercises/demo.py", "poslab/encodings/demo.py", "grader/suite/demo/test_demo.py"} <= new


def test_the_written_files_pass_ruff_as_written(tree):
    ruff = shutil.which("ruff") or str(os.path.join(os.path.dirname(sys.executable), "ruff"))
    if not os.path.exists(ruff):
        pytest.skip("ruff is not installed")
    run([ruff, "check", "."], tree)
    run([ruff, "format", "--check", "."], tree)


CATALOGUE_CHECK = (
    "from poslab.exercises import EXERCISE_IDS, spec, hints\n"
    "from grader.suite import collect\n"
    "from grader.mutants import list_mutants\n"
    "from streamlit.testing.v1 import AppTest\n"
    "assert EXERCISE_IDS[-1] == 'demo' and spec('demo') and len(hints('demo')) == 3\n"
    "assert [c.name for c in collect() if c.exercise == 'demo'] == ['demo: adds each position']\n"
    "assert [m.name for m in list_mutants() if m.exercise == 'demo'] == ['demo_positions_from_one']\n"
    "page = AppTest.from_file('app_pages/exercise.py', default_timeout=60).run()\n"
    "assert not page.exception, page.exception\n"
    "options = page.selectbox(key='exercise-pick').options\n"
    "assert any('Demo' in option for option in options), options\n"
)
# One interpreter in the new tree (torch, the grader and streamlit imported once): the catalogue
# check, then `validate` through the command's own entry point. Each part's outcome is printed
# apart, so that each test below fails for its own part only.
IN_THE_TREE = f"""
import sys, traceback
try:
    exec({CATALOGUE_CHECK!r})
    print("CATALOGUE ok")
except BaseException:
    print("CATALOGUE failed:", traceback.format_exc())
sys.stdout.flush()
from grader.cli import main
code = main(["validate", "--exercise", "demo", "--jobs", "1"])
print("VALIDATE exit", code)
"""


@pytest.fixture(scope="module")
def in_the_tree(tree):
    data = tree / "data"
    data.mkdir(exist_ok=True)
    return run([sys.executable, "-c", IN_THE_TREE], tree, check=False, env={"POSLAB_DATA_DIR": str(data)})


def test_the_exercise_is_in_the_catalogue_the_suite_and_the_exercises_page(in_the_tree):
    assert "CATALOGUE ok" in in_the_tree.stdout, in_the_tree.stdout[-3000:] + in_the_tree.stderr[-3000:]


def test_validate_passes_for_the_new_exercise(in_the_tree):
    result = in_the_tree
    assert result.returncode == 0 and "VALIDATE exit 0" in result.stdout, result.stdout + result.stderr
    assert "demo_positions_from_one" in result.stdout and "caught" in result.stdout
