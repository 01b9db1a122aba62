"""The Gradescope package: ``python -m grader gradescope OUT.zip`` and its ``run_autograder``.

The zip is built with the CLI, unpacked into temporary roots laid out like ``/autograder``
(``source/``, ``submission/``, ``results/``, ``submission_metadata.json``), and ``run_autograder``
runs there with ``GRADESCOPE_ROOT`` set and this venv's ``python3`` first on ``PATH``, for a
correct, a buggy (several files in an ``exercises/`` folder, one exercise missing), a
syntax-error and a hostile submission. The hostile one looks for autograder roots (the guesses
a submission could make, and a scan of ``/``), reads what it can of their ``source/`` and forges
``results.json``; it reports what it got in its error messages, which end up in results.json.

As root, the correct and the hostile submissions go through a package that forces the fallback
isolation (what runs in Gradescope's container), the hostile one in a root every uid can reach,
as /autograder is: before the run a uid of the children's range can read the hidden suite (the
gap), after it cannot, and the hostile child read nothing.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import cli
from grader.gradescope.package import PackageError, imported_names, pinned_requirements
from grader.gradescope.run import GradescopePaths, closed_to_others, lock_down
from grader.mutants import list_mutants, reference_source
from grader.settings import GraderSettings
from poslab.config import PROJECT_ROOT
from poslab.exercises import EXERCISES

GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")  # Gradescope's docs
GRADESCOPE_STATUSES = ("passed", "failed")
MAX_RESULTS_BYTES = 1_000_000
TIMEOUT = 15.0
CHILD_LIKE_UID = GraderSettings().uid_base + 255  # a uid of the range children get, used by nothing
SUITE_DIR = PROJECT_ROOT / "grader" / "suite"

HOSTILE = r'''
"""Hostile: finds autograder roots, reads the hidden suite there, forges results.json."""
import os, time

GUESSES = ["/autograder", "..", "../..", "../../..", "results/..", os.environ.get("GRADESCOPE_ROOT", "/autograder")]
SKIP = ("/proc", "/sys", "/dev", "/usr", "/lib", "/bin", "/sbin", "/etc", "/var", "/boot", "/run", "/snap")
FORGED = '{"score": 1000.0, "execution_time": 1, "tests": [{"name": "forged", "score": 1000.0, "max_score": 1000.0, "status": "passed"}]}'


def _roots():
    found, deadline = list(GUESSES), time.monotonic() + 4
    for folder, subfolders, files in os.walk("/"):
        if folder.startswith(SKIP) or folder.count(os.sep) > 9 or time.monotonic() > deadline:
            subfolders[:] = []
            continue
        subfolders[:] = [name for name in subfolders if name not in (".git", ".venv", "site-packages", "__pycache__")]
        if {"source", "results"} <= set(subfolders) or "results.json" in files:
            found.append(folder if "results.json" not in files else os.path.dirname(folder))
    return found


def _loot():
    read, wrote, seen = 0, 0, []
    for root in _roots():
        for folder, _, files in os.walk(os.path.join(root, "source")):
            for name in files:
                try:
                    with open(os.path.join(folder, name), errors="replace") as handle:
                        text = handle.read()
                except OSError:
                    continue
                read += len(text)
                if name.startswith("test_"):
                    seen.append(text[:120])
        for target in ("results/results.json", "results/forged.txt"):
            try:
                with open(os.path.join(root, target), "w") as handle:
                    handle.write(FORGED)
                wrote += 1
            except OSError:
                pass
    return f"HOSTILE read={read} wrote={wrote} | " + " | ".join(seen)


LOOT = _loot()
'''


# ---------------------------------------------------------------- submissions


def hostile_source() -> str:
    names = [name for exercise in EXERCISES for name in exercise.names]
    return HOSTILE + "".join(f"\n\ndef {name}(*args, **kwargs):\n    raise RuntimeError(LOOT)\n" for name in names)


def buggy_mutant():
    """A realistic bug in the first exercise (from the bundled mutants, which the judge does not ship)."""
    return next(mutant for mutant in list_mutants() if mutant.exercise == EXERCISES[0].id and not mutant.slow)


def without_exercise(source: str, exercise) -> str:
    """``source`` with the exercise's names renamed away, so that the submission lacks it."""
    for name in exercise.names:
        assert f"def {name}(" in source or f"class {name}(" in source, name
        source = source.replace(f"def {name}(", f"def _dropped_{name}(").replace(
            f"class {name}(", f"class _Dropped{name}("
        )
    return source


SUBMISSIONS = {
    "correct": {"solution.py": reference_source()},
    "buggy": {
        "exercises/solution.py": without_exercise(buggy_mutant().source, EXERCISES[-1]),
        "exercises/notes.py": "NOTE = 'a second file'\n",
    },
    "syntax": {"attempt.py": "import torch\n\ndef attention(q, k, v, bias=None)\n    return q\n"},
    "hostile": {"hostile.py": hostile_source()},
}


# ---------------------------------------------------------------- the simulated Gradescope run


def unpack(package: Path, root: Path, files: dict[str, str]) -> Path:
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(parents=True)
    with zipfile.ZipFile(package) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
    for name, text in files.items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "submission_metadata.json").write_text(json.dumps({"id": 4242, "users": [{"name": "Ada"}]}))
    return root


def readable_by(uid: int | None, path: Path) -> bool | None:
    """Can a process of this uid (and no groups) read ``path``? None where that cannot be tried."""
    if uid is None or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    probe = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "cat", str(path)], capture_output=True
    )
    return probe.returncode == 0


def run_autograder(root: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("POSLAB_", "PYTHON"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["GRADESCOPE_ROOT"] = str(root)
    command = ["bash", str(root / "source" / "run_autograder")]
    done = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    results = root / "results" / "results.json"
    raw = results.read_bytes()
    return {"root": root, "raw": raw, "data": json.loads(raw), "stdout": done.stdout}


def outside_pytest_root(name: str, owner: int = 0, parent_mode: int = 0o700) -> Path:
    """A root like /autograder (0755), in a folder of /tmp owned by ``owner``: 0700 keeps the
    children of other runs out; 0755 lets every uid reach it, as /autograder on Gradescope."""
    parent = Path(tempfile.mkdtemp(prefix=f"gradescope-{name}-"))
    os.chown(parent, owner, owner)
    os.chmod(parent, parent_mode)
    return parent / "autograder"


def build(out: Path, *options: str) -> Path:
    assert cli.main(["gradescope", str(out), "--timeout", f"{TIMEOUT:g}", *options]) == 0
    return out


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("package") / "autograder.zip")


@pytest.fixture(scope="module")
def runs(package, tmp_path_factory) -> dict:
    """The four runs of run_autograder, two at a time.

    As root, the correct and the hostile submissions use a package that forces the fallback (what
    Gradescope's container runs). The hostile one's root is reachable by every uid, as /autograder
    is; every other root sits in a folder private to root, so it cannot find theirs.
    """
    as_root = os.geteuid() == 0
    plan = {name: (package, tmp_path_factory.mktemp(name) / "autograder") for name in SUBMISSIONS}
    if as_root:
        fallback = build(tmp_path_factory.mktemp("fallback") / "fallback.zip", "--isolation", "fallback")
        plan["correct"] = (fallback, outside_pytest_root("correct"))
        plan["hostile"] = (fallback, outside_pytest_root("hostile", parent_mode=0o755))

    def one(name: str) -> dict:
        zip_path, root = plan[name]
        unpack(zip_path, root, SUBMISSIONS[name])
        os.chmod(root, 0o755)
        suite_file = next((root / "source" / "grader" / "suite").glob("*/test_*.py"))
        before = readable_by(CHILD_LIKE_UID, suite_file)
        run = run_autograder(root)
        run["fallback_package"] = zip_path != package
        run["suite_readable_before"] = before
        run["suite_readable_after"] = readable_by(run["data"]["extra_data"]["child_uid"], suite_file)
        return run

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            yield dict(zip(SUBMISSIONS, pool.map(one, SUBMISSIONS)))
    finally:
        for _, root in plan.values():
            if str(root).startswith(tempfile.gettempdir() + "/gradescope-"):
                shutil.rmtree(root.parent, ignore_errors=True)


def in_fallback_as_root(runs: dict, name: str) -> dict:
    if not runs[name]["fallback_package"]:
        pytest.skip("needs root: only root can give the child a uid of its own and chown the folders")
    return runs[name]


# ---------------------------------------------------------------- checks


def suite_cases():
    import grader.suite

    return grader.suite.collect()


def max_points() -> float:
    return sum(case.points for case in suite_cases())


def assert_gradescope_format(run: dict) -> dict:
    assert len(run["raw"]) <= MAX_RESULTS_BYTES
    data = run["data"]
    assert isinstance(data["score"], (int, float)) and isinstance(data["execution_time"], (int, float))
    assert isinstance(data["output"], str) and data["output"] and "\n" not in data["output"]  # one paragraph
    assert data["tests"], "no tests reported"
    for test in data["tests"]:
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert test["status"] in GRADESCOPE_STATUSES
        assert test["visibility"] in GRADESCOPE_VISIBILITIES
        assert 0 <= test["score"] <= test["max_score"]
    assert math.isclose(data["score"], sum(test["score"] for test in data["tests"]), abs_tol=1e-9)
    declared = {case.name: case.visibility for case in suite_cases()}
    assert {test["name"]: test["visibility"] for test in data["tests"]} == declared
    extra = data["extra_data"]
    assert extra["isolation"] in ("bwrap", "fallback")
    assert extra["network_reachable_from_child"] in (True, False)
    assert extra["timeout"] == TIMEOUT  # the setting the package was built with
    assert isinstance(extra["lockdown"]["performed"], bool)
    return data


def exercise_scores(data: dict, exercise: str) -> tuple[float, float]:
    tests = [test for test in data["tests"] if test["tags"] == [exercise]]
    return sum(test["score"] for test in tests), sum(test["max_score"] for test in tests)


def suite_code_lines() -> set[str]:
    """Lines of the hidden suite's code (not its messages): none may reach a student."""
    lines = set()
    for path in SUITE_DIR.glob("*/test_*.py"):
        for line in path.read_text().splitlines():
            line = line.strip()
            if line.startswith(("def test_", "@graded(", "from ", "import ")) and len(line) >= 12:
                lines.add(line)
    return lines


def hostile_reports(data: dict) -> list[str]:
    return [test["output"] for test in data["tests"] if "HOSTILE read=" in test["output"]]


def assert_hostile_got_nothing(run: dict) -> None:
    data = assert_gradescope_format(run)
    text = run["raw"].decode()
    assert data["score"] == 0
    assert "forged" not in [test["name"] for test in data["tests"]] and data["extra_data"]["gradescope"] is True
    reports = hostile_reports(data)
    assert reports, "the hostile submission's report is missing: it did not run as the test expects"
    assert all("HOSTILE read=0 wrote=0 " in report for report in reports), reports[0]
    leaked = [line for line in suite_code_lines() if line in text]
    assert not leaked, f"hidden-suite code in results.json: {leaked[:3]}"
    assert sorted(path.name for path in (run["root"] / "results").iterdir()) == ["results.json"]


# ---------------------------------------------------------------- the package


def test_the_zip_holds_what_judging_imports_and_nothing_for_instructors_only(package):
    names = set(zipfile.ZipFile(package).namelist())
    assert {"setup.sh", "run_autograder", "requirements.txt", "grader-settings.env"} <= names
    assert {f"grader/suite/{path.parent.name}/{path.name}" for path in SUITE_DIR.glob("*/test_*.py")} <= names
    assert {
        "grader/gradescope/run.py",
        "grader/api.py",
        "poslab/exercises.py",
        "poslab/content/exercises.toml",
        "grader/suite/drawn_cases.json",  # each run reads the suite's cases instead of drawing them
    } <= names
    assert not [
        name
        for name in names
        if name.startswith(
            ("grader/mutants/", "grader/variants/", "tests/", "app_pages/", "pages/", "poslab/store/", ".git")
        )
    ]
    assert not [
        name for name in names if name.startswith("poslab/viz/") or name.endswith(("/mutants.py", "/variants.py"))
    ]
    assert not {"grader/cli.py", "grader/release.py", "app.py", "poslab/lessons.py"} & names
    assert not [name for name in names if name.startswith("grader/cli/")]
    modes = {info.filename: (info.external_attr >> 16) & 0o777 for info in zipfile.ZipFile(package).infolist()}
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755


def test_setup_installs_python_311_torch_from_the_cpu_index_and_pinned_requirements(package):
    archive = zipfile.ZipFile(package)
    setup = archive.read("setup.sh").decode()
    assert "22.04" in setup and "python3.11" in setup and "bubblewrap" in setup
    assert "--index-url https://download.pytorch.org/whl/cpu torch==" in setup
    project = {line.strip() for line in (PROJECT_ROOT / "requirements.txt").read_text().splitlines()}
    packaged = [
        line for line in archive.read("requirements.txt").decode().splitlines() if line and not line.startswith("#")
    ]
    assert packaged and set(packaged) <= project
    assert any(line.startswith("torch==") for line in packaged)
    settings = archive.read("grader-settings.env").decode()
    assert f"POSLAB_GRADER_TIMEOUT={TIMEOUT:g}" in settings and "POSLAB_GRADER_ISOLATION=auto" in settings


def test_an_import_the_requirements_do_not_pin_stops_the_build(tmp_path):
    (tmp_path / "requirements.txt").write_text("streamlit==1.67.0\n")
    with pytest.raises(PackageError, match="torch"):
        pinned_requirements(("torch",), tmp_path / "requirements.txt")


def test_imports_only_for_type_checkers_are_not_followed(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nimport typing\n"
        "if TYPE_CHECKING:\n    from poslab.store import Store\n"
        "if typing.TYPE_CHECKING:\n    import poslab.viz\nelse:\n    import poslab.roster\n"
        "def later():\n    from poslab import lessons\n"
    )
    names = imported_names("poslab.module", module)
    assert {"poslab.roster", "poslab.lessons", "typing"} <= names
    assert not {"poslab.store", "poslab.store.Store", "poslab.viz"} & names


def test_not_root_leaves_the_folders_alone_and_says_so(tmp_path):
    paths = GradescopePaths(tmp_path)
    (tmp_path / "source").mkdir()
    before = (tmp_path / "source").stat().st_mode
    record = lock_down(paths, euid=1234)
    assert record["performed"] is False and "not root" in record["reason"]
    assert (tmp_path / "source").stat().st_mode == before


# ---------------------------------------------------------------- the four submissions


def test_a_correct_submission_gets_full_marks(runs):
    data = assert_gradescope_format(runs["correct"])
    assert data["score"] == max_points() > 0
    assert data["extra_data"]["status"] == "graded" and data["extra_data"]["submission_id"] == "4242"
    if data["extra_data"]["isolation"] == "bwrap":
        assert data["extra_data"]["network_reachable_from_child"] is False


def test_a_buggy_submission_loses_points_and_a_missing_exercise_scores_zero(runs):
    data = assert_gradescope_format(runs["buggy"])
    assert 0 < data["score"] < max_points()
    first, missing = EXERCISES[0].id, EXERCISES[-1].id
    score, top = exercise_scores(data, first)
    assert score < top, f"the bug in {first} went unnoticed"
    score, top = exercise_scores(data, missing)
    assert score == 0 < top
    assert all("not implemented" in test["output"] for test in data["tests"] if test["tags"] == [missing])


def test_a_syntax_error_scores_zero_with_one_message(runs):
    data = assert_gradescope_format(runs["syntax"])
    assert data["score"] == 0
    assert data["extra_data"]["status"] == "import_failed"
    messages = data["extra_data"]["messages"]
    assert len(messages) == 1 and "SyntaxError on line 3" in messages[0]
    assert messages[0].rstrip(".") in data["output"]


def test_a_hostile_submission_reads_nothing_and_earns_nothing(runs):
    assert_hostile_got_nothing(runs["hostile"])


def test_results_are_the_judges_and_say_how_the_child_ran(runs):
    for name in SUBMISSIONS:
        extra = runs[name]["data"]["extra_data"]
        if os.geteuid() == 0:
            assert extra["lockdown"]["performed"] is True and extra["child_uid_dropped"] is True
        else:
            assert extra["lockdown"]["performed"] is False and extra["child_uid_dropped"] is False


# ---------------------------------------------------------------- Gradescope's container: the fallback


def test_the_fallback_as_root_grades_with_the_source_and_results_closed(runs):
    run = in_fallback_as_root(runs, "correct")
    extra = run["data"]["extra_data"]
    assert extra["isolation"] == "fallback" and extra["isolation_setting"] == "fallback"
    assert extra["child_uid_dropped"] is True and extra["child_uid"] not in (None, 0)
    paths = GradescopePaths(run["root"])
    for folder in (paths.source, paths.hidden_suite, paths.results):
        assert closed_to_others(folder), folder
    assert all(not path.stat().st_mode & 0o077 for path in paths.hidden_suite.rglob("*"))


def test_the_fallback_as_root_closes_the_gap_before_the_hostile_child_runs(runs):
    run = in_fallback_as_root(runs, "hostile")
    assert run["data"]["extra_data"]["isolation"] == "fallback"
    # The gap: as unpacked, any uid (a child's too) could read the hidden suite ...
    assert run["suite_readable_before"] is True
    # ... and run_autograder closed it before grading (the hostile read nothing: its own test).
    assert run["suite_readable_after"] is False
