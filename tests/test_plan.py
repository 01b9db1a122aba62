"""The planned shared calls (``grader.suite.plan``): made ahead, handed to the test that asks for the same
values, and changing no grade. In process, on trusted code; the pipelined calls through the sandbox are
test_grader_sandbox.py's, a whole grading with them test_sandbox_grading.py's."""

from __future__ import annotations

import pytest
import torch

import grader.suite as hidden
from grader.mutants import list_mutants, reference_source
from grader.suite.draw import answer
from grader.suite.local import LocalStudent
from grader.suite.plan import ANSWERS_ATTRIBUTE, PREFETCHED_ATTRIBUTE, planned_calls, prefetch, same_arguments
from poslab.exercises import EXERCISE_IDS


class CountingStudent(LocalStudent):
    """The reference, counting the calls it is asked to make."""

    def __init__(self, namespace) -> None:
        super().__init__(namespace)
        self.calls = 0

    def call(self, op, *args, **kwargs):
        self.calls += 1
        return super().call(op, *args, **kwargs)


@pytest.fixture(scope="module")
def plans() -> dict:
    hidden.prepare()  # what a judge does when it warms up: draw, then plan
    return {exercise: planned_calls(exercise) for exercise in EXERCISE_IDS}


def run_exercise(student, exercise: str) -> list:
    return [
        (outcome.name, outcome.status, outcome.score, outcome.output)
        for case in hidden.collect()
        if case.exercise == exercise
        for outcome in [hidden.run_case(case, student)]
    ]


def test_every_exercise_plans_its_shared_calls_once_each(plans):
    for exercise, plan in plans.items():
        assert plan, f"{exercise}: no shared call planned"
        keys = [call.key for call in plan]
        assert len(set(keys)) == len(keys), f"{exercise}: a call planned twice"
        assert all(call.key[0] == call.op for call in plan)


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_the_reference_takes_every_planned_answer_and_asks_for_none_again(plans, exercise):
    student = CountingStudent.from_source(reference_source())
    made_ahead = prefetch(student, exercise)
    assert made_ahead == len(plans[exercise]) and student.calls == made_ahead
    alone = CountingStudent.from_source(reference_source())
    run_exercise(alone, exercise)
    student.calls = 0
    run_exercise(student, exercise)
    assert student.__dict__[PREFETCHED_ATTRIBUTE] == {}, "a planned call that no test asked for"
    assert student.calls == alone.calls - made_ahead  # the tests' own calls, and not one shared call again


def test_a_test_that_asks_with_other_values_than_planned_gets_a_fresh_call(plans):
    student = CountingStudent.from_source(reference_source())
    key, given = ("sinusoidal", 4, 2), {"seq_len": 4}
    student.__dict__[ANSWERS_ATTRIBUTE] = {
        ("sinusoidal_encoding", *key): (student.call("sinusoidal_encoding", 3, 2), None)
    }
    student.__dict__[PREFETCHED_ATTRIBUTE] = {("sinusoidal_encoding", *key): ((3, 2), {})}
    table = answer(student, key, "sinusoidal_encoding", given["seq_len"], 2).output
    assert table.shape == (4, 2) and student.calls == 2


def test_same_arguments_compares_values_bit_for_bit():
    x = torch.tensor([0.0, float("nan")])
    assert same_arguments(((x,), {"base": 2.0}), (x.clone(),), {"base": 2.0})  # NaN where NaN was
    assert not same_arguments(((x,), {}), (torch.tensor([-0.0, float("nan")]),), {})  # -0.0 is another value
    assert not same_arguments(((x,), {}), (x.double(),), {})
    assert not same_arguments(((x,), {"base": 2.0}), (x,), {"base": 3.0})
    assert not same_arguments(((1,), {}), (True,), {})  # a bool is not the int it equals


def test_prefetching_changes_no_grade(plans):
    """The reference and every named mutant of decode, whose tests fall back to more calls than any other's
    (the slow ones aside: a speed test's words hold times): the same outcome for every test, word for word."""
    mutants = [mutant.source for mutant in list_mutants() if mutant.exercise == "decode" and not mutant.slow]
    assert len(mutants) > 10
    for source in (reference_source(), *mutants):
        ahead = LocalStudent.from_source(source)
        prefetch(ahead, "decode")
        assert run_exercise(ahead, "decode") == run_exercise(LocalStudent.from_source(source), "decode")
