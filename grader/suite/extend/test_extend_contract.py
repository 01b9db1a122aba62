"""Hidden tests of what ``scaled_inv_freq`` promises besides its values: the bands YaRN and llama3
share, the types it returns, and the errors it raises."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.student import NotATensor, StudentError, SubmissionCrashed
from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, for_each
from grader.suite.expect import Fail, as_tensor, expect, expect_dtype, expect_shape
from grader.suite.extend import test_extend
from grader.suite.extend.domains import ExtendCase, cases
from grader.suite.extend.oracle import default_frequencies, oracle_extend
from grader.suite.extend.test_extend import OP, _attention_factor, _frequencies, _output
from grader.suite.extend.tolerances import frequency_tolerance

BAND_TYPES = st.sampled_from(["yarn", "llama3"]).flatmap(lambda kind: cases(kind))


@graded(points=2, family="bands", visibility=VISIBLE)
@for_each(BAND_TYPES, count=8)
def test_fast_pairs_kept_slow_pairs_divided(student, case: ExtendCase):
    """yarn and llama3 keep the fastest pairs, divide the slowest by s, and are monotone between."""
    out = _frequencies(_output(student, case)).double()
    expect_shape(out, (case.head_dim // 2,), f"{OP}'s inv_freq")
    theta = default_frequencies(case.head_dim, case.used_base)
    answer = oracle_extend(case.head_dim, case.used_base, case.scaling())
    slack = frequency_tolerance(answer.frequencies, case.rope_type, case.factor) / theta
    ratio = out / theta  # 1: kept, 1 / s: divided
    kept, divided = answer.kept, answer.divided
    expect(
        bool(((ratio - 1).abs() <= slack)[kept].all()),
        f"{case.rope_type} must leave the fast pairs (pairs {_span(kept)} here) at theta_i; "
        f"yours changed pair {_first(kept & ((ratio - 1).abs() > slack))}.",
    )
    expect(
        bool(((ratio - 1 / case.factor).abs() <= slack)[divided].all()),
        f"{case.rope_type} must divide the slow pairs (pairs {_span(divided)} here) by s = {case.factor:g}; "
        f"pair {_first(divided & ((ratio - 1 / case.factor).abs() > slack))} is not.",
    )
    rising = ratio[1:] > ratio[:-1] + slack[1:] + slack[:-1]
    expect(
        not bool(rising.any()),
        f"{case.rope_type} must slow each pair at least as much as the faster one before it "
        f"(theta'_i / theta_i never rises with i); it rises at pair {_first(rising) + 1}.",
    )


def _first(mask: torch.Tensor) -> int:
    found = mask.nonzero()
    return int(found[0]) if len(found) else -1


def _span(mask: torch.Tensor) -> str:
    found = mask.nonzero().flatten().tolist()
    return "no pair" if not found else f"{found[0]} to {found[-1]}" if len(found) > 1 else str(found[0])


def _expect_contract(student, case: ExtendCase) -> None:
    output = _output(student, case)
    _attention_factor(output)
    inv_freq = as_tensor(output[0], f"{OP}'s inv_freq", strict=True)
    expect_shape(inv_freq, (case.head_dim // 2,), f"{OP}'s inv_freq")
    expect_dtype(inv_freq, torch.float32, f"{OP}'s inv_freq")
    returned = output[1].returned if isinstance(output[1], NotATensor) else type(output[1]).__name__
    expect(type(output[1]) is float, f"attention_factor must be a Python float, got {returned}.")


@for_each(cases(), count=5, key="grader.suite.test_extend.test_returns_float32_frequencies_and_a_float")
def _contract_of_drawn_cases(student, case: ExtendCase) -> None:
    _expect_contract(student, case)


@graded(points=1, family="contract", visibility=VISIBLE)
def test_returns_float32_frequencies_and_a_float(student):
    """A pair: inv_freq, a float32 tensor [D/2], and attention_factor, a Python float: for drawn cases and for the
    call of every case the other tests judge (shared calls), so that no type or branch of the formula escapes it."""
    _contract_of_drawn_cases(student)
    for case in _judged_cases():
        try:
            _expect_contract(student, case)
        except (StudentError, SubmissionCrashed):
            continue  # a call that raised is its own tests' business
        except AssertionError as failure:
            raise Fail(f"{failure} (Failing input: {case.describe()}.)") from None


def _judged_cases() -> tuple[ExtendCase, ...]:
    """Every drawn case the value and band tests judge (their calls are shared through ``answer``)."""
    tests = [getattr(test_extend, name) for name in dir(test_extend) if name.startswith("test_")]
    tests.append(test_fast_pairs_kept_slow_pairs_divided)
    return tuple(dict.fromkeys(case for test in tests for case in test.prepare()))


test_returns_float32_frequencies_and_a_float.prepare = lambda: (_contract_of_drawn_cases.prepare(), _judged_cases())
test_returns_float32_frequencies_and_a_float.draws = _contract_of_drawn_cases.draws
_contract_of_drawn_cases.grading = test_returns_float32_frequencies_and_a_float.grading  # visible: names its input


BAD_CALLS = (
    (
        (8,),
        {"scaling": {"rope_type": "longrope", "factor": 4.0, "original_max_position_embeddings": 64}},
        "an unknown rope_type",
    ),
    (
        (8,),
        {"scaling": {"rope_type": "linear", "factor": 0.5, "original_max_position_embeddings": 64}},
        "a factor below 1",
    ),
    (
        (8,),
        {"scaling": {"rope_type": "yarn", "factor": 0.25, "original_max_position_embeddings": 64}},
        "a factor below 1",
    ),
    ((7,), {}, "an odd head_dim"),
)


@graded(points=1, family="contract", visibility=HIDDEN)
def test_raises_value_error_outside_the_domain(student):
    """ValueError for an unknown rope_type, a factor below 1 and an odd head_dim."""
    for args, kwargs, what in BAD_CALLS:
        try:
            student.call(OP, *args, **kwargs)
        except StudentError as error:
            expect(error.kind == "ValueError", f"{OP} must raise ValueError for {what}; it raised {error.kind}.")
        else:
            raise Fail(f"{OP} must raise ValueError for {what}; it returned a value.")


def _changes(given: dict, after: dict) -> str:
    """What a call did to the dict it was given, key by key."""
    removed = [key for key in given if key not in after]
    added = [key for key in after if key not in given]
    changed = [key for key in given if key in after and after[key] != given[key]]
    parts = [f"removed {removed}" if removed else "", f"added {added}" if added else ""]
    parts.append(
        "changed " + ", ".join(f"{key!r} from {given[key]!r} to {after[key]!r}" for key in changed) if changed else ""
    )
    return "; ".join(part for part in parts if part)


def _called_cases() -> tuple[ExtendCase, ...]:
    """Every drawn case the value, band and contract tests call with a scaling dict (their calls are shared)."""
    drawn = _judged_cases() + _contract_of_drawn_cases.prepare()
    return tuple(case for case in dict.fromkeys(drawn) if case.rope_type is not None)


@graded(points=1, family="inputs", visibility=VISIBLE)
def test_the_scaling_dict_is_left_as_it_was(student):
    """Every call the value tests make leaves its scaling dict as it was given: no key removed, added or changed."""
    raised: list[StudentError | SubmissionCrashed] = []
    for case in _called_cases():
        try:
            result = answer(student, ("values", case), OP, case.head_dim, **case.kwargs())
        except (StudentError, SubmissionCrashed) as error:
            raised.append(error)  # a call that raised or crashed is its own tests' business ...
            continue
        given, after = case.scaling(), result.dicts_after[0]
        if after != given:
            raise Fail(
                f"{OP} must not modify the scaling dict it is given (copy it first, e.g. dict(scaling), or only "
                f"read it with .get()): {case.describe()} {_changes(given, after)}."
            )
    if len(raised) == len(_called_cases()):
        raise raised[0]  # ... unless every one raised: then nothing was judged here


test_the_scaling_dict_is_left_as_it_was.prepare = _called_cases
