"""Inputs drawn by Hypothesis over each spec's domain, the same in every grading run.

A hidden test that checks a property "for every input the spec allows" draws its inputs here:

    @graded(points=3, family="values", visibility=HIDDEN)
    @for_each(domains.attention_cases(), count=6)
    def test_values_for_drawn_shapes(student, case):
        ...                                   # called once per drawn case

The cases are drawn once per process (``drawn``) by Hypothesis with a seed of their own (the test's
name), ``derandomize=True`` and no example database, so every grading of a submission sees the same
inputs and gets the same score. Hypothesis only *draws* (the generate phase): the property is
checked afterwards, against the submission, so none of Hypothesis' own limits (deadlines, health
checks, flakiness, shrinking) can fail a student; there is no shrinking to bound. Hypothesis starts
from the simplest case of a strategy (the smallest sizes) and then spreads out over the domain; a
visible test reports the first case that fails, in that order, and a hidden test reports nothing
about its inputs (its family only, as every hidden test).

Each case is a plain frozen dataclass with ``describe()``. Building tensors from a case uses a
seeded ``torch.Generator``, so a case is small and the tensors are exact on every run.
"""

from __future__ import annotations

import functools
import threading
import zlib
from collections.abc import Callable
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture.providers import AVAILABLE_PROVIDERS, HypothesisProvider

from grader.student import NAME_OF_OP, StudentError, SubmissionCrashed
from grader.suite.draw_table import fixed_draws
from grader.suite.expect import Fail, expect_untouched
from grader.suite.plan import ANSWERS_ATTRIBUTE, PLAN_ATTRIBUTE, PREFETCHED_ATTRIBUTE, PlannedCall, same_arguments
from grader.vocabulary import Visibility


class _SameEverywhereProvider(HypothesisProvider):
    """Hypothesis' own provider, minus its "constants": with a small probability it draws literals
    collected from the project's modules loaded in this process (and caches them under
    ``.hypothesis/``), so the CLI, the app and Gradescope, which load different modules, would draw
    different cases from the same seed. Without them a seed gives the same cases in every process."""

    def _maybe_draw_constant(self, choice_type, constraints, *, p: float = 0.05):
        return None


AVAILABLE_PROVIDERS["poslab-same-everywhere"] = _SameEverywhereProvider
DRAWING = settings(
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.generate,),
    print_blob=False,
    report_multiple_bugs=False,
    backend="poslab-same-everywhere",
)
_drawn: dict[str, tuple] = {}
_lock = threading.Lock()  # judging threads share this process; Hypothesis runs one draw at a time


def drawn(key: str, strategy: st.SearchStrategy, count: int) -> tuple:
    """``count`` cases of ``strategy`` (fewer if the domain is smaller), the same in every process:
    the hidden suite's from its written table (``draw_table.py``), any other's from Hypothesis."""
    with _lock:
        if key not in _drawn:
            _drawn[key] = fixed_draws().get(key) or hypothesis_draw(key, strategy, count)
        return _drawn[key]


def hypothesis_draw(key: str, strategy: st.SearchStrategy, count: int) -> tuple:
    """``count`` cases of ``strategy`` drawn by Hypothesis now, seeded by ``key``."""
    found: list = []

    @seed(zlib.crc32(key.encode()))
    @settings(DRAWING, max_examples=count)
    @given(strategy)
    def collect(case) -> None:
        if case not in found:
            found.append(case)

    collect()
    return tuple(found[:count])


def for_each(
    strategy: st.SearchStrategy, count: int, key: str | None = None, edges: st.SearchStrategy | None = None
) -> Callable:
    """Run the decorated ``test(student, case)`` on each drawn case, as a suite test ``test(student)``.

    A visible test's failure names the first failing case (a hidden one's never does). ``key``
    shares the drawn cases (and so, with ``answer``, the calls) between tests. ``edges``, a strategy of
    a tuple of cases (one per boundary of the domain a few draws would seldom reach), adds its cases
    ahead of the drawn ones: every boundary in every run.
    """

    def decorate(body: Callable[[Any, Any], None]) -> Callable[[Any], None]:
        name = key or _draw_key(body)
        draws = ((name, strategy, count),) if edges is None else ((f"{name} edges", edges, 2), (name, strategy, count))

        def cases_of() -> tuple:
            # A strategy's first draw is its simplest case (every size at its smallest): the edges take the next.
            boundaries = () if edges is None else drawn(*draws[0])[-1]
            return boundaries + drawn(*draws[-1])

        @functools.wraps(body)
        def test(student) -> None:
            unjudged: list[Unjudged] = []
            cases = cases_of()
            for case in cases:
                try:
                    body(student, case)
                except Unjudged as skipped:
                    unjudged.append(skipped)
                except AssertionError as failure:
                    grading = getattr(test, "grading", None)
                    if grading is None or grading.visibility != Visibility.VISIBLE:
                        raise
                    shown = case.describe() if hasattr(case, "describe") else repr(case)
                    raise Fail(f"{failure} (Failing input: {shown}.)") from None
            if unjudged and len(unjudged) == len(cases):
                raise unjudged[0].error  # no case could judge the property: the submission earns nothing here

        del test.__wrapped__  # the suite calls test(student); inspect must not see body's signature
        test.prepare = cases_of  # grader.suite.prepare() draws ahead of grading
        test.draws = draws  # (key, strategy, count) of each draw: draw_table.py writes them down
        return test

    return decorate


def _draw_key(body: Callable) -> str:
    """A hidden test draws by its exercise and name, whichever of the exercise's modules holds it."""
    parts = body.__module__.split(".")
    if len(parts) == 4 and parts[:2] == ["grader", "suite"]:
        return f"grader.suite.test_{parts[2]}.{body.__name__}"
    return f"{body.__module__}.{body.__name__}"


class Unjudged(Exception):
    """A drawn case that cannot judge its test's property for this submission (its code raised ``error`` for
    those values whatever the property): the case is skipped, and a test none of whose cases judged anything
    fails with the first one's error."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def answer(student, key: tuple, op: str, *args, **kwargs):
    """``student.call(op, ...)`` once per submission and exercise for a given ``key``: tests that
    check different properties of the same drawn case share the call (and its exception). The call may
    have been made ahead of the tests (``plan.prefetch``)."""
    memo = student.__dict__.setdefault(ANSWERS_ATTRIBUTE, {})
    key = (op, *key)  # keys are shared within an op only
    _take_prefetched(student, memo, key, args, kwargs)
    if key not in memo:
        recorder = student.__dict__.get(PLAN_ATTRIBUTE)
        if recorder is not None:  # the planning run on the reference (plan.planned_calls)
            recorder.append(PlannedCall(key, op, args, kwargs))
        try:
            memo[key] = (student.call(op, *args, **kwargs), None)
        except Exception as error:  # noqa: BLE001 -- replayed to every test that asks
            memo[key] = (None, error)
    result, error = memo[key]
    if error is not None:
        raise error
    return result


def _take_prefetched(student, memo: dict, key: tuple, args: tuple, kwargs: dict) -> None:
    """The first ask of a call made ahead: it stays in ``memo`` if the test asks with the planned values (its
    notes then go to this test), else it is dropped, to be made again."""
    planned = student.__dict__.get(PREFETCHED_ATTRIBUTE, {}).pop(key, None)
    if planned is None:
        return
    if not same_arguments(planned, args, kwargs):
        del memo[key]
    elif memo[key][0] is not None:
        student.noted(memo[key][0])


def expect_inputs_left(student, key: tuple, op: str, args: tuple, kwargs: dict, inputs: dict) -> None:
    """The call ``answer(student, key, op, *args, **kwargs)``, shared with the test that judges its output, left
    each of ``inputs`` (name -> one of its tensor arguments) as it was. An inputs test runs this over the drawn
    cases of its exercise's value tests: an in-place write that one dtype, size or argument provokes is found
    there, at no extra call, and costs the inputs test alone. A call that raised, or crashed the child, is its
    own tests' business."""
    try:
        result = answer(student, key, op, *args, **kwargs)
    except (StudentError, SubmissionCrashed):
        return
    names = {id(tensor): name for name, tensor in inputs.items()}
    sent = [value for value in (*args, *kwargs.values()) if isinstance(value, torch.Tensor)]
    checked = [(after, tensor) for after, tensor in zip(result.inputs_after, sent) if id(tensor) in names]
    expect_untouched(
        tuple(after for after, _ in checked),
        tuple(tensor for _, tensor in checked),
        NAME_OF_OP[op],
        tuple(names[id(tensor)] for _, tensor in checked),
    )
