"""The decode exercise's visible tests' inputs: one table of cases per test, each a point of the spec's domain."""

from __future__ import annotations

import torch

from grader.suite.decode.domains import PAIRINGS, DecodeCase

# The visible tests' inputs, one table per test (each a DecodeCase, one point of the spec's domain); the
# hidden tests draw theirs over the whole domain (``domains_decode.decode_domain``).
C = DecodeCase


SHAPE_CASES = (
    C(batch=2, heads=3, length=6, dim=8, prompt_len=2),
    C(batch=1, heads=2, length=7, dim=4, prompt_len=3, window=4, cache="raw"),
    C(batch=2, heads=1, length=5, dim=6, prompt_len=5, window=9),
    C(batch=1, heads=2, length=5, dim=8, prompt_len=2, dtype=torch.float64),
)


PREFILL_CASES = tuple(C(batch=2, heads=2, length=6, dim=8, prompt_len=6, pairing=p, seed=1) for p in PAIRINGS)


ONE_AT_A_TIME_CASES = tuple(C(batch=2, heads=2, length=7, dim=8, prompt_len=2, pairing=p, seed=2) for p in PAIRINGS)


MODE_CASES = tuple(
    C(batch=2, heads=2, length=6, dim=8, prompt_len=3, cache=c, pairing=p, seed=3)
    for c in ("rotated", "raw")
    for p in PAIRINGS
)


SMALL_WINDOW_CASE = C(batch=2, heads=2, length=8, dim=8, prompt_len=4, window=3, seed=4)


PADDED_PAIR_CASE = C(batch=2, heads=2, length=7, dim=8, prompt_len=4, pads=(0, 2), seed=5)


UNTOUCHED_CASES = tuple(
    C(
        batch=2,
        heads=2,
        length=6,
        dim=8,
        prompt_len=3,
        cache=c,
        window=w,
        pads=(1, 0),
        position_ids=True,
        pad_id=0,
        pairing=p,
        dtype=d,
        seed=6,
    )
    for c, w, p in (("rotated", None, "interleaved"), ("raw", 2, "half"))
    for d in (torch.float32, torch.float64)
)


GIVEN_POSITIONS_CASE = C(batch=1, heads=2, length=6, dim=8, prompt_len=2, start=100, seed=8)


VISIBLE_VALUE_CASES = (
    PREFILL_CASES + ONE_AT_A_TIME_CASES + MODE_CASES + (SMALL_WINDOW_CASE, PADDED_PAIR_CASE, GIVEN_POSITIONS_CASE)
)
