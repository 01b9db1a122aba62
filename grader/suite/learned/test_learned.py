"""Hidden tests of ``LearnedPositionalEmbedding(max_len, d_model)``: 20 points.

The module must own exactly one trainable ``[max_len, d_model]`` parameter and its forward must
return ``x + table[:T]``. The tests copy a table of their own into that parameter (the
``learned.forward`` op), so the expected output is plain float addition, computed here. Its inputs
left untouched and accepted in any layout: ``test_learned_inputs``.
"""

from __future__ import annotations

import re

import torch

from grader.student import NotATensor, StudentError
from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.attention.oracle import oracle_attention
from grader.suite.draw import answer, for_each
from grader.suite.expect import (
    as_info,
    as_tensor,
    expect,
    expect_dtype,
    expect_finite,
    expect_shape,
    mixes_devices,
    on_meta_device,
    within,
)
from grader.suite.inputs import meta, permutation, randn
from grader.suite.learned.domains import embedding_cases
from grader.suite.learned.tolerances import batch_sum_tolerance, sum_tolerance

ADD_FIRST_ROWS = "forward(x) must return x + table[:T], where T = x.shape[1] (row t of the table for position t)."


def _forward(
    student, max_len: int, d_model: int, x, table=None, strict: bool = False, key: tuple | None = None, **kwargs
) -> torch.Tensor:
    if key is None:
        out = student.learned_forward(max_len, d_model, x, table=table, **kwargs)
    else:
        out = answer(
            student, key, "learned.forward", max_len=max_len, d_model=d_model, x=x, table=table, **kwargs
        ).output
    return as_tensor(out, "LearnedPositionalEmbedding.forward", strict)


def _adds(out: torch.Tensor, x: torch.Tensor, rows: torch.Tensor) -> bool:
    """out = x + rows in float32, within one rounding of each sum."""
    return tuple(rows.shape) == tuple(x.shape[1:]) and within(out, x + rows, sum_tolerance(x, rows, x.dtype))


def _expect_adds_first_rows(student, x: torch.Tensor, table: torch.Tensor, key: tuple | None = None) -> None:
    (batch, seq_len, d_model), max_len = x.shape, table.shape[0]
    out = _forward(student, max_len, d_model, x, table, key=key)
    expect_shape(out, (batch, seq_len, d_model), "forward(x) for x [B, T, D]")
    if not _adds(out, x, table[:seq_len]):
        hint = ""
        if _adds(out, x, table[-seq_len:]):
            hint = " Yours adds the last T rows (table[-T:])."
        elif batch == 1 and seq_len > 1 and _adds(out, x, table[:1].expand(seq_len, -1)):
            hint = " Yours reads T from the first axis: x is [B, T, D], batch first."
        raise AssertionError(ADD_FIRST_ROWS + hint)


@graded(points=1, family="parameters", visibility=VISIBLE)
def test_one_trainable_table(student):
    """The module owns exactly one trainable parameter, of shape [max_len, d_model]."""
    for max_len, d_model in ((12, 6), (3, 40)):
        parameters = tuple(as_info(p, "each parameter") for p in student.learned_parameters(max_len, d_model))
        if not any(tuple(p.shape) == (max_len, d_model) for p in parameters):
            buffers = tuple(as_info(b, "each buffer") for b in student.learned_buffers(max_len, d_model))
            expect(
                not any(tuple(b.shape) == (max_len, d_model) for b in buffers),
                "The module has no parameter of shape [max_len, d_model]; a buffer of that shape was "
                "found: register the table with nn.Parameter so that it trains (a buffer is never trained).",
            )
        expect(
            len(parameters) > 0,
            "LearnedPositionalEmbedding has no parameters: wrap the table in nn.Parameter (a buffer "
            "or a plain tensor attribute is never trained).",
        )
        expect(
            len(parameters) == 1,
            f"LearnedPositionalEmbedding has {len(parameters)} parameters; the spec asks for exactly "
            "one, the [max_len, d_model] table (no extra scale, bias or layer).",
        )
        expect_shape(parameters[0], (max_len, d_model), "The table parameter")
        expect(parameters[0].requires_grad, "The table must be trainable (requires_grad=True).")


@graded(points=1, family="parameters", visibility=HIDDEN)
def test_gradients_reach_the_table(student):
    """Training reaches the table through forward: each row read gets its positions' gradient.

    The gradient of sum(out * g) in the table is g summed over the batch in rows 0 .. T - 1, and zero in the
    rows forward did not read."""
    x, upstream, table = randn(3, 5, 4, seed=391), randn(3, 5, 4, seed=392), randn(7, 4, seed=393)
    output = student.call("learned.forward", max_len=7, d_model=4, x=x, table=table, upstream=upstream).output
    gradient = output[1] if isinstance(output, tuple) and len(output) == 2 else None
    expect(
        not isinstance(gradient, NotATensor) and gradient is not None,
        "No gradient reached the table from forward(x): training would never change it. Add the parameter "
        "itself (self.table[:T]), not self.table.data or a detached copy, and do not run forward under "
        "torch.no_grad().",
    )
    expected = torch.zeros(7, 4, dtype=torch.float64)
    expected[:5] = upstream.double().sum(0)
    tolerance = torch.zeros(7, 4, dtype=torch.float64)
    tolerance[:5] = batch_sum_tolerance(upstream)
    gradient = as_tensor(gradient, "the table's gradient")
    expect_shape(gradient, (7, 4), "the table's gradient")
    expect(
        within(gradient, expected, tolerance),
        "The table's gradient is not the one of x + table[:T]: row t must receive the gradient of position t "
        "summed over the batch, and rows T and beyond nothing.",
    )


@graded(points=1, family="parameters", visibility=HIDDEN)
def test_initial_table_is_finite(student):
    """The table starts with finite values (whatever they are): a NaN or inf table cannot train."""
    x = torch.zeros(2, 7, 5)
    out = _forward(student, 8, 5, x)  # T < max_len: reading row max_len - 1 is the full-length test's property
    expect_finite(
        out,
        "forward(x) with the module's initial table (zeros, small random values or "
        "nn.Embedding's N(0, 1) are all fine)",
    )


@graded(points=3, family="values", visibility=VISIBLE)
def test_forward_adds_the_first_rows(student):
    """forward(x) = x + table[:T] for x [B, T, D] with T < max_len."""
    _expect_adds_first_rows(student, randn(2, 6, 4, seed=301), randn(10, 4, seed=302))


@graded(points=3, family="values", visibility=HIDDEN)
@for_each(embedding_cases(), count=8)
def test_forward_full_length_and_single_position(student, case):
    """forward(x) = x + table[:T] for any max_len, d_model and batch, at T = max_len, T = 1 and between."""
    _expect_adds_first_rows(student, case.x(), case.table(), key=("forward", case))


def _too_long_error(student, max_len: int, seq_len: int, **kwargs) -> StudentError | None:
    x = meta(2, seq_len, 4) if kwargs.get("device") == "meta" else randn(2, seq_len, 4, seed=321)
    try:
        student.learned_forward(max_len, 4, x, **kwargs)
    except StudentError as error:
        return error
    return None


# What correct practice raises for a position past the table: ValueError, or IndexError (what
# nn.Embedding and Python indexing raise), from an explicit check before any lookup.
LENGTH_ERRORS = ("ValueError", "IndexError")
TOO_LONG = (
    "A sequence longer than max_len must raise ValueError (or IndexError) from an explicit check of T "
    "against max_len, before any lookup: a learned table has no rows for positions it never saw."
)


def _explicit_check(student, max_len: int, seq_len: int) -> bool:
    """The error also comes on the meta device, where a lookup checks no index: so it comes from an
    explicit check. (An IndexError of F.embedding / nn.Embedding on the CPU only happens inside the
    lookup; on a GPU that lookup is a device-side assert that stops the whole program.)"""
    error = _too_long_error(student, max_len, seq_len, device="meta")
    if error is not None and error.kind not in LENGTH_ERRORS and not mixes_devices(error):
        return True  # the code reads values before it raises: the meta device cannot tell (expect.on_meta_device)
    return error is not None and error.kind in LENGTH_ERRORS


@graded(points=2, family="length_limit", visibility=VISIBLE)
def test_too_long_raises_value_error(student):
    """A sequence one longer than max_len raises ValueError or IndexError from an explicit check."""
    error = _too_long_error(student, max_len=8, seq_len=9)
    expect(error is not None, TOO_LONG + " Yours returned a result (did it cut or wrap the sequence?).")
    expect(error.kind in LENGTH_ERRORS, TOO_LONG + f" Yours raised {error.kind}.")
    expect(
        error.kind == "ValueError" or _explicit_check(student, max_len=8, seq_len=9),
        TOO_LONG + " Yours raised IndexError from inside the lookup (the table has no such row), with no "
        "check of its own: on a GPU that is a device-side assert that stops the whole program. Compare T "
        "with max_len first and raise.",
    )


@graded(points=1, family="length_limit", visibility=HIDDEN)
@for_each(embedding_cases(too_long=True), count=5)
def test_too_long_message_names_both_numbers(student, case):
    """The error for a too long sequence names both the length and max_len, for any lengths."""
    error = _too_long_error(student, max_len=case.max_len, seq_len=case.seq_len)
    expect(error is not None and error.kind in LENGTH_ERRORS, TOO_LONG)

    def names(number: int) -> bool:
        return re.search(rf"(?<!\d){number}(?!\d)", error.message) is not None

    expect(
        names(case.max_len) and names(case.seq_len),
        f"The {error.kind}'s message must name both the sequence length and max_len, so the caller "
        "sees what to change.",
    )


@graded(points=2, family="breaks_equivariance", visibility=VISIBLE)
def test_adding_the_table_breaks_equivariance(student):
    """Attention over forward(X) is no longer permutation-equivariant: the table encodes order."""
    # T < max_len: reading rows at T = max_len is the full-length test's property, not this one's.
    x, table = randn(1, 8, 16, seed=331), randn(10, 16, seed=332)
    order = permutation(8, seed=333)
    encoded, encoded_moved = _forward(student, 10, 16, x, table), _forward(student, 10, 16, x[:, order], table)
    expect_shape(encoded, (1, 8, 16), "forward(x)")
    moved = oracle_attention(encoded_moved, encoded_moved, encoded_moved)[0]
    reference = oracle_attention(encoded, encoded, encoded)[0]
    expect(
        float((moved - reference[:, order]).abs().max()) > 1e-2,
        "After your forward, attention still treats the tokens as an unordered set: each position "
        "must get its own row of the table.",
    )


@graded(points=2, family="dtype_device", visibility=VISIBLE)
def test_follows_to_float64(student):
    """forward returns a tensor; after module.to(torch.float64) it computes in float64."""
    x, table = randn(2, 5, 6, seed=341, dtype=torch.float64), randn(9, 6, seed=342, dtype=torch.float64)
    out = _forward(student, 9, 6, x, table, strict=True, dtype="float64")  # the type test of forward's output
    expect_dtype(out, torch.float64, "forward(x) after .to(torch.float64)")
    # The module first took the test's table in float32, then .to(float64): those values, added in float64.
    rows = table[:5].float().double()
    expect(
        within(out, x + rows, sum_tolerance(x, rows, torch.float64)),
        "After .to(torch.float64) the table must be float64 too: register it as an nn.Parameter so "
        "that .to() converts it.",
    )


@graded(points=1, family="dtype_device", visibility=HIDDEN)
def test_meta_device(student):
    """After module.to(device) the forward runs on that device."""
    output = on_meta_device(
        lambda: student.learned_forward(6, 4, meta(2, 5, 4), device="meta"),
        lambda: student.learned_forward(6, 4, randn(2, 5, 4, seed=371)),
    )
    if output is None:
        return  # the code reads values: the meta device cannot tell its devices (expect.on_meta_device)
    out = as_info(output, "forward(x) on another device")
    expect(
        out.device == "meta",
        "After module.to(device), forward must return a tensor on that device (a GPU, say): register "
        "the table as a parameter and create helper tensors with device=x.device.",
    )
    expect_shape(out, (2, 5, 4), "forward(x) on another device")
