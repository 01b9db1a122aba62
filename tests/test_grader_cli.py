"""``python -m grader``: grade (ids, gradebook, results.json, reruns, atomic writes), validate,
release (the student bundle) and public-test grading inside a bundle.

Grading goes through the sandbox, so most tests need bubblewrap (skip locally with the reason,
fail under CI=true). The stand-in ``ProbeSuite`` keeps grading short; ``validate`` runs the real
hidden suite and mutants.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from grader import cli
from grader.api import load_submission, submission_id_for
from grader.mutants import list_mutants
from grader.release import ReleaseError, build_bundle
from grader.suite.promises import all_promises, kind_of_mutant
from grader.vocabulary import PromiseKind
from tests.grading_fixtures import shared_judges
from tests.hostile._support import PROBE_MAX, reference_submission, require_bwrap

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def probe_suite():
    # `grade` runs on the grading service's judges, which load the suite by name.
    return "tests.hostile._support:ProbeSuite"


@pytest.fixture
def submissions(tmp_path):
    alice = tmp_path / "alice.py"
    alice.write_text(reference_submission())
    bob = tmp_path / "bob" / "exercises"  # a folder named exercises: the id is its parent's name
    bob.mkdir(parents=True)
    (bob / "attention.py").write_text(reference_submission() + "\ndel apply_rope\n")
    (bob / "test_attention.py").write_text("raise SystemExit('a test file is not part of the submission')\n")
    return [alice, bob]


def test_ids_come_from_file_stems_folder_names_and_the_parent_of_exercises(tmp_path):
    (tmp_path / "carol").mkdir()
    (tmp_path / "dave" / "exercises").mkdir(parents=True)
    (tmp_path / "erin.py").write_text("")
    assert submission_id_for(tmp_path / "carol") == "carol"
    assert submission_id_for(tmp_path / "dave" / "exercises") == "dave"
    assert submission_id_for(tmp_path / "erin.py") == "erin"


def test_test_files_and_conftest_are_not_part_of_a_submission(tmp_path):
    (tmp_path / "rope.py").write_text("x = 1\n")
    (tmp_path / "test_rope.py").write_text("")
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    assert sorted(load_submission(tmp_path).files) == ["rope.py"]


def test_two_paths_with_one_id_are_a_usage_error(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.py").write_text("")
    with pytest.raises(SystemExit) as stopped:
        cli.main(
            ["grade", str(tmp_path / "a" / "same.py"), str(tmp_path / "b" / "same.py"), "--out", str(tmp_path / "o")]
        )
    assert stopped.value.code == 2
    assert "same" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_help_states_the_default_timeout():
    help_text = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--help"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert help_text.returncode == 0
    assert "default 20" in " ".join(help_text.stdout.split())


# What ``grade``'s own process runs to hand submissions to its judges: the command, the service's
# client and its embedded cluster, and the hidden suite's fingerprint (a rerun compares it).
CLIENT_PATH = """
import sys
from grader.cli import grade, grading
from grader.service import GradingService
from grader.service import dispatch, embedded, service
assert len(grade.graded_suite_hash(None)) == 64
print(sorted(name for name in ("torch", "pandas", "sqlalchemy", "alembic") if name in sys.modules))
"""


def test_the_grade_command_hands_out_work_without_importing_torch_or_the_store():
    """torch is the judges' (a cold import costs seconds), and the store's (SQLAlchemy, Alembic) and
    pandas only an assignment's or the app's: without them the command starts its judges about a
    second sooner. The process that only hands out the work and writes the gradebook imports none."""
    run = subprocess.run(
        [sys.executable, "-c", CLIENT_PATH], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]", f"the client imported {run.stdout.strip()}"


def test_judges_that_fill_the_cores_get_one_each_and_fewer_or_more_are_left_to_the_kernel():
    from grader.service.cluster_config import judge_core

    cores = sorted(os.sched_getaffinity(0))
    assert [judge_core(index, len(cores)) for index in range(len(cores))] == [["--cpu", str(core)] for core in cores]
    assert judge_core(0, len(cores) + 1) == []
    if len(cores) > 1:
        assert judge_core(0, len(cores) - 1) == []  # several such clusters would share the first cores


def test_the_launcher_keeps_a_process_and_every_thread_it_starts_to_the_core_asked_for(tmp_path):
    """``grader.service.launch --cpu N`` sets the affinity before any thread starts, so Dask's threads
    and a judge's sandbox worker (a child) keep to core N too."""
    core = max(os.sched_getaffinity(0))
    scheduler_file = tmp_path / "scheduler.json"
    command = [sys.executable, "-m", "grader.service.launch", "scheduler", "--cpu", str(core)]
    arguments = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)]
    process = subprocess.Popen(
        [*command, *arguments],
        cwd=PROJECT_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not scheduler_file.exists():  # listening: its threads have started
            assert process.poll() is None and time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        threads = [thread.id for thread in psutil.Process(process.pid).threads()]
        assert len(threads) > 1
        assert [os.sched_getaffinity(thread) for thread in threads] == [{core}] * len(threads)
    finally:
        process.kill()
        process.wait()


def test_grade_writes_the_gradebook_and_gradescope_results_and_a_rerun_regrades_only_what_changed(
    submissions, tmp_path, probe_suite, capsys
):
    # One test, two runs of `grade`: the first starts its own judge (one: --jobs 2 with a judge each
    # is tests/test_grader_hostile.py's run) and writes everything, the second keeps the unchanged
    # submission and regrades the changed one.
    require_bwrap()
    out = tmp_path / "out"
    assert (
        cli.main(
            ["grade", *map(str, submissions), "--out", str(out), "--jobs", "1", "--timeout", "5"], suite=probe_suite
        )
        == 0
    )
    lines = (out / "gradebook.csv").read_text().splitlines()
    assert lines[0] == (
        "id,name,lms_id,late,status,attention,sinusoidal,learned,rope,alibi,t5,decode,extend,total,max,"
        "assignment,due,submitted_at,lms_late,counted,problems"  # the columns added after max
    )
    rows = {row["id"]: row for row in csv.DictReader(lines)}
    assert rows["alice"]["status"] == "graded" and float(rows["alice"]["total"]) == PROBE_MAX
    assert (rows["alice"]["name"], rows["alice"]["lms_id"], rows["alice"]["late"]) == ("", "", "false")  # a plain file
    assert rows["bob"]["rope"] == "0" and float(rows["bob"]["total"]) == PROBE_MAX - 2
    data = json.loads((out / "bob" / "results.json").read_text())
    assert set(data) >= {"score", "execution_time", "tests", "extra_data"}
    for test in data["tests"]:
        assert set(test) == {"name", "score", "max_score", "status", "output", "visibility", "tags"}
        assert test["status"] in ("passed", "failed") and len(test["tags"]) == 1
    rope = [test for test in data["tests"] if test["tags"] == ["rope"]][0]
    assert "not implemented" in rope["output"]
    assert {"grader_version", "suite_hash", "submission_hash", "isolation"} <= set(data["extra_data"])
    assert data["extra_data"]["isolation"] == "bwrap"
    captured = capsys.readouterr()
    assert "2/2" in captured.err  # the progress bar
    assert "alice" in captured.out and "isolation" in captured.out  # the summary table
    assert [p.name for p in out.rglob("*.tmp")] == []

    first = {name: (out / name / "results.json").read_text() for name in ("alice", "bob")}
    (submissions[1] / "attention.py").write_text(reference_submission())  # bob now has rope too
    with shared_judges() as scheduler:  # the first run started judges of its own; this one uses a cluster's
        assert (
            cli.main(["grade", *map(str, submissions), "--out", str(out), "--scheduler", scheduler], suite=probe_suite)
            == 0
        )
    assert "1 submission(s) unchanged" in capsys.readouterr().err, "the rerun did not keep alice's result"
    assert (out / "alice" / "results.json").read_text() == first["alice"]
    assert json.loads((out / "bob" / "results.json").read_text())["score"] == PROBE_MAX, "bob was not regraded"
    rows = {row["id"]: row for row in csv.DictReader((out / "gradebook.csv").open())}
    assert float(rows["alice"]["total"]) == PROBE_MAX and float(rows["bob"]["total"]) == PROBE_MAX


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "gradebook.csv"
    cli.atomic_write(target, "old,complete\n")

    def broken_fsync(fd):
        raise KeyboardInterrupt  # as if the run were stopped mid-write

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(KeyboardInterrupt):
        cli.atomic_write(target, "new," * 100_000)
    assert target.read_text() == "old,complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"]


def test_validate_passes_with_the_real_suite_and_the_mutants_of_the_exercises_asked_for(capsys):
    # Every mutant is judged in tests/test_suite_scores.py; this checks the command, in this process
    # (--help runs the real command line), on the mutants of two exercises with no deliberately slow
    # mutant (one waits out its exercise's speed tests: t5's, 8 s; rope's loop too), with one worker (a second one only
    # imports torch again). The reference is graded on all eight exercises (20 points each), each
    # mutant on its own exercise.
    require_bwrap()
    exercises = ("learned", "extend")
    code = cli.main(["validate", "--jobs", "1", *(f"--exercise={exercise}" for exercise in exercises)])
    run = capsys.readouterr()
    assert code == 0, run.out[-3000:] + run.err[-3000:]
    rows = [line.split() for line in run.out.splitlines()]
    verdicts = {row[0]: tuple(row[1:]) for row in rows if len(row) >= 4 and row[-1] in ("caught", "marks")}
    asked = {mutant.name: mutant.exercise for mutant in list_mutants() if mutant.exercise in exercises}
    assert verdicts.pop("reference") == ("all", "160/160", "full", "marks")
    assert {name: (verdict[0], verdict[-1]) for name, verdict in verdicts.items()} == {
        name: (exercise, "caught") for name, exercise in asked.items()
    }
    assert all(verdict[1].endswith("/20") for verdict in verdicts.values()), verdicts  # its exercise alone
    assert f"{len(asked)} mutants, 0 problem(s)" in run.out
    table = all_promises()
    kinds = Counter(kind_of_mutant(name, table) for name in asked)
    assert kinds[PromiseKind.BEHAVIOUR] and kinds[PromiseKind.DOMAIN] and kinds[PromiseKind.ERROR]
    by_kind = ", ".join(f"{kind} {count}/{count}" for kind in PromiseKind if (count := kinds[kind]))
    assert f"by kind of promise: {by_kind}" in run.out


def test_validate_says_which_exercises_it_knows(capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["validate", "--exercise", "bogus"])
    said = capsys.readouterr().err
    assert stopped.value.code == 2 and "invalid choice: 'bogus'" in said and "decode" in said


# ---------------------------------------------------------------- the student bundle


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    target = tmp_path_factory.mktemp("release") / "bundle"
    build_bundle(target)
    return target


def test_the_bundle_has_the_course_and_no_instructor_material(bundle):
    files = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()}
    for needed in (
        "app.py",
        "grader/api.py",
        "grader/sandbox/__init__.py",
        "grader/sandbox/session.py",
        "grader/sandboxed/worker.py",
        "grader/sandboxed/child.py",
        "grader/sandboxed/protocol.py",
        "grader/student.py",
        "poslab/exercises.py",
        ".streamlit/config.toml",
        "requirements.txt",
        ".poslab-bundle",
    ):
        assert needed in files, needed
    assert any(name.startswith("app_pages/") for name in files)
    for name in files:
        assert not name.startswith(("tests/", ".git/", "grader/mutants/", "grader/suite/", "grader/lms/", ".ci/")), name
        assert not name.startswith(("grader/cli/", "grader/cli.py", "grader/__main__.py")), name
        assert "instructor" not in name, name
        assert "__pycache__" not in name


def test_a_release_refuses_a_folder_with_something_in_it(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ReleaseError):
        build_bundle(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_a_bundle_grades_against_public_tests_in_the_sandbox(bundle, tmp_path):
    """Inside the bundle (no hidden suite there), public tests run with pytest in the sandbox."""
    require_bwrap()
    public = tmp_path / "public"
    public.mkdir()
    (public / "test_alibi.py").write_text(
        textwrap.dedent("""
        import torch
        from alibi import alibi_slopes

        def test_eight_heads():
            assert torch.allclose(alibi_slopes(8), 2.0 ** -torch.arange(1.0, 9.0))

        def test_one_head():
            assert alibi_slopes(1).shape == (1,)

        def test_sixteen_heads_start_at_2_to_the_minus_half():
            assert alibi_slopes(16)[0] == 2.0 ** -0.5, "the first of 16 slopes is 2^-0.5"
    """)
    )
    student = tmp_path / "student"
    student.mkdir()
    (student / "alibi.py").write_text(
        "import torch\n\ndef alibi_slopes(n_heads):\n    return 2.0 ** -torch.arange(1.0, n_heads + 1.0)\n"
    )
    program = textwrap.dedent(f"""
        import json
        from pathlib import Path
        from grader.api import Grader, load_submission, running_in_bundle
        assert running_in_bundle()
        with Grader(mode="public", public_tests_dir=Path({str(public)!r})) as grading:
            print(grading.grade(load_submission({str(student)!r})).to_json())
    """)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", program], cwd=bundle, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(run.stdout)
    assert data["public_tests_only"] is True and data["isolation"] == "bwrap"
    outcomes = {test["name"].split("::")[-1]: test for test in data["tests"]}
    assert outcomes["test_eight_heads"]["status"] == "passed"
    assert outcomes["test_one_head"]["status"] == "passed"
    failed = outcomes["test_sixteen_heads_start_at_2_to_the_minus_half"]
    assert failed["status"] == "failed" and "2^-0.5" in failed["output"] and failed["score"] == 0
    assert all(test["exercise"] == "alibi" for test in data["tests"])


BUNDLE_APP_CHECK = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120).run()
assert not at.exception, at.exception
import poslab, grader
assert poslab.__file__.startswith(sys.argv[1]), poslab.__file__  # the bundle's own copy, not the checkout's
print("TITLES", [t.value for t in at.title])
"""


def test_the_bundle_app_starts_on_its_own_without_the_instructor_page(bundle, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["POSLAB_DB_URL"] = f"sqlite:///{tmp_path / 'bundle.db'}"
    run = subprocess.run(
        [sys.executable, "-c", BUNDLE_APP_CHECK, str(bundle)],
        cwd=bundle,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "TITLES ['Position Lab']" in run.stdout
    assert not (bundle / "app_pages" / "instructor.py").exists()
