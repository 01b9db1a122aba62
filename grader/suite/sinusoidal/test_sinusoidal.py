"""Hidden tests of ``sinusoidal_encoding(seq_len, d_model, base=10000.0)``: 20 points.

Two layouts are accepted, both with frequencies w_i = base^(-2i/d): interleaved (column 2i is
sin(p w_i), column 2i+1 is cos(p w_i)) and concatenated ([all sin | all cos]). A table passes a
value probe when it matches one of the two everywhere, within the float32 error model of each
entry (``sinusoidal_tolerance``: the angle p w_i loses about p w_i (3 |ln w_i| + 4) eps).
The hidden tests draw seq_len, d_model and base over the spec's domain (``domains_positions``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy
import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.attention.oracle import oracle_attention
from grader.suite.draw import answer, for_each
from grader.suite.expect import as_tensor, diagnose, expect, expect_dtype, expect_finite, expect_shape, within
from grader.suite.inputs import permutation, randn
from grader.suite.sinusoidal.domains import table_cases
from grader.suite.sinusoidal.oracle import SINUSOIDAL_LAYOUTS, oracle_sinusoidal, sinusoid_frequencies
from grader.suite.sinusoidal.tolerances import gram_tolerance, sinusoidal_tolerance, unit_circle_tolerance
from grader.suite.timing import expect_fast
from poslab.encodings import sinusoidal_encoding as reference_sinusoidal_encoding

SPEC = (
    "The table must hold sin(p * base^(-2i/d)) and cos(p * base^(-2i/d)) for positions p = 0, 1, ..., "
    "either interleaved (sin in even columns, cos in odd ones) or as [all sin | all cos]."
)


def _table(
    student, seq_len: int, d_model: int, strict: bool = False, key: tuple | None = None, **kwargs
) -> torch.Tensor:
    if key is None:
        output = student.sinusoidal_encoding(seq_len, d_model, **kwargs)
    else:
        output = answer(student, key, "sinusoidal_encoding", seq_len, d_model, **kwargs).output
    table = as_tensor(output, "sinusoidal_encoding", strict)
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
        "tensor2tensor's frequencies (log-spaced over d/2 - 1 steps) instead of base^(-2i/d)": torch.tensor(
            [base ** (-i / max(half - 1, 1)) for i in range(half)]
        ),
    }
    if base == 10000.0:
        wrong_frequencies["the default base is 1000 instead of 10000"] = sinusoid_frequencies(d_model, 1000.0)
    variants = {}
    # With d_model = 2 the two layouts are one table: a message may not name either.
    layouts = SINUSOIDAL_LAYOUTS if d_model > 2 else SINUSOIDAL_LAYOUTS[:1]
    for layout in layouts:
        where = f"in the {layout} layout" if d_model > 2 else "in either layout (with d_model = 2 they are the same)"
        variants[f"positions start at 1 instead of 0, {where}"] = lambda layout=layout: oracle_sinusoidal(
            positions + 1, d_model, base, layout
        )
        variants[f"sin and cos are swapped, {where}"] = lambda layout=layout: _swap_sin_cos(
            oracle_sinusoidal(positions, d_model, base, layout), layout
        )
        for mistake, omega in wrong_frequencies.items():
            variants[f"{mistake}, {where}"] = lambda layout=layout, omega=omega: oracle_sinusoidal(
                positions, d_model, base, layout, omega.double()
            )
    return variants


def _tolerances(positions, d_model: int, base: float) -> dict[str, torch.Tensor]:
    return {layout: sinusoidal_tolerance(positions, d_model, base, layout) for layout in SINUSOIDAL_LAYOUTS}


def _expectations(positions, d_model: int, base: float) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    tolerances = _tolerances(positions, d_model, base)
    return {
        layout: (oracle_sinusoidal(positions, d_model, base, layout), tolerances[layout])
        for layout in SINUSOIDAL_LAYOUTS
    }


@lru_cache(maxsize=32)
def _first_rows_expectations(seq_len: int, d_model: int, base: float) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Rows 0 .. seq_len - 1 (what most tests check): the same for every submission graded in this process."""
    return _expectations(torch.arange(seq_len), d_model, base)


def _matching_layout(rows: torch.Tensor, positions, d_model: int, base: float) -> str | None:
    positions = torch.as_tensor(positions)
    first_rows = len(positions) > 0 and torch.equal(positions, torch.arange(len(positions)))
    expectations = (
        _first_rows_expectations(len(positions), d_model, base)
        if first_rows
        else _expectations(positions, d_model, base)
    )
    for layout, (expected, tolerance) in expectations.items():
        if within(rows, expected, tolerance):
            return layout
    return None


def _expect_rows(table: torch.Tensor, positions, d_model: int, base: float = 10000.0) -> None:
    """Rows ``positions`` of ``table`` match one accepted layout; else name the likely mistake."""
    positions = torch.as_tensor(positions)
    rows = table[positions]
    if _matching_layout(rows, positions, d_model, base) is None:
        loosest = torch.maximum(*_tolerances(positions, d_model, base).values())
        raise AssertionError(SPEC + diagnose(rows, _mistakes(positions, d_model, base), loosest))


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
@for_each(table_cases(), count=8, key="sinusoidal.table_cases")
def test_values_at_many_positions(student, case):
    """The table matches the formula at every position, for tables up to 4,096 rows and any even d_model."""
    table = _table(student, case.seq_len, case.d_model, key=("table", case))
    _expect_rows(table, range(case.seq_len), case.d_model)


@graded(points=2, family="values", visibility=HIDDEN)
@for_each(table_cases(base="explicit", longest=512), count=6)
def test_base_argument(student, case):
    """The base argument sets the frequencies: w_i = base^(-2i/d), for any base > 1."""
    positions = torch.arange(case.seq_len)
    table = _table(student, case.seq_len, case.d_model, key=("base", case), base=case.base)
    honoured = _matching_layout(table, positions, case.d_model, case.base) is not None
    if not honoured:
        # A table already wrong at the default base loses the value tests; here it only has to use the base.
        default = _table(student, case.seq_len, case.d_model, key=("default", case.seq_len, case.d_model))
        if _matching_layout(default, positions, case.d_model, 10000.0) is None:
            honoured = case.base == 10000.0 or not torch.equal(table, default)
    expect(
        honoured,
        "sinusoidal_encoding(..., base=b) must use the frequencies b^(-2i/d): is the base "
        "argument ignored or hard-coded to 10000?",
    )


@lru_cache(maxsize=32)
def _loosest_rows(seq_len: int, d_model: int, base: float) -> torch.Tensor:
    """The larger of the two layouts' tolerances, rows 0 .. seq_len - 1."""
    return torch.maximum(*_tolerances(torch.arange(seq_len), d_model, base).values())


def _expect_relative(table: torch.Tensor, base: float = 10000.0) -> None:
    rows = table[:128].double()  # every offset up to 127: the Gram matrix of more rows costs more than it shows
    margin = gram_tolerance(rows, _loosest_rows(rows.shape[0], rows.shape[1], base))
    gram = rows @ rows.T
    steps = (gram[1:, 1:] - gram[:-1, :-1]).abs()
    expect(
        bool((steps <= margin[1:, 1:] + margin[:-1, :-1]).all()),
        "<PE_p, PE_q> must depend only on p - q, which holds when each sin column has a cos column "
        "of the same frequency. Check that sin and cos share w_i = base^(-2i/d) (the exponent uses "
        "the pair index i, not the column index).",
    )


@graded(points=2, family="relative", visibility=VISIBLE)
def test_dot_product_depends_only_on_offset(student):
    """<PE_p, PE_q> depends only on p - q."""
    _expect_relative(_table(student, 64, 16))


@graded(points=1, family="relative", visibility=HIDDEN)
@for_each(table_cases(), count=8, key="sinusoidal.table_cases")
def test_dot_product_depends_only_on_offset_other_sizes(student, case):
    """<PE_p, PE_q> depends only on p - q, for any table size."""
    _expect_relative(_table(student, case.seq_len, case.d_model, key=("table", case)))


@graded(points=2, family="breaks_equivariance", visibility=VISIBLE)
def test_adding_the_table_breaks_equivariance(student):
    """Attention over X + PE is no longer permutation-equivariant: the table encodes order."""
    x = randn(8, 16, seed=201)
    order = permutation(8, seed=202)
    table = _table(student, 8, 16).double()
    moved = oracle_attention(x[order] + table, x[order] + table, x[order] + table)[0]
    reference = oracle_attention(x + table, x + table, x + table)[0]
    expect(
        float((moved - reference[order]).abs().max()) > 1e-2,
        "After adding your table, attention still treats the tokens as an unordered set: "
        "the rows of the table must differ from position to position.",
    )


@lru_cache(maxsize=2)
def _unit_circle(seq_len: int, d_model: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(d/2 for each row, its tolerance): the same for every submission graded in this process."""
    return (
        torch.full((seq_len,), d_model / 2.0, dtype=torch.float64),
        unit_circle_tolerance(torch.arange(seq_len), d_model, 10000.0),
    )


def _keys_and_squared_norms(table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row projected on a fixed random direction, sorted, and each row's squared norm, in float64.

    Identical rows give identical keys; distinct float32 rows (which differ by >= 6e-8 somewhere) give
    distinct float64 keys almost surely, and a NaN or an infinity in a row makes its key one too.
    (Sorting 100,000 keys costs 4 ms with numpy, 7 with torch; torch.unique over rows took 1.6 s. The
    rows go to float64 a block at a time: a copy of the whole table took 4 ms more than the work.)"""
    direction = torch.randn(table.shape[-1], dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    keys, squared_norms = [], []
    for rows in table.split(4096):
        rows = rows.double()
        keys.append(rows @ direction)
        squared_norms.append(rows.square().sum(-1))
    return torch.from_numpy(numpy.sort(torch.cat(keys).numpy())), torch.cat(squared_norms)


@graded(points=3, family="long_sequence", visibility=VISIBLE)
def test_long_sequence_finite_and_distinct(student):
    """At 100,000 positions the table is finite, its rows are distinct, and each pair stays on the unit circle."""
    # 8 columns: 4 frequencies, down to base^(-3/4). 16 cost four times the work (float64 sin and cos of
    # 1.6 M angles: 24 ms against 6) and caught no mistake that 8 misses (mutation, corpus, named mutants).
    seq_len, d_model = 100_001, 8
    table = _table(student, seq_len, d_model)
    keys, squared_norms = _keys_and_squared_norms(table)
    if not bool(torch.isfinite(keys).all()):
        expect_finite(table, "The table for a long sequence (compute the angles in float32 or float64, not float16)")
    expect(
        bool((keys.diff() > 0).all()),
        "Two positions of a long table got identical rows: the encoding must tell every position apart.",
    )
    # sin^2 + cos^2 = 1 for each of the d/2 pairs, whatever the layout and the frequencies; each entry
    # may be off by its error-model tolerance, so a pair's sum of squares by 2 (|sin| + |cos|) times that.
    expected, tolerance = _unit_circle(seq_len, d_model)
    expect(
        within(squared_norms, expected, tolerance),
        "Each row of a sinusoidal table must have squared norm d/2 (one sin^2 + cos^2 = 1 per pair); "
        "far along a long sequence yours does not.",
    )


@graded(points=2, family="speed", visibility=VISIBLE)
def test_speed(student):
    """Building a long table is vectorised: not far slower than the reference."""
    # d = 2: almost no work per row, so a loop over 200,000 positions stands out even on a busy machine.
    expect_fast(student, "sinusoidal_encoding", lambda: reference_sinusoidal_encoding(200_000, 2), 200_000, 2)
