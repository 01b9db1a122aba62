"""The t5 exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``t5_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
T5_PER_DIRECTION = "per_direction = num_buckets // 2 if bidirectional else num_buckets"
T5_MAX_EXACT = "max_exact = per_direction // 2"
T5_IF_BIDIRECTIONAL = "if bidirectional:"
T5_LATER_OFFSET = "offset = (relative_position > 0).long() * per_direction"
T5_CAUSAL_DISTANCE = "distance = (-relative_position).clamp(min=0)"
T5_LOG_SPACED = (
    "log_spaced = (max_exact + (log_ratio * (per_direction - max_exact)).long()).clamp(max=per_direction - 1)"
)
T5_BIAS_RELATIVE = "relative_position = keys[None, :] - queries[:, None]"
T5_BIAS_GATHER = "return table[buckets].permute(2, 0, 1)"

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "t5_upper_half_from_num_buckets_minus_n",
        "t5",
        "later keys start at num_buckets - N, one too far for an odd num_buckets (corpus batch 6, b6b02)",
        ((T5_LATER_OFFSET, "offset = (relative_position > 0).long() * (num_buckets - per_direction)"),),
    ),
    MutantSpec(
        "t5_log_denominator_floor_divided",
        "t5",
        "the log's denominator is ln(max_distance // E): integer division (corpus batch 6, b6b01)",
        (("math.log(max_distance / max_exact)", "math.log(max_distance // max_exact)"),),
    ),
    MutantSpec(
        "t5_exact_off_by_one",
        "t5",
        "N/2 + 1 exact buckets (0 .. N/2 counted as the half): log range starts late",
        ((T5_MAX_EXACT, "max_exact = per_direction // 2 + 1"),),
    ),
    MutantSpec(
        "t5_sign_reversed",
        "t5",
        "r read as query - key: earlier keys take the upper half, a decoder the future",
        (
            (T5_LATER_OFFSET, "offset = (relative_position < 0).long() * per_direction"),
            (T5_CAUSAL_DISTANCE, "distance = relative_position.clamp(min=0)"),
        ),
    ),
    MutantSpec(
        "t5_no_clamp",
        "t5",
        "log-spaced bucket not clamped: distances past max_distance overflow the last bucket",
        ((T5_LOG_SPACED, "log_spaced = max_exact + (log_ratio * (per_direction - max_exact)).long()"),),
    ),
    MutantSpec(
        "t5_float_buckets",
        "t5",
        "torch.floor keeps float32: buckets come back float, unusable as indices",
        (
            (
                T5_LOG_SPACED,
                "log_spaced = (max_exact + torch.floor(log_ratio * (per_direction - max_exact)))"
                ".clamp(max=per_direction - 1)",
            ),
        ),
    ),
    MutantSpec(
        "t5_direction_flag_ignored",
        "t5",
        "bidirectional ignored: a decoder gets an encoder's sign split",
        ((T5_PER_DIRECTION, "per_direction = num_buckets // 2"), (T5_IF_BIDIRECTIONAL, "if True:")),
    ),
    MutantSpec(
        "t5_bias_query_minus_key",
        "t5",
        "the bias indexes buckets by i - j (query - key) instead of j - i",
        ((T5_BIAS_RELATIVE, "relative_position = queries[:, None] - keys[None, :]"),),
    ),
    MutantSpec(
        "t5_bias_python_loop",
        "t5",
        "the bias filled by a double Python loop, one bucket call per (i, j)",
        (
            (
                T5_BIAS_GATHER,
                "bias = table.new_empty(table.shape[1], query_len, key_len)\n"
                "    for i in range(query_len):\n"
                "        for j in range(key_len):\n"
                "            bucket = t5_relative_bucket(torch.tensor(j - i), bidirectional, "
                "table.shape[0], max_distance)\n"
                "            bias[:, i, j] = table[bucket]\n"
                "    return bias",
            ),
        ),
        slow=True,
    ),
    MutantSpec(
        "t5_buckets_int32",
        "t5",
        "buckets returned as int32, not a LongTensor (they still index a table)",
        (
            (
                "return offset + torch.where(distance < max_exact, distance, log_spaced)",
                "return (offset + torch.where(distance < max_exact, distance, log_spaced)).int()",
            ),
        ),
    ),
    MutantSpec(
        "t5_abs_in_place",
        "t5",
        "abs_() on relative_position: a long tensor given is the caller's, now made non-negative",
        (("distance = relative_position.abs()", "distance = relative_position.abs_()"),),
    ),
    MutantSpec(
        "t5_flattens_to_two_axes",
        "t5",
        "relative_position of three or more axes flattened to two: buckets of another shape",
        (
            (
                "relative_position = torch.as_tensor(relative_position).long()",
                "relative_position = torch.as_tensor(relative_position).long()\n"
                "    relative_position = relative_position.flatten(1) if relative_position.dim() > 2 else relative_position",
            ),
        ),
    ),
)
