"""grader.suite's plumbing: collect(), @graded, run_case() and its outcomes, suite_hash()."""

from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict

import pytest
import torch

import grader.suite as suite
from grader.results import TestOutcome
from grader.student import CallResult, CannotCheck, NotImplementedBySubmission, Student, StudentError, SubmissionCrashed
from grader.suite import VISIBILITIES, TestCase, collect, graded, run_case, suite_hash
from grader.suite.expect import Fail, within
from poslab.exercises import EXERCISE_IDS


def test_collect_finds_graded_tests_for_every_exercise():
    cases = collect()
    assert {case.exercise for case in cases} == set(EXERCISE_IDS)
    assert len({case.name for case in cases}) == len(cases)
    assert all(case.points > 0 and case.visibility in VISIBILITIES and case.family for case in cases)
    assert [case.exercise for case in cases] == sorted((c.exercise for c in cases), key=EXERCISE_IDS.index)


def test_twenty_points_per_exercise():
    totals = defaultdict(float)
    for case in collect():
        totals[case.exercise] += case.points
    assert dict(totals) == {exercise: 20.0 for exercise in EXERCISE_IDS}


def test_every_property_family_has_a_visible_test_in_each_exercise():
    families = defaultdict(set)
    for case in collect():
        families[(case.exercise, case.family)].add(case.visibility)
    missing = [key for key, visibilities in families.items() if "visible" not in visibilities]
    assert not missing
    assert any(case.visibility == "hidden" for case in collect())


def test_every_test_states_its_property_in_one_line():
    for case in collect():
        assert 20 <= len(case.statement) <= 130, case.name


def test_graded_refuses_bad_declarations():
    with pytest.raises(ValueError, match="visibility"):
        graded(points=1, family="x", visibility="secret")
    with pytest.raises(ValueError, match="points"):
        graded(points=0, family="x")
    with pytest.raises(ValueError, match="unknown exercise"):
        graded(points=1, family="x", exercise="nope")


class NoStudent(Student):
    def call(self, op, *args, **kwargs):
        raise AssertionError("not used")

    def call_overhead_seconds(self):
        return 0.0


def case_raising(error: BaseException | None) -> TestCase:
    def test_something(student):
        """The property under test holds."""
        if error is not None:
            raise error

    return TestCase("rope: something", "rope", 2.0, "visible", "values", test_something)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (None, "Passed: The property under test holds."),
        (Fail("Rotate counter-clockwise."), "Rotate counter-clockwise."),
        (AssertionError(), "Failed: The property under test holds."),
        (NotImplementedBySubmission("apply_rope"), "apply_rope is not implemented yet"),
        (SubmissionCrashed("ran past the 20 s time limit for this exercise"), "ran past the 20 s time limit"),
        (StudentError("ValueError", "D must be even"), "your code raised ValueError: D must be even"),
        (IndexError("index 37 is out of bounds for dimension 0 with size 12"), "could not be checked"),
        (
            CannotCheck("the module has no parameter (and no buffer) of shape [max_len, d_model]"),
            "The grader could not check that the property under test holds: the module has no parameter",
        ),
    ],
)
def test_run_case_turns_every_ending_into_an_outcome(error, expected):
    outcome = run_case(case_raising(error), NoStudent())
    assert expected in outcome.output
    assert (outcome.status, outcome.score) == (("passed", 2.0) if error is None else ("failed", 0.0))
    assert (outcome.max_score, outcome.visibility, outcome.family, outcome.exercise) == (
        2.0,
        "visible",
        "values",
        "rope",
    )


def test_a_failed_case_adds_the_graders_notes_once_and_a_passed_one_none():
    class NotingStudent(NoStudent):
        def call(self, op, *args, **kwargs):
            return self.noted(CallResult(None, notes=("this test converted it to a tensor",) * 2))

    def calls_then(error):
        def test_something(student):
            """The property under test holds."""
            student.call("apply_rope")
            if error is not None:
                raise error

        return TestCase("rope: something", "rope", 2.0, "visible", "values", test_something)

    failed = run_case(calls_then(Fail("Rotate counter-clockwise.")), NotingStudent())
    assert failed.output == "Rotate counter-clockwise. (Note: this test converted it to a tensor.)"
    assert run_case(calls_then(None), NotingStudent()).output == "Passed: The property under test holds."
    # Notes of one case never reach the next.
    student = NotingStudent()
    run_case(calls_then(None), student)
    assert run_case(case_raising(Fail("No call.")), student).output == "No call."


def test_a_pass_that_an_inflated_reference_time_allows_is_checked_again(monkeypatch):
    """A reference timed during a spike of load gives a generous budget; a slow submission must not
    pass on it (``validate`` once passed a Python loop this way under load)."""
    import grader.suite.timing as timing

    spikes = iter([0.05] * 5)  # the first full measurement: 50 ms each time; later ones 1 ms

    def reference():
        time.sleep(next(spikes, 0.001))

    class SlowStudent(NoStudent):
        def call_overhead_seconds(self):
            return 0.0

        def call(self, op, *args, **kwargs):
            return CallResult(None, wall_seconds=0.6)  # a loop: over the floor, under 0.25 + 20 * 0.05

    monkeypatch.setattr(timing, "_reference_best", {})
    with pytest.raises(Fail, match="took 0.60 s"):
        timing.expect_fast(SlowStudent(), "apply_rope", reference)


def test_the_reference_is_timed_once_per_shape_and_dtype_of_its_tensors(monkeypatch):
    """Two calls whose tensors share a shape and dtype share the reference's time; another shape
    (whose printed summary could look the same) gets its own."""
    import grader.suite.timing as timing

    timed = []

    class FastStudent(NoStudent):
        def call_overhead_seconds(self):
            return 0.0

        def call(self, op, *args, **kwargs):
            return CallResult(None, wall_seconds=0.0)

    def reference(label):
        return lambda: timed.append(label)

    monkeypatch.setattr(timing, "_reference_best", {})
    timing.expect_fast(FastStudent(), "apply_rope", reference("a"), torch.zeros(1, 1, 2000, 2))
    timing.expect_fast(FastStudent(), "apply_rope", reference("b"), torch.ones(1, 1, 2000, 2))
    timing.expect_fast(FastStudent(), "apply_rope", reference("c"), torch.zeros(1, 1, 2001, 2))
    timing.expect_fast(FastStudent(), "apply_rope", reference("d"), torch.zeros(1, 1, 2000, 2).double())
    assert set(timed) == {"a", "c", "d"}


def test_a_complex_answer_to_a_real_expectation_needs_its_imaginary_part_to_vanish():
    expected = torch.tensor([1.0, 2.0])
    assert within(torch.tensor([1.0 + 0j, 2.0 + 0j]), expected, 1e-6)
    assert not within(torch.tensor([1.0 + 0.5j, 2.0 + 0j]), expected, 1e-6)  # the real parts alone would pass
    assert not within(torch.tensor([1.5 + 0j, 2.0 + 0j]), expected, 1e-6)


def test_unexpected_errors_do_not_leak_their_text():
    outcome = run_case(case_raising(RuntimeError("size of tensor a (37) must match b (12)")), NoStudent())
    assert "37" not in outcome.output and "RuntimeError" in outcome.output


def test_long_student_messages_are_shortened():
    outcome = run_case(case_raising(StudentError("ValueError", "x" * 5000)), NoStudent())
    assert len(outcome.output) < 600


def test_case_outcome_round_trips_through_json():
    outcome = run_case(case_raising(Fail("No.")), NoStudent())
    assert TestOutcome.from_dict(json.loads(json.dumps(outcome.to_dict()))) == outcome


def test_suite_hash_is_stable_and_follows_the_sources(tmp_path, monkeypatch):
    first = suite_hash()
    assert first == suite_hash() and len(first) == 64
    copy = tmp_path / "grader" / "suite"
    shutil.copytree(suite.SUITE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(suite, "SUITE_DIR", copy)
    assert suite_hash() != first  # the reference sources are not next to the copy
    before = suite_hash()
    (copy / "rope" / "test_rope.py").write_text((copy / "rope" / "test_rope.py").read_text() + "\n# changed\n")
    assert suite_hash() != before
