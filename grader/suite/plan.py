"""The shared calls of an exercise, planned once per process and made at the start of each grading.

Most calls of a grading go through ``draw.answer``: a drawn case's call, shared by the tests that judge
it. Which calls those are depends on the drawn cases alone, so one run of the exercise's tests on the
app's own encodings, in this process, lists them (``planned_calls``). ``prefetch`` makes them all before
the exercise's first test, each small call sent while the child still works on the one before
(``Student.call_many``): the child does not sleep between calls, and the judge checks each answer while
the child computes the next. ``answer`` hands an answer to a test only when the test asks with the
planned values (else it calls again).

The plan is the same for every submission: a grade depends on the submission alone, never on the one
graded before. A wrong submission may be asked a planned call that its own failing tests would have
skipped; that changes nothing for a function of its arguments. A call that hangs is given up after
``PREFETCH_CALL_SECONDS`` at no cost to the exercise's time (the test that asks makes it again), and the
submission's later exercises then make no call ahead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import torch

from grader.argument_layout import Viewed
from grader.student import NAME_OF_OP, NotImplementedBySubmission, Student, SubmissionCrashed

# A planned call that takes longer is left to the test that asks for it, and the submission's later exercises
# make none ahead. A drawn case is small: the reference answers in milliseconds, a loop over positions in tens.
PREFETCH_CALL_SECONDS = 0.5
ANSWERS_ATTRIBUTE = "_drawn_answers"  # on a student: draw.answer's memo, (op, *key) -> (result, exception)
PLAN_ATTRIBUTE = "_planned_calls"  # on a student that records its answer() calls (the planning run)
PREFETCHED_ATTRIBUTE = "_prefetched"  # memo key -> the planned (args, kwargs), until a test asks


@dataclass(frozen=True)
class PlannedCall:
    key: tuple  # answer()'s memo key: (op, *the test's key)
    op: str
    args: tuple
    kwargs: dict


_plans: dict[str, tuple[PlannedCall, ...]] = {}
_lock = threading.Lock()  # judging threads share this process


def planned_calls(exercise: str) -> tuple[PlannedCall, ...]:
    """The calls ``answer`` makes when the exercise's tests grade the reference, in order (once per process:
    ``grader.suite.prepare()`` plans every exercise, as it draws, when a judge warms up)."""
    with _lock:
        if exercise not in _plans:
            _plans[exercise] = _plan(exercise)
        return _plans[exercise]


def _plan(exercise: str) -> tuple[PlannedCall, ...]:
    import poslab.encodings as reference  # the app's own encodings: what a judge has (no instructor module)
    from grader.suite import collect, run_case
    from grader.suite.local import LocalStudent
    from poslab.exercises import get_exercise

    class PlanningStudent(LocalStudent):
        """The reference, minus the meta device: its first call here imports torch._dynamo (over a second of a
        judge's start); a test that fails on it just plans no later calls (they are made when asked)."""

        def call(self, op: str, *args: Any, **kwargs: Any):
            if kwargs.get("device") == "meta" or any(_on_meta(value) for value in (*args, *kwargs.values())):
                raise NotImplementedBySubmission(NAME_OF_OP[op])
            return super().call(op, *args, **kwargs)

    student = PlanningStudent({name: getattr(reference, name) for name in get_exercise(exercise).names})
    recorded: list[PlannedCall] = []
    setattr(student, PLAN_ATTRIBUTE, recorded)
    for case in collect():
        if case.exercise == exercise:
            run_case(case, student)
    return tuple(recorded)


def _on_meta(value: Any) -> bool:
    value = value.tensor if isinstance(value, Viewed) else value
    return isinstance(value, torch.Tensor) and value.device.type == "meta"


def prefetch(student: Student, exercise: str) -> int:
    """Make the exercise's planned calls now, for ``answer`` to hand out; returns how many were answered.

    Only once ``prepare()`` has planned: a process that grades one submission (Gradescope's) would spend
    more on the plan (0.3 s) than the plan saves it."""
    plan = _plans.get(exercise, ())
    outcomes = student.call_many([(call.op, call.args, call.kwargs) for call in plan], PREFETCH_CALL_SECONDS)
    memo = student.__dict__.setdefault(ANSWERS_ATTRIBUTE, {})
    prefetched = student.__dict__.setdefault(PREFETCHED_ATTRIBUTE, {})
    answered = 0
    for call, outcome in zip(plan, outcomes):
        if outcome is None or call.key in memo:
            continue
        memo[call.key] = (None, outcome) if isinstance(outcome, Exception) else (outcome, None)
        prefetched[call.key] = (call.args, call.kwargs)
        answered += not isinstance(outcome, SubmissionCrashed)
    return answered


def same_arguments(planned: tuple[tuple, dict], args: tuple, kwargs: dict) -> bool:
    """Whether a test asks with the values the plan sent: same types, tensors equal bit for bit."""
    planned_args, planned_kwargs = planned
    return _same(planned_args, args) and _same(planned_kwargs, kwargs)


def _same(planned: Any, given: Any) -> bool:
    if planned is given:
        return True
    if type(planned) is not type(given):
        return False
    if isinstance(planned, (tuple, list)):
        return len(planned) == len(given) and all(_same(a, b) for a, b in zip(planned, given))
    if isinstance(planned, dict):
        return planned.keys() == given.keys() and all(_same(planned[key], given[key]) for key in planned)
    if isinstance(planned, Viewed):
        return planned.layout == given.layout and _same(planned.tensor, given.tensor)
    if isinstance(planned, torch.Tensor):
        return (
            (planned.dtype, planned.shape, planned.device, planned.requires_grad)
            == (given.dtype, given.shape, given.device, given.requires_grad)
        ) and (planned.device.type == "meta" or torch.equal(_bits(planned), _bits(given)))
    return planned == given


_SAME_SIZE_INTEGERS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's bits as integers, in place: equal bits, not equal values (a NaN is its own bits, -0.0 is
    not 0.0). A copy of each tensor's bytes cost a grading 8 ms."""
    if tensor.is_complex():
        tensor = torch.view_as_real(tensor.resolve_conj())
    if tensor.is_floating_point():
        return tensor.view(_SAME_SIZE_INTEGERS[tensor.element_size()])
    return tensor
