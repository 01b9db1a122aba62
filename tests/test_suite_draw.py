"""grader/suite/draw.py: inputs drawn by Hypothesis, the same in every process, and reported only by
visible tests."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from hypothesis import strategies as st

from grader.suite import graded, run_case
from grader.suite.draw import answer, drawn, for_each
from grader.suite.expect import expect
from grader.suite.inputs import randn
from grader.suite.local import LocalStudent
from poslab.config import PROJECT_ROOT

DRAW_IN_A_FRESH_PROCESS = """
import hashlib, sys
sys.path.insert(0, sys.argv[1])
if len(sys.argv) > 2:
    sys.path.insert(0, sys.argv[2])
    import local_constants  # a project module full of literals Hypothesis could collect
from grader.suite.draw import drawn
from grader.suite.attention.domains import attention_cases
from grader.suite.t5.domains import bucket_cases
cases = repr(drawn("a", attention_cases(), 8)) + repr(drawn("b", bucket_cases(), 8))
print(hashlib.sha256(cases.encode()).hexdigest())
"""


def test_the_same_cases_in_every_process_whatever_it_has_loaded(tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "local_constants.py").write_text("A = 123457\nB = 3.75\nC = 31\nD = 0.013\nE = 17\n")
    runs = [
        subprocess.run(
            [sys.executable, "-c", DRAW_IN_A_FRESH_PROCESS, str(PROJECT_ROOT), *more],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={"PYTHONHASHSEED": seed},
        )
        for more, seed in (((), "1"), ((str(extra),), "2"))
    ]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    assert runs[0].stdout == runs[1].stdout
    assert not (tmp_path / ".hypothesis").exists()  # nothing written where the judge runs


def test_a_draw_is_bounded_and_starts_from_the_simplest_case():
    cases = drawn("tests.small", st.integers(0, 1000), 5)
    assert len(cases) == 5 and cases[0] == 0
    assert drawn("tests.small", st.integers(0, 1000), 5) is cases  # drawn once per process
    assert len(drawn("tests.tiny", st.sampled_from([1, 2]), 10)) == 2  # a smaller domain gives fewer


class Case(int):
    def describe(self) -> str:
        return f"n = {int(self)}"


def make_test(visibility: str):
    @graded(points=1, family="values", visibility=visibility, exercise="alibi")
    @for_each(st.integers(0, 50).map(Case), count=6, key=f"tests.report.{visibility}")
    def test_below_ten(student, case):
        """A property that fails for large cases."""
        expect(case < 10, "too large")

    return test_below_ten


@pytest.mark.parametrize("visibility", ["visible", "hidden"])
def test_only_a_visible_test_shows_its_failing_input(visibility):
    from grader.suite import TestCase

    func = make_test(visibility)
    case = TestCase("alibi: below ten", "alibi", 1.0, visibility, "values", func)
    outcome = run_case(case, LocalStudent({}))
    assert outcome.status == "failed"
    if visibility == "visible":
        assert outcome.output.startswith("too large (Failing input: n = ") and outcome.output.endswith(".)")
    else:
        assert outcome.output == "too large"


def test_answers_are_shared_by_key_and_errors_replayed():
    calls = []

    def slopes(n):
        calls.append(n)
        if n == 0:
            raise ValueError("no heads")
        return [0.5] * n

    student = LocalStudent({"alibi_slopes": slopes})
    first, again = answer(student, ("k", 2), "alibi_slopes", 2), answer(student, ("k", 2), "alibi_slopes", 2)
    assert first is again and calls == [2]
    for _ in range(2):
        with pytest.raises(Exception, match="no heads"):
            answer(student, ("k", 0), "alibi_slopes", 0)
    assert calls == [2, 0]


def test_edges_come_first_in_every_run_and_are_drawn_ahead():
    seen: list[int] = []
    edges = st.tuples(st.just(Case(900)), st.integers(901, 999).map(Case))

    @for_each(st.integers(0, 50).map(Case), count=3, key="tests.edges", edges=edges)
    def record(student, case):
        seen.append(int(case))

    record(LocalStudent({}))
    assert seen[0] == 900 and 901 <= seen[1] <= 999 and all(case <= 50 for case in seen[2:]) and len(seen) == 5
    assert record.prepare() == tuple(Case(case) for case in seen)  # the suite's warm-up draws the edges too
    seen.clear()
    record(LocalStudent({}))
    assert seen[:2] == [900, record.prepare()[1]]  # the same boundaries in every run


def test_a_seeded_input_is_the_seeds_draw_and_each_test_gets_its_own_copy():
    """Inputs are kept between gradings; a test that changes its tensor in place changes no other test's."""
    drawn = torch.randn(3, 4, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    first = randn(3, 4, seed=7, dtype=torch.float64)
    first.add_(1.0)
    again = randn(3, 4, seed=7, dtype=torch.float64)
    assert torch.equal(again, drawn) and not torch.equal(first, again)
    assert torch.equal(randn(3, 4, seed=7, scale=2.0), (2.0 * drawn).float())
