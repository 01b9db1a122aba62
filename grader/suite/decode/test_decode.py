"""Hidden tests of ``decode(q, k, v, prompt_len, *, cache, window, attention_mask, position_ids, pairing,
base) -> (out, cached_keys)``: 20 points.

The truth is the full causal forward of one RoPE attention layer in float64 (``oracles.oracle_decode``),
masked to the window and to the real tokens, within ``tolerances.decode_tolerance``. The invariance
tests compare a submission with itself (step by step against one pass, the raw cache against the
rotated one, a padded batch against each row alone) and accept the oracle too, so that each judges
its own property: a mistake both sides share costs the value tests, not these. Every input is a
``domains_decode.DecodeCase``, one point of the spec's domain: the visible tests use small fixed ones,
the hidden tests draw theirs over the whole domain with Hypothesis (``domains_decode.decode_domain``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import torch

from grader.suite import VISIBLE, graded
from grader.suite.decode.cached_keys import expect_cached_keys, expect_cached_slots
from grader.suite.decode.cases import (
    SPEC,
    build,
    expect_inputs_untouched,
    expected_out,
    matches,
    outputs_of,
    run,
    single_row,
    tolerance,
    truth,
)
from grader.suite.decode.domains import DecodeCase, decode_domain
from grader.suite.decode.mistakes import diagnosis
from grader.suite.decode.tables import (
    GIVEN_POSITIONS_CASE,
    MODE_CASES,
    ONE_AT_A_TIME_CASES,
    PADDED_PAIR_CASE,
    PREFILL_CASES,
    SHAPE_CASES,
    SMALL_WINDOW_CASE,
    UNTOUCHED_CASES,
)
from grader.suite.expect import Fail, expect_dtype, expect_shape
from grader.suite.layouts import expect_layouts_accepted, for_each_layout, laid_arguments

STEPS = (
    "Decoding one token at a time must give what one pass over the whole sequence gives: each new token's "
    "key and value join the cache, and its query, rotated by its own position, reads every key the cache holds."
)
RAW = (
    "With cache='raw' out must be what cache='rotated' gives: cache the keys as given, keep each one's position "
    "beside it, and rotate every cached key by that position when attention reads it."
)
WINDOW = (
    "With a window W, token t sees only tokens t - W + 1 .. t (W tokens, itself included), in the prefill as "
    "in every step, and the cache keeps the last W keys."
)
PADDING = (
    "A left-padded batch must give every row what its unpadded sequence gives alone: padding keys get no "
    "weight, and each row's positions start at 0 at its first real token (count the attention mask), in "
    "the prompt and in every decoded token."
)
POSITIONS = (
    "Each token must be rotated by its own position: position_ids[b, t] when given, not a count of its own "
    "(positions are tracked apart from the cache)."
)


def _expect_forward(student, case: DecodeCase, message: str = SPEC) -> torch.Tensor:
    """out equals the oracle for the real tokens (if not, the message names a known mistake it
    reproduces); returns cached_keys, for the tests that judge them too."""
    inputs = build(case)
    out, cached_keys = run(student, inputs)
    if not matches(out, truth(case), inputs):
        raise Fail(message + diagnosis(out, inputs))
    return cached_keys


def _expect_steps(student, case: DecodeCase) -> None:
    """The decoded tokens' outputs equal the oracle's, or the submission's own one-pass forward (the whole
    sequence as prompt). The prompt's outputs are the prefill's, judged by the value tests."""
    inputs = build(case)
    stepped, _ = run(student, inputs)
    if matches(stepped, truth(case), inputs, first_token=case.prompt_len):
        return
    one_pass, _ = run(student, build(replace(case, prompt_len=case.length)))
    if not matches(stepped, one_pass, inputs, scale=2.0, first_token=case.prompt_len):
        raise Fail(STEPS + diagnosis(stepped, inputs))


def _expect_window(student, case: DecodeCase) -> None:
    """cached_keys holds the last W keys, in either mode; with cache='rotated', out is the oracle's, or, when not,
    the same case without a window is wrong too (a mistake of positions, padding or values: their tests' business)."""
    inputs = build(case)
    out, cached_keys = run(student, inputs)
    if (
        case.cache == "rotated"
        and not matches(out, truth(case), inputs)
        and _right(student, replace(case, window=None))
    ):
        raise Fail(WINDOW + diagnosis(out, inputs))
    expect_cached_slots(cached_keys, inputs)


def _right(student, case: DecodeCase) -> bool:
    """The submission's out and rotated keys for a case are the oracle's (the keys show positions that a
    saturated softmax can hide from out)."""
    inputs = build(case)
    out, cached_keys = run(student, inputs)
    try:
        expect_cached_keys(cached_keys, inputs, case.cache, count=False)
    except Fail:
        return False
    return matches(out, truth(case), inputs)


def _expect_raw_as_rotated(student, case: DecodeCase) -> None:
    inputs = build(case)
    raw, cached_keys = run(student, inputs)
    expect_cached_keys(cached_keys, inputs, "raw", count=False)
    if matches(raw, truth(case), inputs):
        return
    rotated, _ = run(student, inputs, cache="rotated")
    if not matches(raw, rotated, inputs, scale=2.0):
        raise Fail(RAW + diagnosis(raw, inputs))


def _expect_rows_alone(student, case: DecodeCase) -> None:
    """Every row of the padded batch equals the oracle, or the submission's own result for that row alone;
    rotated keys are cached at their positions counted from each row's first real token."""
    inputs = build(case)
    out, cached_keys = run(student, inputs)
    if case.cache == "rotated":
        expect_cached_keys(cached_keys, inputs, "rotated", count=False)
    if matches(out, truth(case), inputs):
        return
    for row, pads in enumerate(case.pads):
        alone = single_row(inputs, row)
        own, _ = run(student, alone)
        if not matches(out[row : row + 1, :, pads:], own, alone, scale=2.0):
            raise Fail(PADDING + diagnosis(out, inputs))


def _value_cases() -> tuple[DecodeCase, ...]:
    from grader.suite.decode.test_decode_hidden import value_cases  # it imports this module's helpers

    return value_cases()


# ---- visible


@graded(points=1, family="shape", visibility=VISIBLE)
def test_output_shapes_and_dtypes(student):
    """decode returns (out [B, H, T, D], cached_keys [B, H, S, D]) in q's dtype: S = T, or min(W, T) with a window."""
    for case in SHAPE_CASES:
        out, cached_keys = run(student, build(case), strict=True)  # the type test
        expect_shape(
            cached_keys,
            (case.batch, case.heads, case.cached_slots, case.dim),
            "cached_keys (S = T without a window, min(W, T) with one)",
        )
        for tensor, name in ((out, "out"), (cached_keys, "cached_keys")):
            expect_dtype(tensor, case.dtype, f"decode's {name} for {str(case.dtype).removeprefix('torch.')} inputs")


@graded(points=2, family="values", visibility=VISIBLE)
def test_prefill_is_the_causal_forward(student):
    """With the whole sequence as the prompt, out is causal attention over RoPE-rotated queries and keys."""
    for case in PREFILL_CASES:
        _expect_forward(student, case)


@graded(points=2, family="step_by_step", visibility=VISIBLE)
def test_one_token_at_a_time(student):
    """Decoding after a short prompt gives every decoded token the output of the full causal forward."""
    for case in ONE_AT_A_TIME_CASES:
        _expect_steps(student, case)


@graded(points=2, family="cache_modes", visibility=VISIBLE)
def test_cached_keys_follow_the_mode(student):
    """cached_keys holds every key rotated by its position (cache='rotated') or as given (cache='raw')."""
    for case in MODE_CASES:
        inputs = build(case)
        expect_cached_keys(run(student, inputs)[1], inputs, case.cache)


@graded(points=1, family="sliding_window", visibility=VISIBLE)
def test_a_small_window(student):
    """With a window of 3 and a longer prompt, every token sees its last 3 tokens only."""
    _expect_forward(student, SMALL_WINDOW_CASE, WINDOW)


@graded(points=1, family="left_padding", visibility=VISIBLE)
def test_a_left_padded_pair(student):
    """A batch of two prompts, one padded on the left, gives each sequence its unpadded result."""
    _expect_rows_alone(student, PADDED_PAIR_CASE)


VIEWS = (
    "decode must accept its tensors in every layout models pass them in (q, k and v as transposes of [B, T, H, D] "
    "projections or slices of a fused qkv projection, k and v broadcast over the heads they serve, position ids "
    "broadcast over the batch, a slice of a longer mask) and give the same result: use reshape, not view, and "
    "index rather than assume a layout."
)


@for_each_layout((decode_domain(), DecodeCase.tensor_specs, ("attention_mask", "position_ids")))
def _views_accepted(student, laid):
    inputs = build(laid.case)
    names = [name for name in ("attention_mask", "position_ids") if name in inputs.kwargs]

    def call(sent):
        return (*sent[:3], laid.case.prompt_len), inputs.kwargs | dict(zip(names, sent[3:]))

    def judge(output, values):
        laid_inputs, expected, allowed = _laid_truth(laid)
        return matches(outputs_of(output, laid_inputs)[0], expected, laid_inputs, allowed=allowed)

    def same(output, own, values):
        laid_inputs, _, allowed = _laid_truth(laid)
        return matches(outputs_of(output, inputs)[0], outputs_of(own, inputs)[0], laid_inputs, 2.0, allowed=allowed)

    expect_layouts_accepted(student, laid, "decode", lambda: _laid_tensors(laid), call, judge, same, VIEWS)


@graded(points=1, family="inputs", visibility=VISIBLE)
def test_inputs_untouched_and_views_accepted(student):
    """decode leaves its tensors unchanged and accepts them in any layout: transposed, sliced, broadcast.

    Unchanged after the call of every case any decode test judges, hidden ones included (the calls are shared,
    ``decode_cases.call``): an in-place write under any dtype, window, padding or positions costs this test only."""
    for case in UNTOUCHED_CASES + _value_cases():
        expect_inputs_untouched(student, case)
    _views_accepted(student)


test_inputs_untouched_and_views_accepted.prepare = lambda: (_views_accepted.prepare(), _value_cases())
_views_accepted.grading = test_inputs_untouched_and_views_accepted.grading  # visible: a failure names its layout
test_inputs_untouched_and_views_accepted.draws = _views_accepted.draws  # the draws table holds them


def _laid_tensors(laid) -> list[torch.Tensor]:
    inputs = build(laid.case)
    return [
        inputs.q,
        inputs.k,
        inputs.v,
        *(inputs.kwargs[name] for name in ("attention_mask", "position_ids") if name in inputs.kwargs),
    ]


@lru_cache(maxsize=8)
def _laid_truth(laid):
    """(the inputs with the values the student's views hold, the oracle's out for them, its tolerance), once."""
    values = laid_arguments(laid, lambda: _laid_tensors(laid))[0]
    laid_inputs = replace(build(laid.case), q=values[0], k=values[1], v=values[2])
    return laid_inputs, expected_out(laid_inputs), tolerance(laid_inputs)


@graded(points=1, family="positions", visibility=VISIBLE)
def test_given_positions(student):
    """With position_ids from 100 on, tokens and cached keys are rotated by those positions."""
    case = GIVEN_POSITIONS_CASE
    expect_cached_keys(_expect_forward(student, case, POSITIONS), build(case), "rotated", count=False)


# ---- hidden: drawn over the spec's whole domain
