"""The decode exercise's hidden tests: each property over the whole drawn domain."""

from __future__ import annotations

from grader.suite import HIDDEN, graded
from grader.suite.decode.cached_keys import expect_cached_keys
from grader.suite.decode.cases import build
from grader.suite.decode.domains import DecodeCase, decode_domain, window_edges
from grader.suite.decode.tables import VISIBLE_VALUE_CASES
from grader.suite.decode.test_decode import (
    POSITIONS,
    _expect_forward,
    _expect_raw_as_rotated,
    _expect_rows_alone,
    _expect_steps,
    _expect_window,
)
from grader.suite.draw import for_each


@graded(points=2, family="step_by_step", visibility=HIDDEN)
@for_each(decode_domain(min_steps=1), count=4)
def test_steps_match_the_full_forward(student, case):
    """Step by step gives the full forward for any prompt length, sizes, pairing, base, cache mode and dtype."""
    _expect_steps(student, case)


@graded(points=2, family="cache_modes", visibility=HIDDEN)
@for_each(decode_domain(cache="raw"), count=3)
def test_raw_cache_gives_the_rotated_cache_output(student, case):
    """Caching raw keys and rotating them when read gives what caching rotated keys gives, with windows and padding."""
    _expect_raw_as_rotated(student, case)


@graded(points=2, family="sliding_window", visibility=HIDDEN)
@for_each(decode_domain(cache="rotated", windowed=True), count=3, edges=window_edges())
def test_window_masks_the_full_forward(student, case):
    """A rolling window of W gives the full forward masked to the last W tokens, and caches the last W keys."""
    _expect_window(student, case)


@graded(points=2, family="left_padding", visibility=HIDDEN)
@for_each(decode_domain(padded=True), count=3)
def test_left_padded_batch_gives_each_row_alone(student, case):
    """A left-padded batch gives each row its unpadded result (1/0 or True/False masks, both caches, windows, ids)."""
    _expect_rows_alone(student, case)


@graded(points=1, family="positions", visibility=HIDDEN)
@for_each(decode_domain(cache="rotated", windowed=False, padded=False, positions=("far",)), count=3)
def test_positions_are_tracked_apart_from_the_cache(student, case):
    """Tokens are rotated by the given position_ids (far out, with gaps or in any order), and so are the cached keys."""
    expect_cached_keys(_expect_forward(student, case, POSITIONS), build(case), "rotated", count=False)


def value_cases() -> tuple[DecodeCase, ...]:
    """Every case a value is judged on: the visible tables and the hidden tests' drawn cases."""
    drawn = [
        case
        for test in (
            test_steps_match_the_full_forward,
            test_raw_cache_gives_the_rotated_cache_output,
            test_window_masks_the_full_forward,
            test_left_padded_batch_gives_each_row_alone,
            test_positions_are_tracked_apart_from_the_cache,
        )
        for case in test.prepare()
    ]
    return VISIBLE_VALUE_CASES + tuple(drawn)
