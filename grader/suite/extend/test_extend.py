"""Hidden tests of ``scaled_inv_freq(head_dim, base, scaling, seq_len)``: 20 points with ``test_extend_contract``.

Frequencies are judged per rope_type against the float64 oracle within the error model
(``tolerances``), over drawn configurations (``domains``); the band tests check what the lessons
teach of YaRN and llama3 (fast pairs kept, slow ones divided by s, monotone between) on their own.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.student import NotATensor
from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, for_each
from grader.suite.expect import Fail, as_tensor, diagnose, expect, expect_shape, within
from grader.suite.extend.domains import ExtendCase, attention_edges, cases, default_cases, factor_one_edges
from grader.suite.extend.mistakes import frequency_mistakes
from grader.suite.extend.oracle import oracle_extend
from grader.suite.extend.tolerances import attention_tolerance, frequency_tolerance

OP = "scaled_inv_freq"
RULES = {
    None: "base^(-2i/D), the default frequencies",
    "default": "base^(-2i/D), the default frequencies",
    "linear": "theta_i / s for every pair",
    "dynamic": "the default ones while T <= L (seq_len None means T = L), else those of the base "
    "b (s T / L - (s - 1))^(D / (D - 2))",
    "yarn": "theta_i (1 - r_i) + (theta_i / s) r_i with the spec's ramp r_i",
    "llama3": "theta_i for short wavelengths, theta_i / s for long ones, blended by u in the band",
}


def _output(student, case: ExtendCase):
    return answer(student, ("values", case), OP, case.head_dim, **case.kwargs()).output


def _frequencies(output) -> torch.Tensor:
    """inv_freq, from the pair or from a bare tensor (the pair itself is the contract test's)."""
    first = output[0] if isinstance(output, tuple) and output else output
    return as_tensor(first, f"{OP}'s inv_freq")


def _attention_factor(output) -> float:
    expect(
        isinstance(output, tuple) and len(output) == 2,
        f"{OP} must return a pair (inv_freq, attention_factor); it returned "
        + (f"a tuple of {len(output)}" if isinstance(output, tuple) else f"a {type(output).__name__}")
        + ".",
    )
    factor = output[1]
    if isinstance(
        factor, NotATensor
    ):  # a numpy scalar comes converted: its value is judged here, its type by the contract test
        if isinstance(factor.values, torch.Tensor) and factor.values.numel() == 1:
            return float(factor.values)
        raise Fail(f"{OP}'s attention_factor must be a number; it returned a {factor.returned}.")
    if isinstance(factor, torch.Tensor) and factor.numel() == 1:
        return float(factor)
    expect(type(factor) in (int, float), f"{OP}'s attention_factor must be a number, got {type(factor).__name__}.")
    return float(factor)


def _first_difference(out: torch.Tensor, expected: torch.Tensor, tolerance: torch.Tensor) -> str:
    values = out.to(torch.complex128) if out.is_complex() else out.double()  # a complex answer, said as it is
    wrong = ((values - expected).abs() > tolerance).nonzero()
    pair = int(wrong[0]) if len(wrong) else 0
    got = complex(values[pair]) if out.is_complex() else float(values[pair])
    return f" Pair {pair}: got {got:.6g}, the spec gives {float(expected[pair]):.6g}."


def expect_frequencies(student, case: ExtendCase) -> None:
    out = _frequencies(_output(student, case))
    expected = oracle_extend(case.head_dim, case.used_base, case.scaling(), case.seq_len).frequencies
    expect_shape(out, (case.head_dim // 2,), f"{OP}'s inv_freq")
    tolerance = frequency_tolerance(expected, case.rope_type, case.factor)
    expect(
        within(out, expected, tolerance),
        lambda: (
            f"inv_freq must be {RULES[case.rope_type]}."
            + _first_difference(out, expected, tolerance)
            + diagnose(out, frequency_mistakes(case), tolerance)
        ),
    )


@graded(points=2, family="default", visibility=VISIBLE)
@for_each(default_cases(), count=6)
def test_default_frequencies(student, case):
    """With no scaling, or rope_type "default", inv_freq is base^(-2i/D)."""
    expect_frequencies(student, case)


@graded(points=1, family="default", visibility=HIDDEN)
@for_each(cases(factor=1.0, seq="within"), count=8, edges=factor_one_edges())
def test_a_factor_of_one_changes_nothing(student, case):
    """A factor of 1 gives the default frequencies (dynamic: within L) and attention_factor 1, or the one a yarn
    config gives."""
    expect_frequencies(student, case)
    given = dict(case.params).get("attention_factor") if case.rope_type == "yarn" else None
    expected = 1.0 if given is None else float(given)
    factor = _attention_factor(_output(student, case))
    expect(
        abs(factor - expected) <= attention_tolerance(expected),
        f"A factor of 1 must give attention_factor 1, got {factor:g}."
        if given is None
        else f"A factor of 1 keeps the attention_factor a yarn config gives ({expected:g}); got {factor:g}.",
    )


@graded(points=2, family="linear", visibility=VISIBLE)
@for_each(cases("linear"), count=6)
def test_linear_divides_every_frequency(student, case):
    """linear (position interpolation): theta_i / s for every pair."""
    expect_frequencies(student, case)


@graded(points=2, family="dynamic", visibility=HIDDEN)
@for_each(cases("dynamic", seq="within"), count=6, edges=st.tuples(cases("dynamic", seq="absent")))
def test_dynamic_is_the_default_within_the_trained_length(student, case):
    """dynamic with T <= L, or no seq_len (T = L), gives the default frequencies."""
    expect_frequencies(student, case)


@graded(points=2, family="dynamic", visibility=VISIBLE)
@for_each(cases("dynamic", seq="beyond"), count=6)
def test_dynamic_beyond_the_trained_length(student, case):
    """dynamic with T > L: the frequencies of the base b (s T / L - (s - 1))^(D / (D - 2))."""
    expect_frequencies(student, case)


@graded(points=2, family="yarn", visibility=VISIBLE)
@for_each(cases("yarn"), count=8)
def test_yarn_frequencies(student, case):
    """yarn: theta_i (1 - r_i) + (theta_i / s) r_i, with the ramp r_i over the pair index."""
    expect_frequencies(student, case)


@graded(points=2, family="attention factor", visibility=VISIBLE)
@for_each(cases(), count=8, edges=attention_edges())
def test_attention_factor(student, case):
    """attention_factor: yarn's is the config's when given, else 0.1 ln(s) + 1; every other type's is 1."""
    expected = oracle_extend(case.head_dim, case.used_base, case.scaling()).attention_factor
    factor = _attention_factor(_output(student, case))
    given = dict(case.params).get("attention_factor")
    if case.rope_type != "yarn":
        rule = "1 for every type but yarn" + (" (this config's attention_factor is yarn's key)" if given else "")
    else:
        rule = f"the config's attention_factor, {given:g}" if given is not None else "0.1 ln(s) + 1"
    expect(
        abs(factor - expected) <= attention_tolerance(expected),
        f"{case.rope_type}'s attention_factor must be {rule} = {expected:.6g} at s = {case.factor:g}; got {factor:.6g}.",
    )


@graded(points=2, family="llama3", visibility=VISIBLE)
@for_each(cases("llama3"), count=8)
def test_llama3_frequencies(student, case):
    """llama3: theta_i for short wavelengths, theta_i / s for long ones, blended between."""
    expect_frequencies(student, case)
