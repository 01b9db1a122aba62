"""The fallback isolation (no bubblewrap: what runs in Gradescope's container): it grades a whole
submission and says so, and as root its children run under a uid of their own that nothing outlives."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from grader.api import load_submission
from grader.sandbox import SubmissionSandbox, WorkerProcess
from grader.student import SubmissionCrashed
from tests.hostile._support import PROBE_MAX, ProbeSuite, reference_submission
from tests.test_sandbox_grading import SETTINGS, grading_on


@pytest.fixture(scope="module")
def fallback():
    process = WorkerProcess(SETTINGS, isolation="fallback")
    yield process
    process.close()


def test_the_fallback_grades_a_full_submission_and_says_so(fallback):
    with grading_on(fallback, SETTINGS.with_changes(isolation="fallback"), suite=ProbeSuite) as grading:
        result = grading.grade(load_submission({"mine.py": reference_submission()}))
    assert (result.score, result.isolation) == (PROBE_MAX, "fallback")


@pytest.mark.skipif(os.geteuid() != 0, reason="the fallback drops to a child uid only when run as root")
def test_the_fallback_kills_a_setsid_grandchild_and_a_busy_call(fallback):
    source = textwrap.dedent("""
        import os, time, torch

        def alibi_slopes(n_heads):
            if os.fork() == 0:
                os.setsid()
                time.sleep(600)
            return torch.tensor([float(os.getuid())])

        def alibi_bias(n_heads, seq_len):
            while True:
                pass
    """)
    sandbox = SubmissionSandbox(fallback, {"s.py": source}, SETTINGS.timeout)
    student = sandbox.for_exercise(["s.py"], ["alibi_slopes", "alibi_bias"])
    uid = int(student.alibi_slopes(1).item())
    with pytest.raises(SubmissionCrashed):
        student.alibi_bias(1, 1)
    sandbox.close()
    assert uid >= SETTINGS.uid_base
    deadline = time.monotonic() + 5  # a SIGKILL is sent at close; under load its exit takes a moment
    while (left := [pid for pid in os.listdir("/proc") if pid.isdigit() and _real_uid(pid) == uid]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert left == []


def _real_uid(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
