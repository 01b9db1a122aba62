"""Hostile submissions (tests/hostile/*.py), one test per guard of the sandbox.

All of them are graded in ONE run of the CLI, each followed in the queue by a copy of a correct
submission: the grader must survive every one, score it 0 where it cheats, and leave every
correct neighbour at full marks. A small stand-in suite (``ProbeSuite``) keeps the run short;
what is tested is the sandbox, not the hidden tests. Needs bubblewrap: skips with the reason
where it is unusable, fails under CI=true.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from grader import cli
from grader.settings import GraderSettings
from tests.hostile._support import (
    HOSTILE_UID_BASE,
    PROBE_MAX,
    reference_submission,
    require_bwrap,
    sandbox_uids_alive,
)

HOSTILE_DIR = Path(__file__).parent / "hostile"
HOSTILE = sorted(path.stem for path in HOSTILE_DIR.glob("[a-z]*.py"))
SECRET = "SECRET-INSTRUCTOR-TOKEN-7f3a9c"
TIMEOUT = 4.0  # per exercise (at 3 s a loaded machine cut a well-behaved probe short)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Grade every hostile file and its good neighbour in one CLI run; return the output folder."""
    require_bwrap()
    root = tmp_path_factory.mktemp("hostile")
    subs = root / "subs"
    subs.mkdir()
    (root / "secret_instructor.txt").write_text(SECRET)  # beside the submissions, outside them
    paths = []
    for name in HOSTILE:
        source = (HOSTILE_DIR / f"{name}.py").read_text()
        if name == "nondaemon_thread":  # otherwise correct: it must score full marks
            source = reference_submission() + "\n\n" + source
        (subs / f"{name}.py").write_text(source)
        (subs / f"good_after_{name}.py").write_text(reference_submission())
        paths += [subs / f"{name}.py", subs / f"good_after_{name}.py"]
    listing_before = sorted(p.name for p in subs.iterdir())
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:  # uids that no other test's sandboxes get
        patch.setenv("POSLAB_GRADER_UID_BASE", str(HOSTILE_UID_BASE))
        code = cli.main(
            ["grade", *map(str, paths), "--out", str(out), "--jobs", "2", "--timeout", str(TIMEOUT)],
            suite="tests.hostile._support:ProbeSuite",
        )
        alive_after = sandbox_uids_alive(GraderSettings.from_env().uid_base)
    assert code == 0
    return {"root": root, "out": out, "listing_before": listing_before, "alive_after": alive_after}


def result(run, name: str) -> dict:
    return json.loads((run["out"] / name / "results.json").read_text())


def outputs(run, name: str) -> str:
    data = result(run, name)
    return " ".join(test["output"] for test in data["tests"]) + " " + " ".join(data["extra_data"]["messages"])


def assert_zero(run, name: str) -> None:
    data = result(run, name)
    assert data["score"] == 0, f"{name} scored {data['score']}"
    assert data["extra_data"]["isolation"] == "bwrap"


def test_every_good_neighbour_scores_full_marks(run):
    for name in HOSTILE:
        data = result(run, f"good_after_{name}")
        assert data["score"] == PROBE_MAX, f"the neighbour of {name} lost points: {data['tests']}"


def test_no_sandboxed_process_outlives_the_run(run):
    assert run["alive_after"] == []


def test_busy_loop_at_import_is_stopped_by_the_time_limit(run):
    assert_zero(run, "busy_import")
    assert result(run, "busy_import")["extra_data"]["status"] == "import_failed"
    assert "time limit" in outputs(run, "busy_import")


def test_an_8_gib_allocation_fails_inside_the_child(run):
    assert_zero(run, "alloc_8gib")
    text = outputs(run, "alloc_8gib")
    assert "allocate" in text or "MemoryError" in text


def test_sys_exit_at_import_is_an_import_failure(run):
    assert_zero(run, "sys_exit_import")
    assert result(run, "sys_exit_import")["extra_data"]["status"] == "import_failed"
    assert "sys.exit()" in outputs(run, "sys_exit_import")


def test_os_exit_in_a_call_counts_as_a_crash_not_a_success(run):
    assert_zero(run, "os_exit_call")
    assert "ended during a call" in outputs(run, "os_exit_call")


def test_patching_allclose_in_the_child_changes_nothing_for_the_judge(run):
    assert_zero(run, "patch_allclose")


def test_files_outside_the_submission_do_not_reach_the_output(run):
    assert_zero(run, "read_files")
    text = outputs(run, "read_files")
    assert "LOOT: environment:" in text  # its messages did come back: it looked, and found nothing
    assert SECRET not in text
    suite_line = "MAX_STUDENT_MESSAGE"  # a line of the hidden suite's code
    assert suite_line not in text
    assert str(run["root"]) not in text  # not even the host path of its own folder


def test_fake_gradebooks_land_nowhere(run):
    assert_zero(run, "fake_gradebook")
    gradebooks = sorted(run["root"].rglob("gradebook.csv"))
    assert gradebooks == [run["out"] / "gradebook.csv"]
    rows = {row["id"]: row for row in csv.DictReader((run["out"] / "gradebook.csv").open())}
    assert rows["fake_gradebook"]["total"] == "0"
    assert sorted(p.name for p in (run["root"] / "subs").iterdir()) == run["listing_before"]
    assert not Path("/tmp/gradebook.csv").exists() and not Path("/tmp/out/gradebook.csv").exists()


def test_a_fork_bomb_is_contained_and_cleaned_up(run):
    assert_zero(run, "fork_bomb")
    assert run["alive_after"] == []


def test_100_mb_on_stdout_and_in_messages_is_capped(run):
    assert_zero(run, "stdout_flood")
    data = result(run, "stdout_flood")
    assert max(len(test["output"]) for test in data["tests"]) < 5000


def test_a_printed_pytest_summary_is_ignored(run):
    assert_zero(run, "fake_pytest_summary")


def test_ignoring_sigterm_and_sigalrm_does_not_outlast_the_time_limit(run):
    assert_zero(run, "ignore_signals")
    assert "time limit" in outputs(run, "ignore_signals")
    assert result(run, "ignore_signals")["execution_time"] < 2 * 5 * TIMEOUT


def test_a_non_daemon_thread_neither_blocks_grading_nor_costs_points(run):
    data = result(run, "nondaemon_thread")
    assert data["score"] == PROBE_MAX
    assert run["alive_after"] == []


def test_every_hostile_file_has_a_test_here():
    """A new file in tests/hostile/ needs its own test in this module."""
    source = Path(__file__).read_text()
    missing = [name for name in HOSTILE if f'"{name}"' not in source]
    assert missing == []
