"""The alibi exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``alibi_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
ALIBI_GEOMETRIC = "return [2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)]"
ALIBI_EXTRA = "slopes += _power_of_two_slopes(2 * below)[0::2][: n_heads - below]"
ALIBI_SLOPES_RETURN = "return torch.tensor(slopes, dtype=torch.float32)"
ALIBI_BIAS = "bias = slopes[:, None, None] * offset"
ALIBI_MASK = 'return bias.masked_fill(offset > 0, float("-inf"))'

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "alibi_slopes_off_by_one",
        "alibi",
        "m_h = 2^(-8h/n) for h = 0..n-1: the first slope is 1",
        ((ALIBI_GEOMETRIC, "return [2.0 ** (-8.0 * h / n_heads) for h in range(n_heads)]"),),
    ),
    MutantSpec(
        "alibi_slopes_first_n_of_next_power",
        "alibi",
        "n not a power of two: first n slopes of 2c",
        ((ALIBI_EXTRA, "slopes = _power_of_two_slopes(2 * below)[:n_heads]"),),
    ),
    MutantSpec(
        "alibi_slopes_reversed",
        "alibi",
        "slopes in increasing order",
        ((ALIBI_SLOPES_RETURN, "return torch.tensor(slopes[::-1], dtype=torch.float32)"),),
    ),
    MutantSpec(
        "alibi_slopes_not_power_of_two_formula",
        "alibi",
        "2^(-8(h+1)/n) for every n, even 12",
        (("below = 2 ** math.floor(math.log2(n_heads))", "below = n_heads"),),
    ),
    MutantSpec(
        "alibi_positive_bias",
        "alibi",
        "bias +m(i - j): rewards distance instead of penalising it",
        ((ALIBI_BIAS, "bias = -slopes[:, None, None] * offset"),),
    ),
    MutantSpec(
        "alibi_no_causal_mask",
        "alibi",
        "symmetric -m|i - j| with no mask (bidirectional ALiBi)",
        ((ALIBI_BIAS, "bias = -slopes[:, None, None] * offset.abs()"), (ALIBI_MASK, "return bias")),
    ),
    MutantSpec(
        "alibi_mask_wrong_triangle",
        "alibi",
        "-inf below the diagonal instead of above",
        ((ALIBI_MASK, 'return bias.masked_fill(offset < 0, float("-inf"))'),),
    ),
    MutantSpec(
        "alibi_mask_not_low_enough",
        "alibi",
        "a finite future mask of -1e3: not -inf, and above the -1e4 that the spec accepts",
        ((ALIBI_MASK, "return bias.masked_fill(offset > 0, -1e3)"),),
    ),
    MutantSpec(
        "alibi_future_zero",
        "alibi",
        "the future gets bias 0 (masked_fill with 0): open, not masked",
        ((ALIBI_MASK, "return bias.masked_fill(offset > 0, 0.0)"),),
    ),
    MutantSpec(
        "alibi_no_mask",
        "alibi",
        "no mask: -m (i - j) continued past the diagonal (a reward for the future)",
        ((ALIBI_MASK, "return bias"),),
    ),
    MutantSpec(
        "alibi_python_loop",
        "alibi",
        "a double Python loop over query and key positions",
        (
            (
                ALIBI_BIAS,
                "bias = torch.full((slopes.shape[0], seq_len, seq_len), float('-inf'))\n"
                "    for i in range(seq_len):\n"
                "        for j in range(i + 1):\n"
                "            bias[:, i, j] = -slopes * (i - j)",
            ),
            (ALIBI_MASK, "return bias"),
        ),
        slow=True,
    ),
    MutantSpec(
        "alibi_bias_float64",
        "alibi",
        "the distances in float64, so the bias comes out float64 (the spec: float32)",
        (
            (
                "positions = torch.arange(seq_len, dtype=torch.float32)",
                "positions = torch.arange(seq_len, dtype=torch.float64)",
            ),
        ),
    ),
)
