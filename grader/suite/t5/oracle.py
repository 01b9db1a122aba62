"""The t5 exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import math

import torch

from grader.suite.t5.tolerances import t5_edge


def oracle_t5_bucket_bounds(
    relative_position,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    exact: int | None = None,
    clamp: bool = True,
    log_range: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(lowest, highest) accepted T5 bucket of each ``key - query`` position, int64, same shape.

    Raffel et al. 2020 and Mesh TensorFlow's ``_relative_position_bucket``, in float64:
    bidirectional gives each direction num_buckets / 2 buckets (later keys, r > 0, the upper half);
    causal keeps all of them for earlier keys and sends later ones to 0. Half of a direction's
    buckets are exact; the rest are log-spaced up to ``max_distance`` and then clamped to the last.
    Where the log lands within ``tolerances.t5_edge`` of a bucket edge (float32 and float64 may
    round it either way), both neighbours are accepted. ``exact``, ``clamp`` and ``log_range`` (the
    log's denominator, ln(max_distance / E)) exist to describe known mistakes (the suite's diagnoses).
    """
    relative = torch.as_tensor(relative_position).long()
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2 if exact is None else exact
    if bidirectional:
        offset, distance = (relative > 0).long() * per_direction, relative.abs()
    else:
        offset, distance = torch.zeros_like(relative), (-relative).clamp(min=0)
    far = distance.double().clamp(min=max(exact, 1))
    span = per_direction - exact
    position = (far / exact).log() / (math.log(max_distance / exact) if log_range is None else log_range) * span
    edge = t5_edge(far, exact, max_distance, span)
    floor = position.floor()
    low = torch.where((position - floor < edge) & (floor > 0), floor - 1, floor).long() + exact
    high = torch.where(floor + 1 - position < edge, floor + 1, floor).long() + exact
    if clamp:
        low, high = low.clamp(max=per_direction - 1), high.clamp(max=per_direction - 1)
    near = distance < exact
    return offset + torch.where(near, distance, low), offset + torch.where(near, distance, high)
