"""Known mistakes in T5's bucketing, as the oracle's bounds of a wrong reading of the formula.

``diagnose_buckets`` names the first one a wrong answer reproduces; the bounds are built lazily, only
for a submission that failed.
"""

from __future__ import annotations

import math

import torch

from grader.suite.t5.oracle import oracle_t5_bucket_bounds


def in_bounds(actual: torch.Tensor, bounds: tuple[torch.Tensor, torch.Tensor]) -> bool:
    low, high = bounds
    if tuple(actual.shape) != tuple(low.shape) or actual.is_complex():
        return False
    values = actual.double()
    return bool(((values >= low) & (values <= high)).all())


def bucket_mistakes(relative: torch.Tensor, bidirectional: bool, num_buckets: int, max_distance: int) -> dict:
    """Known wrong bucketings, as the oracle's bounds, built only if needed."""
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2

    def bounds(r=relative, direction=bidirectional, **changes):
        return lambda: oracle_t5_bucket_bounds(r, direction, num_buckets, max_distance, **changes)

    def defined(exact_buckets: int, direction: bool = bidirectional) -> bool:
        return 1 <= exact_buckets < max_distance and (num_buckets // 2 if direction else num_buckets) >= 2

    mistakes = {
        "relative_position is read as query - key; the spec (like Mesh TensorFlow and Hugging Face) uses "
        "key - query, negative for keys before the query": bounds(r=-relative),
        "the log-spaced bucket is not clamped, so distances past max_distance get buckets beyond the "
        "last one of their direction": bounds(clamp=False),
    }
    if defined(((num_buckets // 2) if not bidirectional else num_buckets) // 2, not bidirectional):
        mistakes[
            f"the bidirectional flag is ignored: bidirectional={bidirectional} gives the buckets of "
            f"bidirectional={not bidirectional}"
        ] = bounds(direction=not bidirectional)
    if defined(exact + 1):
        mistakes["one exact bucket too many (N // 2 + 1): the log-spaced range starts one bucket late"] = bounds(
            exact=exact + 1
        )
    if exact > 1:
        mistakes["one exact bucket too few (N // 2 - 1): distance N // 2 - 1 already shares a log-spaced bucket"] = (
            bounds(exact=exact - 1)
        )
    if max_distance // exact >= 2 and max_distance % exact:  # else the same as the spec's, or a log of 1
        mistakes["the log's denominator is ln(max_distance // E), an integer division"] = bounds(
            log_range=math.log(max_distance // exact)
        )
    if bidirectional and defined(num_buckets // 2):
        mistakes["the exact half is taken of num_buckets, before the sign split halves it"] = bounds(
            exact=num_buckets // 2
        )
    return mistakes


def diagnose_buckets(actual: torch.Tensor, mistakes: dict) -> str:
    """The known mistake the buckets reproduce; all of them where this test's distances cannot tell."""
    matched = [misconception for misconception, build in mistakes.items() if in_bounds(actual, build())]
    if len(matched) == 1:
        return f" Your buckets match a known mistake: {matched[0]}."
    if matched:
        return f" Your buckets match several known mistakes this test cannot tell apart: {'; '.join(matched)}."
    return ""
