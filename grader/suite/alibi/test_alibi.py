"""Hidden tests of ``alibi_slopes(n_heads)`` and ``alibi_bias(n_heads, seq_len)``: 20 points.

Slopes follow Press et al. (2022): 2^(-8(h+1)/n) for n a power of two; otherwise the slopes of the
power of two c below n, then every other slope of 2c. The bias is -m_h (i - j) for keys j <= i
and, above the diagonal, -inf or any finite value <= -1e4 (FUTURE_MASK_AT_MOST: softmax gives those
keys weight exactly 0 in float32, as with Hugging Face's torch.finfo(dtype).min). Both are float32;
they are compared to float64 values within the error model (``alibi_slope_relative_tolerance``:
h + 1 roundings for a geometric sequence; ``alibi_bias_tolerance``: u m (i + j) for m j - m i). Only
the causal test judges the entries above the diagonal; the value tests judge j <= i, the entries
their property defines. The hidden tests draw head counts from 1 to 64 and lengths up to 200.
"""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.alibi.domains import alibi_cases, head_counts, past_bfloat16_lengths
from grader.suite.alibi.oracle import oracle_alibi_bias, oracle_alibi_slopes
from grader.suite.alibi.tolerances import alibi_bias_tolerance, alibi_slope_relative_tolerance
from grader.suite.attention.oracle import MINUS_INF
from grader.suite.draw import answer, for_each
from grader.suite.expect import as_tensor, diagnose, expect, expect_dtype, expect_shape, within
from grader.suite.timing import expect_fast
from poslab.encodings import alibi_bias as reference_alibi_bias

# A finite future mask at most this low gives weight exactly 0 in float32: exp(-1e4) underflows,
# whatever the logits of the visible keys (those are at most a few hundred in practice).
FUTURE_MASK_AT_MOST = -1e4


def _slopes(student, n_heads: int, strict: bool = False) -> torch.Tensor:
    slopes = as_tensor(answer(student, ("slopes", n_heads), "alibi_slopes", n_heads).output, "alibi_slopes", strict)
    expect_shape(slopes, (n_heads,), "alibi_slopes(n_heads)")
    return slopes


def _bias(student, n_heads: int, seq_len: int, strict: bool = False) -> torch.Tensor:
    bias = as_tensor(
        answer(student, ("bias", n_heads, seq_len), "alibi_bias", n_heads, seq_len).output, "alibi_bias", strict
    )
    expect_shape(bias, (n_heads, seq_len, seq_len), "alibi_bias(n_heads, seq_len)")
    return bias


def _close_slopes(slopes: torch.Tensor, expected: torch.Tensor) -> bool:
    relative = alibi_slope_relative_tolerance(expected.shape[0])
    return tuple(slopes.shape) == tuple(expected.shape) and within(slopes, expected, relative * expected.double().abs())


@lru_cache(maxsize=64)
def _expected_below_diagonal(
    seq_len: int, slopes: tuple[float, ...]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mask of j <= i, -m_h (i - j) there, its tolerance): the same for every submission with these slopes."""
    m = torch.tensor(slopes, dtype=torch.float64)
    visible = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    expected = oracle_alibi_bias(len(slopes), seq_len, m)[:, visible]
    return visible, expected, alibi_bias_tolerance(m, seq_len)[:, visible]


def _close_on_and_below_diagonal(bias: torch.Tensor, slopes: torch.Tensor) -> bool:
    """The entries j <= i are -m_h (i - j) for the given slopes; those above the diagonal are the causal test's."""
    n_heads, seq_len = slopes.shape[0], bias.shape[-1]
    if tuple(bias.shape) != (n_heads, seq_len, seq_len):
        return False
    visible, expected, margin = _expected_below_diagonal(seq_len, tuple(slopes.double().tolist()))
    return within(bias[:, visible], expected, margin)


def _slopes_for_bias(student, n_heads: int) -> torch.Tensor:
    """The student's own slopes, so that a wrong slope costs the slope tests and not the bias tests;
    the oracle's when alibi_slopes gives nothing usable (that too is the slope tests' to judge)."""
    try:
        slopes = as_tensor(answer(student, ("slopes", n_heads), "alibi_slopes", n_heads).output, "alibi_slopes")
    except Exception:  # noqa: BLE001 -- whatever it did, the slope tests report it
        return oracle_alibi_slopes(n_heads)
    if tuple(slopes.shape) != (n_heads,) or not bool(torch.isfinite(slopes.double()).all()):
        return oracle_alibi_slopes(n_heads)
    return slopes.double()


def _slope_mistakes(n_heads: int) -> dict:
    closest = 1 << (n_heads.bit_length() - 1)
    return {
        "the exponent runs over h = 0 .. n-1, so the first slope is 1 (use h + 1)": lambda: torch.tensor(
            [2.0 ** (-8.0 * h / n_heads) for h in range(n_heads)]
        ),
        "the slopes are in increasing order (the first head gets the largest slope)": lambda: oracle_alibi_slopes(
            n_heads
        ).flip(0),
        "for a head count that is not a power of two, the first n slopes of the next power of two are taken": lambda: (
            torch.tensor([2.0 ** (-8.0 * (h + 1) / (2 * closest)) for h in range(n_heads)])
        ),
        "2^(-8(h+1)/n) is used for every n, even when n is not a power of two": lambda: torch.tensor(
            [2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)]
        ),
    }


def _expect_slopes(student, n_heads: int, strict: bool = False) -> None:
    slopes = _slopes(student, n_heads, strict)
    expect_dtype(slopes, torch.float32, "alibi_slopes")
    if not _close_slopes(slopes, oracle_alibi_slopes(n_heads)):
        raise AssertionError(
            "alibi_slopes(n) must be 2^(-8(h+1)/n) for h = 0 .. n-1 when n is a power of two; otherwise "
            "the slopes of the power of two c below n, then every other slope of 2c."
            + diagnose(
                slopes,
                _slope_mistakes(n_heads),
                alibi_slope_relative_tolerance(n_heads) * oracle_alibi_slopes(n_heads),
            )
        )


@graded(points=3, family="slopes", visibility=VISIBLE)
def test_slopes_for_eight_heads(student):
    """alibi_slopes returns a tensor: 8 heads get the slopes 1/2, 1/4, ..., 1/256, in that order."""
    _expect_slopes(student, 8, strict=True)  # the type test of alibi_slopes


@graded(points=3, family="slopes", visibility=HIDDEN)
@for_each(head_counts(), count=10)
def test_slopes_for_other_head_counts(student, n_heads):
    """Slopes for any head count from 1 to 64, powers of two or not."""
    _expect_slopes(student, n_heads)


@graded(points=2, family="shape", visibility=VISIBLE)
def test_bias_shape_dtype_and_zero_diagonal(student):
    """The bias is [n_heads, T, T] float32 and 0 on the diagonal (a token does not penalise itself)."""
    bias = _bias(student, 4, 6, strict=True)  # the type test of alibi_bias
    expect_dtype(bias, torch.float32, "alibi_bias")
    expect(
        bool((bias.diagonal(dim1=-2, dim2=-1) == 0).all()),
        "alibi_bias must be 0 on the diagonal: the distance from a token to itself is 0.",
    )


@graded(points=3, family="causality", visibility=VISIBLE)
def test_causal_mask(student):
    """Keys after the query (j > i) get -inf (or a finite mask <= -1e4); keys j <= i are finite."""
    for n_heads, seq_len in ((4, 6), (3, 9)):
        bias = _bias(student, n_heads, seq_len)
        above = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1).expand(n_heads, -1, -1)
        expect(
            bool(torch.isfinite(bias[~above]).all()),
            "alibi_bias must be finite on and below the diagonal (keys j <= i that query i may see). "
            "Is the mask on the wrong triangle?",
        )
        future = bias[above].double()
        expect(
            bool(((future == MINUS_INF) | (torch.isfinite(future) & (future <= FUTURE_MASK_AT_MOST))).all()),
            "alibi_bias must be -inf above the diagonal (keys j > i, the future), or a finite mask of "
            "at most -1e4 such as torch.finfo(torch.float32).min, so that attention gives those keys "
            "weight exactly 0. Yours leaves some of the future open (0, a small penalty, or -m (i - j) "
            "continued past the diagonal).",
        )


@graded(points=2, family="relative", visibility=VISIBLE)
def test_bias_depends_only_on_distance(student):
    """Below the diagonal the bias depends only on i - j and falls as the key gets further back."""
    bias = _bias(student, 4, 8).double()
    below = torch.ones(8, 8, dtype=torch.bool).tril(-1)
    expect(bool(torch.isfinite(bias[:, below]).all()), "alibi_bias must be finite below the diagonal.")
    # Constant along each diagonal i - j = c: compare each entry with its upper-left neighbour.
    inner_below = below[1:, 1:]
    steps = (bias[:, 1:, 1:] - bias[:, :-1, :-1])[:, inner_below]
    margin = alibi_bias_tolerance(_slopes_for_bias(student, 4), 8)
    allowed = (margin[:, 1:, 1:] + margin[:, :-1, :-1])[:, inner_below]
    expect(bool((steps.abs() <= allowed).all()), "alibi_bias must depend only on the distance i - j.")
    farther_back = bias[:, 1:, :-1] - bias[:, :-1, :-1]  # bias[i + 1, j] - bias[i, j]: query one step later
    on_or_below = torch.ones(7, 7, dtype=torch.bool).tril()  # j <= i
    expect(
        bool((farther_back[:, on_or_below] < 0).all()),
        "alibi_bias must penalise distance: -m (i - j) gets more negative the further back the key is. Check the sign.",
    )


@graded(points=2, family="values", visibility=VISIBLE)
def test_bias_uses_the_slopes(student):
    """alibi_bias(4, 5)[h, i, j] = -alibi_slopes(4)[h] (i - j) for j <= i."""
    bias, slopes = _bias(student, 4, 5), _slopes_for_bias(student, 4)
    # Built from the student's own slopes: a wrong slope costs the slope tests, not this one.
    expect(
        _close_on_and_below_diagonal(bias, slopes),
        "alibi_bias[h, i, j] must be -m_h (i - j) below the diagonal, with m_h = alibi_slopes(n)[h] "
        "for the same number of heads.",
    )


@graded(points=3, family="values", visibility=HIDDEN)
@for_each(alibi_cases(), count=8, edges=past_bfloat16_lengths())
def test_bias_values_other_heads(student, case):
    """alibi_bias matches -m_h (i - j) for j <= i for any head count from 1 to 64 and lengths from 1 to 200, and 260 (one head)."""
    bias = _bias(student, case.n_heads, case.seq_len)
    expect(
        _close_on_and_below_diagonal(bias, _slopes_for_bias(student, case.n_heads)),
        "alibi_bias[h, i, j] must be -m_h (i - j) on and below the diagonal, with the slopes of "
        "alibi_slopes for the same number of heads (for any number of heads).",
    )


@graded(points=2, family="speed", visibility=VISIBLE)
def test_speed(student):
    """alibi_bias is vectorised: not far slower than the reference."""
    expect_fast(student, "alibi_bias", lambda: reference_alibi_bias(8, 400), 8, 400)
