"""The t5 exercise's hidden tests of t5_relative_bias, of inputs left untouched, and of speed."""

from __future__ import annotations

from functools import lru_cache

import torch

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, expect_inputs_left, for_each
from grader.suite.expect import as_tensor, expect_dtype, expect_untouched
from grader.suite.inputs import randn
from grader.suite.layouts import expect_layouts_accepted, for_each_layout, laid_arguments
from grader.suite.t5.domains import BucketCase, RelativeBiasCase, bucket_cases, decoder_bias_edges, relative_bias_cases
from grader.suite.t5.mistakes import in_bounds
from grader.suite.t5.oracle import oracle_t5_bucket_bounds
from grader.suite.t5.test_t5 import _bias, _bias_buckets, _drawn_bounds, test_log_spaced_buckets_beyond_the_exact_half
from grader.suite.timing import expect_fast
from poslab.encodings import t5_relative_bias as reference_t5_relative_bias
from poslab.encodings import t5_relative_bucket as reference_t5_relative_bucket


def _expected_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool, max_distance: int, relative_sign: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two accepted biases (low and high edge buckets), [n_heads, Tq, Tk]."""
    low, high = _bias_buckets(query_len, key_len, bidirectional, table.shape[0], max_distance, relative_sign)
    return table.double()[low].permute(2, 0, 1), table.double()[high].permute(2, 0, 1)


def _matches_bias(bias: torch.Tensor, expected: tuple[torch.Tensor, torch.Tensor]) -> bool:
    values = bias.double()
    return tuple(values.shape) == tuple(expected[0].shape) and bool(
        ((values == expected[0]) | (values == expected[1])).all()
    )


def _expect_bias(
    student,
    table: torch.Tensor,
    query_len: int,
    key_len: int,
    bidirectional: bool,
    max_distance: int,
    strict: bool = False,
    key: tuple | None = None,
    passed: dict | None = None,
) -> torch.Tensor:
    """``passed``: the keyword arguments of the call (default: both; {} calls with the defaults)."""
    passed = {"bidirectional": bidirectional, "max_distance": max_distance} if passed is None else passed
    bias = _bias(student, table, query_len, key_len, strict, key=key, **passed)
    if _matches_bias(bias, _expected_bias(table, query_len, key_len, bidirectional, max_distance)):
        return bias
    own = _own_buckets(student, query_len, key_len, bidirectional, table.shape[0], max_distance)
    if own is not None and _matches_bias(bias, (table.double()[own].permute(2, 0, 1),) * 2):
        return bias  # read by the submission's own buckets: a bucket mistake is the bucket tests' alone
    hint = ""
    if _matches_bias(bias, _expected_bias(table, query_len, key_len, bidirectional, max_distance, -1)):
        hint = " Your bias uses i - j (query - key); the spec's relative position is j - i (key - query)."
    elif table.shape[0] != 32 and _matches_bias(
        bias, _expected_bias(table[:32], query_len, key_len, bidirectional, max_distance)
    ):
        hint = " Your bias reads it with 32 buckets: the number of buckets is the table's first axis."
    raise AssertionError(
        "t5_relative_bias must be [n_heads, Tq, Tk] with bias[h, i, j] = table[t5_relative_bucket(j - i, "
        "bidirectional, table.shape[0], max_distance), h]; yours matches neither the spec's buckets nor your own "
        "t5_relative_bucket's." + hint
    )


def _own_buckets(
    student, query_len: int, key_len: int, bidirectional: bool, num_buckets: int, max_distance: int
) -> torch.Tensor | None:
    """The submission's own t5_relative_bucket of j - i, when it gives a bucket in range for every (i, j)."""
    relative = torch.arange(key_len)[None, :] - torch.arange(query_len)[:, None]
    key = ("own buckets", query_len, key_len, bidirectional, num_buckets, max_distance)
    kwargs = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    try:
        buckets = as_tensor(answer(student, key, "t5_relative_bucket", relative, **kwargs).output, "buckets")
    except Exception:  # noqa: BLE001 -- no own buckets to read by: the spec's alone judge the bias
        return None
    if tuple(buckets.shape) != tuple(relative.shape) or buckets.is_floating_point() or buckets.is_complex():
        return None
    buckets = buckets.long()
    return buckets if bool(((buckets >= 0) & (buckets < num_buckets)).all()) else None


@graded(points=2, family="bias", visibility=VISIBLE)
def test_bias_reads_the_table_by_bucket(student):
    """t5_relative_bias(table, Tq, Tk) is [n_heads, Tq, Tk], the table's dtype, with bias[h, i, j] = table[bucket(j - i), h]."""
    table = randn(32, 4, seed=61)
    bias = _expect_bias(student, table, 6, 9, True, 128, strict=True)  # the type test of t5_relative_bias
    expect_dtype(bias, torch.float32, "t5_relative_bias")
    _expect_bias(student, randn(16, 3, seed=62), 9, 6, True, 128)  # the table's first axis is num_buckets


@graded(points=1, family="bias", visibility=HIDDEN)
@for_each(relative_bias_cases(), count=6, edges=decoder_bias_edges())
def test_bias_for_decoders_other_sizes_and_float64_tables(student, case):
    """The bias is right with the default arguments, causal or not, any Tq and Tk, bucket count and float dtype."""
    bidirectional, max_distance = case.used
    bias = _expect_bias(
        student,
        case.table(),
        case.queries,
        case.keys,
        bidirectional,
        max_distance,
        key=("bias", case),
        passed=case.kwargs(),
    )
    expect_dtype(bias, case.table().dtype, "t5_relative_bias")


VIEWS = (
    "t5_relative_bucket and t5_relative_bias must accept their tensors in any layout (a transposed or "
    "permuted tensor, every other entry, a slice of a larger one, a broadcast one) and give the same result: "
    "use reshape, not view, and index rather than assume a layout."
)


@lru_cache(maxsize=8)
def _laid_bounds(laid) -> tuple[torch.Tensor, torch.Tensor]:
    """The accepted answers for a laid case's values (both biases, or both edges of each bucket), once per process."""
    case, values = laid.case, laid_arguments(laid, lambda: _laid_tensors(laid))[0]
    if isinstance(case, RelativeBiasCase):
        return _expected_bias(values[0], case.queries, case.keys, *case.used)
    return oracle_t5_bucket_bounds(values[0], case.bidirectional, case.num_buckets, case.max_distance)


def _laid_tensors(laid) -> list[torch.Tensor]:
    return [laid.case.table() if isinstance(laid.case, RelativeBiasCase) else laid.case.relative()]


def _laid_expectation(laid, output, values) -> bool:
    if isinstance(laid.case, RelativeBiasCase):
        return _matches_bias(as_tensor(output, "t5_relative_bias"), _laid_bounds(laid))
    return in_bounds(as_tensor(output, "t5_relative_bucket"), _laid_bounds(laid))


def _same(output, own, values) -> bool:
    return torch.equal(as_tensor(output, "t5").double(), as_tensor(own, "t5").double())


@graded(points=1, family="inputs", visibility=VISIBLE)
@for_each_layout(
    (bucket_cases(), BucketCase.tensor_specs, ("relative_position",)),
    (relative_bias_cases(), RelativeBiasCase.tensor_specs, ("table",)),
)
def test_inputs_untouched(student, laid):
    """t5_relative_bucket and t5_relative_bias leave their tensors unchanged and accept them in any layout."""
    relative = torch.arange(-300, 300).reshape(4, 150)
    for kwargs in ({}, {"bidirectional": False}):
        result = answer(student, ("untouched", len(kwargs)), "t5_relative_bucket", relative, **kwargs)
        expect_untouched(result.inputs_after, (relative,), "t5_relative_bucket", ("relative_position",))
    for dtype in (torch.float32, torch.float64, torch.float16):
        table = randn(32, 4, seed=66, dtype=dtype)
        expect_untouched(
            answer(student, ("untouched table", dtype), "t5_relative_bias", table, 5, 7).inputs_after,
            (table,),
            "t5_relative_bias",
            ("table",),
        )
    for buckets in test_log_spaced_buckets_beyond_the_exact_half.prepare():  # the drawn value tests' calls, shared
        relative = _drawn_bounds(buckets)[0]
        expect_inputs_left(
            student,
            ("buckets", buckets),
            "t5_relative_bucket",
            (relative,),
            buckets.kwargs(),
            {"relative_position": relative},
        )
    for bias in test_bias_for_decoders_other_sizes_and_float64_tables.prepare():
        table = bias.table()
        expect_inputs_left(
            student,
            ("bias", bias),
            "t5_relative_bias",
            (table, bias.queries, bias.keys),
            bias.kwargs(),
            {"table": table},
        )
    case = laid.case
    if isinstance(case, RelativeBiasCase):
        op, call = "t5_relative_bias", lambda sent: ((sent[0], case.queries, case.keys), case.kwargs())
    else:
        op, call = "t5_relative_bucket", lambda sent: ((sent[0],), case.kwargs())
    expect_layouts_accepted(
        student,
        laid,
        op,
        lambda: _laid_tensors(laid),
        call,
        lambda output, values: _laid_expectation(laid, output, values),
        _same,
        VIEWS,
    )


@graded(points=2, family="speed", visibility=VISIBLE)
def test_speed(student):
    """t5_relative_bucket and t5_relative_bias are vectorised: not far slower than the reference."""
    relative = torch.arange(-20_000, 20_000)
    expect_fast(student, "t5_relative_bucket", lambda: reference_t5_relative_bucket(relative), relative)
    table = randn(32, 8, seed=65)
    expect_fast(student, "t5_relative_bias", lambda: reference_t5_relative_bias(table, 96, 96), table, 96, 96)
