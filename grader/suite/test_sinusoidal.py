"""Hidden tests of ``sinusoidal_encoding(seq_len, d_model, base=10000.0)``: 20 points.

Two layouts are accepted, both with frequencies w_i = base^(-2i/d): interleaved (column 2i is
sin(p w_i), column 2i+1 is cos(p w_i)) and concatenated ([all sin | all cos]). A table passes a
value probe when it matches one of the two everywhere, within a tolerance that grows with the
position (float32 angles lose ~p * 1e-7 rad; see tolerances.sinusoidal_tolerance).
"""

from __future__ import annotations

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.expect import (
    as_tensor,
    diagnose,
    expect,
    expect_dtype,
    expect_finite,
    expect_shape,
    first_match,
    within,
)
from grader.suite.inputs import permutation, randn
from grader.suite.oracles import SINUSOIDAL_LAYOUTS, oracle_attention, oracle_sinusoidal, sinusoid_frequencies
from grader.suite.timing import expect_fast
from grader.suite.tolerances import sinusoidal_tolerance
from poslab.encodings import sinusoidal_encoding as reference_sinusoidal_encoding

SPEC = ("The table must hold sin(p * base^(-2i/d)) and cos(p * base^(-2i/d)) for positions p = 0, 1, ..., "
        "either interleaved (sin in even columns, cos in odd ones) or as [all sin | all cos].")


def _table(student, seq_len: int, d_model: int, strict: bool = False, **kwargs) -> torch.Tensor:
    table = as_tensor(student.sinusoidal_encoding(seq_len, d_model, **kwargs), "sinusoidal_encoding", strict)
    expect_shape(table, (seq_len, d_model), "sinusoidal_encoding(seq_len, d_model)")
    return table


def _swap_sin_cos(table: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "interleaved":
        return table.view(table.shape[0], -1, 2).flip(-1).flatten(-2)  # (T, d/2, [sin, cos]) -> [cos, sin]
    return table.roll(table.shape[1] // 2, dims=-1)  # [sin | cos] -> [cos | sin]


def _mistakes(positions: torch.Tensor, d_model: int, base: float) -> dict:
    """Known wrong tables at ``positions``, in both layouts, built only if needed."""
    half = d_model // 2
    wrong_frequencies = {
        "the exponent is i/d instead of 2i/d": torch.tensor([base ** (-i / d_model) for i in range(half)]),
        "tensor2tensor's frequencies (log-spaced over d/2 - 1 steps) instead of base^(-2i/d)":
            torch.tensor([base ** (-i / max(half - 1, 1)) for i in range(half)]),
    }
    if base == 10000.0:
        wrong_frequencies["the default base is 1000 instead of 10000"] = sinusoid_frequencies(d_model, 1000.0)
    variants = {}
    for layout in SINUSOIDAL_LAYOUTS:
        variants[f"positions start at 1 instead of 0, in the {layout} layout"] = (
            lambda layout=layout: oracle_sinusoidal(positions + 1, d_model, base, layout))
        variants[f"sin and cos are swapped, in the {layout} layout"] = (
            lambda layout=layout: _swap_sin_cos(oracle_sinusoidal(positions, d_model, base, layout), layout))
        for mistake, omega in wrong_frequencies.items():
            variants[f"{mistake}, in the {layout} layout"] = (
                lambda layout=layout, omega=omega: oracle_sinusoidal(positions, d_model, base, layout, omega.double()))
    return variants


def _expect_rows(table: torch.Tensor, positions, d_model: int, base: float = 10000.0) -> None:
    """Rows ``positions`` of ``table`` match one accepted layout; else name the likely mistake."""
    positions = torch.as_tensor(positions)
    rows = table[positions]
    tolerance = sinusoidal_tolerance(positions)
    candidates = {layout: oracle_sinusoidal(positions, d_model, base, layout) for layout in SINUSOIDAL_LAYOUTS}
    if first_match(rows, candidates, tolerance) is None:
        raise AssertionError(SPEC + diagnose(rows, _mistakes(positions, d_model, base), tolerance))


@graded(points=2, family="shape", visibility=VISIBLE)
def test_shape_and_dtype(student):
    """The table is a [seq_len, d_model] float32 tensor."""
    for seq_len, d_model in ((10, 8), (1, 6), (33, 64)):
        table = _table(student, seq_len, d_model, strict=True)  # the type test
        expect_dtype(table, torch.float32, "The sinusoidal table")


@graded(points=2, family="values", visibility=VISIBLE)
def test_first_rows(student):
    """The first rows hold sin(p w_i), cos(p w_i) with w_i = 10000^(-2i/d), starting at p = 0."""
    _expect_rows(_table(student, 4, 8), range(4), 8)


@graded(points=4, family="values", visibility=HIDDEN)
def test_values_at_many_positions(student):
    """The table matches the formula at every position of long tables, for several d_model."""
    for seq_len, d_model in ((2048, 64), (300, 6), (5, 2), (129, 130)):
        _expect_rows(_table(student, seq_len, d_model), range(seq_len), d_model)


def _matches_formula(table: torch.Tensor, base: float) -> bool:
    positions = torch.arange(table.shape[0])
    candidates = {layout: oracle_sinusoidal(positions, table.shape[1], base, layout) for layout in SINUSOIDAL_LAYOUTS}
    return first_match(table, candidates, sinusoidal_tolerance(positions)) is not None


@graded(points=2, family="values", visibility=HIDDEN)
def test_base_argument(student):
    """The base argument sets the frequencies: w_i = base^(-2i/d)."""
    default = _table(student, 50, 10)
    for base in (100.0, 500.0):
        table = _table(student, 50, 10, base=base)
        # A table already wrong at the default base loses the value tests; here it only has to use b.
        honoured = _matches_formula(table, base) if _matches_formula(default, 10000.0) else not torch.equal(table, default)
        expect(honoured, "sinusoidal_encoding(..., base=b) must use the frequencies b^(-2i/d): is the base "
                         "argument ignored or hard-coded to 10000?")


def _gram_is_toeplitz(table: torch.Tensor, tolerance: float) -> bool:
    """<PE_p, PE_q> depends only on p - q: every diagonal of the Gram matrix is constant."""
    gram = table.double() @ table.double().T
    return bool(((gram[1:, 1:] - gram[:-1, :-1]).abs() <= tolerance).all())


def _expect_relative(table: torch.Tensor) -> None:
    seq_len, d_model = table.shape
    # Each entry is off by at most the table tolerance; a dot product of two rows by 2 d times that.
    tolerance = 2 * d_model * float(sinusoidal_tolerance([seq_len]).max())
    expect(_gram_is_toeplitz(table, tolerance),
           "<PE_p, PE_q> must depend only on p - q, which holds when each sin column has a cos column "
           "of the same frequency. Check that sin and cos share w_i = base^(-2i/d) (the exponent uses "
           "the pair index i, not the column index).")


@graded(points=2, family="relative", visibility=VISIBLE)
def test_dot_product_depends_only_on_offset(student):
    """<PE_p, PE_q> depends only on p - q."""
    _expect_relative(_table(student, 64, 16))


@graded(points=1, family="relative", visibility=HIDDEN)
def test_dot_product_depends_only_on_offset_other_sizes(student):
    """<PE_p, PE_q> depends only on p - q, for wide and narrow tables."""
    for seq_len, d_model in ((200, 128), (50, 6)):
        _expect_relative(_table(student, seq_len, d_model))


@graded(points=2, family="breaks_equivariance", visibility=VISIBLE)
def test_adding_the_table_breaks_equivariance(student):
    """Attention over X + PE is no longer permutation-equivariant: the table encodes order."""
    x = randn(8, 16, seed=201)
    order = permutation(8, seed=202)
    table = _table(student, 8, 16).double()
    moved = oracle_attention(x[order] + table, x[order] + table, x[order] + table)[0]
    reference = oracle_attention(x + table, x + table, x + table)[0]
    expect(float((moved - reference[order]).abs().max()) > 1e-2,
           "After adding your table, attention still treats the tokens as an unordered set: "
           "the rows of the table must differ from position to position.")


@graded(points=3, family="long_sequence", visibility=VISIBLE)
def test_long_sequence_finite_and_distinct(student):
    """At 100,000 positions the table is finite, its rows are distinct, and each pair stays on the unit circle."""
    seq_len, d_model = 100_001, 16
    table = _table(student, seq_len, d_model)
    expect_finite(table, "The table for a long sequence (compute the angles in float32 or float64, not float16)")
    # Project each row on a random direction: identical rows give identical keys, distinct float32
    # rows (which differ by >= 6e-8 somewhere) give distinct float64 keys almost surely. Sorting
    # 100,000 keys costs ~10 ms; torch.unique over rows costs ~1.6 s of a 2 s suite.
    direction = torch.randn(d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    keys = (table.double() @ direction).sort().values
    expect(bool((keys.diff() > 0).all()),
           "Two positions of a long table got identical rows: the encoding must tell every position apart.")
    # sin^2 + cos^2 = 1 for each of the d/2 pairs, whatever the layout and the frequencies.
    squared_norms = table.double().square().sum(-1)
    expect(within(squared_norms, torch.full((seq_len,), d_model / 2.0, dtype=torch.float64), 1e-4),
           "Each row of a sinusoidal table must have squared norm d/2 (one sin^2 + cos^2 = 1 per pair); "
           "far along a long sequence yours does not.")


@graded(points=2, family="speed", visibility=VISIBLE)
def test_speed(student):
    """Building a long table is vectorised: not far slower than the reference."""
    # d = 2: almost no work per row, so a loop over 200,000 positions stands out even on a busy machine.
    expect_fast(student, "sinusoidal_encoding", lambda: reference_sinusoidal_encoding(200_000, 2), 200_000, 2)
