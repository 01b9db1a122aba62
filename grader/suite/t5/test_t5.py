"""Hidden tests of ``t5_relative_bucket`` and ``t5_relative_bias``: 20 points.

T5's buckets (Raffel et al. 2020; Mesh TensorFlow's ``_relative_position_bucket``, copied by Hugging
Face) take r = key position - query position. Each direction has N buckets (num_buckets / 2 when
bidirectional, later keys adding N; all of them for earlier keys when causal, later keys going to 0):
half exact, the rest log-spaced up to max_distance, then the last one. Mesh TensorFlow computes the
logarithm in float32; where it lands within the float32 logarithm's error of a bucket edge
(``tolerances.t5_edge``) the oracle accepts either side, so float32 and float64 (and ln(n) - ln(E)
for ln(n / E)) all pass. Buckets are compared exactly, and so is the bias, which only gathers
entries of the table. The hidden tests draw every (bidirectional, num_buckets, max_distance) the
bucket formula defines, relative positions of any shape, and tables of any size and float dtype.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from hypothesis import strategies as st

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, expect_inputs_left, for_each
from grader.suite.expect import as_tensor, dtype_name, expect, expect_dtype, expect_shape, expect_untouched
from grader.suite.inputs import randn
from grader.suite.layouts import expect_layouts_accepted, laid_arguments, laid_cases
from grader.suite.t5.domains import BucketCase, RelativeBiasCase, bucket_cases, bucket_configs, relative_bias_cases
from grader.suite.t5.mistakes import bucket_mistakes, diagnose_buckets, in_bounds
from grader.suite.t5.oracle import oracle_t5_bucket_bounds
from grader.suite.timing import expect_fast
from poslab.encodings import t5_relative_bias as reference_t5_relative_bias
from poslab.encodings import t5_relative_bucket as reference_t5_relative_bucket

BUCKET_RULE = (
    "t5_relative_bucket takes r = key position - query position. Each direction has N buckets "
    "(num_buckets // 2 when bidirectional, where r > 0 adds N; num_buckets when causal, where every "
    "r >= 0 is bucket 0); a distance n < N // 2 gets bucket n, a larger one "
    "N//2 + floor(ln(n / (N//2)) / ln(max_distance / (N//2)) * (N - N//2)), at most N - 1."
)


def _buckets(student, relative: torch.Tensor, strict: bool = False, key: tuple | None = None, **kwargs) -> torch.Tensor:
    result = (
        student.call("t5_relative_bucket", relative, **kwargs)
        if key is None
        else answer(student, key, "t5_relative_bucket", relative, **kwargs)
    )
    out = as_tensor(result.output, "t5_relative_bucket", strict)
    expect_shape(out, relative.shape, "t5_relative_bucket(relative_position)")
    return out


def _bias(
    student, table: torch.Tensor, query_len: int, key_len: int, strict: bool = False, key: tuple | None = None, **kwargs
):
    result = (
        student.call("t5_relative_bias", table, query_len, key_len, **kwargs)
        if key is None
        else answer(student, key, "t5_relative_bias", table, query_len, key_len, **kwargs)
    )
    bias = as_tensor(result.output, "t5_relative_bias", strict)
    expect_shape(bias, (table.shape[1], query_len, key_len), "t5_relative_bias(table, query_len, key_len)")
    return bias


def _expect_probes(student, probes: dict[int, int], what: str, **kwargs) -> None:
    """Values worked out by hand from the formula: {relative position: bucket}."""
    relative = torch.tensor(list(probes))
    buckets = _buckets(student, relative, **kwargs)
    expect(
        buckets.double().tolist() == [float(b) for b in probes.values()],
        lambda: (
            f"{what} {BUCKET_RULE}"
            + diagnose_buckets(
                buckets,
                bucket_mistakes(
                    relative,
                    kwargs.get("bidirectional", True),
                    kwargs.get("num_buckets", 32),
                    kwargs.get("max_distance", 128),
                ),
            )
        ),
    )


@graded(points=2, family="dtype", visibility=VISIBLE)
def test_buckets_are_a_long_tensor_of_the_same_shape(student):
    """t5_relative_bucket returns a LongTensor (torch.int64) with the shape of relative_position."""
    for shape in ((3, 4), (2, 3, 5)):
        relative = torch.arange(-30, -30 + torch.Size(shape).numel()).reshape(shape)
        buckets = _buckets(student, relative, strict=True)  # the type test of t5_relative_bucket
        expect(
            not dtype_name(buckets).startswith(("float", "bfloat")),
            f"t5_relative_bucket returns {dtype_name(buckets)} buckets: they index the table, so they must be "
            "torch.int64. torch.floor (or math.floor on a float tensor) keeps the float dtype; convert with "
            ".long() after it.",
        )
        expect_dtype(buckets, torch.int64, "t5_relative_bucket")


@graded(points=2, family="values", visibility=VISIBLE)
def test_near_keys_get_a_bucket_each(student):
    """The first half of each direction's buckets are exact: distance n < N // 2 gets bucket n."""
    # Bidirectional, 32 buckets: 16 per direction, 8 exact; a later key adds 16.
    _expect_probes(
        student,
        {0: 0, -1: 1, -4: 4, -7: 7, 1: 17, 4: 20, 7: 23},
        "Near keys must get a bucket each (32 buckets, bidirectional).",
    )
    # Causal, 32 buckets: all 32 for earlier keys, 16 exact.
    _expect_probes(
        student, {-1: 1, -9: 9, -15: 15}, "Near earlier keys must get a bucket each (causal).", bidirectional=False
    )
    # Bidirectional, 8 buckets, max distance 20: 4 per direction, 2 exact.
    _expect_probes(
        student,
        {-1: 1, 1: 5, 0: 0},
        "Near keys must get a bucket each with other sizes too.",
        num_buckets=8,
        max_distance=20,
    )


@lru_cache(maxsize=32)
def _drawn_bounds(case) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """A drawn case's positions and accepted buckets: the same for every submission graded in this process."""
    relative = case.relative()
    return relative, oracle_t5_bucket_bounds(relative, case.bidirectional, case.num_buckets, case.max_distance)


@graded(points=3, family="values", visibility=HIDDEN)
@for_each(bucket_cases(), count=16)
def test_log_spaced_buckets_beyond_the_exact_half(student, case):
    """Every bucket is right for any sizes the formula defines, both directions, positions of any shape."""
    relative, bounds = _drawn_bounds(case)
    buckets = _buckets(student, relative, key=("buckets", case), **case.kwargs())
    expect(
        in_bounds(buckets, bounds),
        lambda: (
            "Some buckets are wrong for other numbers of buckets, maximum distances, "
            f"shapes or the default arguments. {BUCKET_RULE}"
            + diagnose_buckets(
                buckets, bucket_mistakes(relative, case.bidirectional, case.num_buckets, case.max_distance)
            )
        ),
    )


@graded(points=2, family="range", visibility=VISIBLE)
def test_the_last_bucket_from_max_distance_on(student):
    """Every distance from max_distance on, however far, shares the last bucket of its direction."""
    for num_buckets, max_distance in ((32, 128), (16, 64), (8, 20)):
        far = torch.tensor([max_distance, max_distance + 1, 2 * max_distance, 10_000, 1_000_000])
        per_direction = num_buckets // 2
        last_before, last_after = torch.full_like(far, per_direction - 1), torch.full_like(far, 2 * per_direction - 1)
        for bidirectional, relative, last in (
            (True, torch.cat([-far, far]), torch.cat([last_before, last_after])),
            (False, -far, torch.full_like(far, num_buckets - 1)),
        ):
            buckets = _buckets(
                student, relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
            )
            if bool((buckets.double() == last.double()).all()):
                continue
            diagnosis = diagnose_buckets(buckets, bucket_mistakes(relative, bidirectional, num_buckets, max_distance))
            raise AssertionError(
                "Every key at max_distance or further from the query must share the last bucket of its direction "
                "(N - 1 before the query; 2N - 1 after it when bidirectional)."
                + (
                    diagnosis
                    or " Is the log-spaced bucket clamped to N - 1 (torch.clamp(..., max=N - 1) or torch.minimum)?"
                )
            )


@graded(points=2, family="direction", visibility=VISIBLE)
def test_later_keys_take_the_upper_half_when_bidirectional(student):
    """Bidirectional: a key after the query (r > 0) gets N plus the bucket of the same distance before it."""
    distance = torch.arange(1, 400)
    both = _buckets(student, torch.cat([-distance, distance])).double()
    before, after = both[: len(distance)], both[len(distance) :]
    expect(
        bool((before < 16).all()),
        lambda: (
            "With 32 buckets, bidirectional, keys before the query (r = key - query < 0) must use the lower 16 "
            "buckets; yours puts some of them in the upper half."
            + (diagnose_buckets(before, bucket_mistakes(-distance, True, 32, 128)) or " Is r read as query - key?")
        ),
    )
    expect(
        bool((after == before + 16).all()),
        "With 32 buckets, bidirectional, a key after the query (r > 0) must get 16 plus the bucket of the key "
        "the same distance before it: the sign of r takes half the buckets.",
    )


@graded(points=2, family="direction", visibility=VISIBLE)
def test_a_decoder_folds_later_keys_into_bucket_0(student):
    """Causal (bidirectional=False): every key after the query is bucket 0, and all num_buckets describe earlier keys."""
    distance = torch.arange(0, 500)
    both = _buckets(student, torch.cat([distance, -distance]), bidirectional=False)
    later, earlier = both[: len(distance)], both[len(distance) :]
    expect(
        bool((later.double() == 0).all()),
        lambda: (
            "With bidirectional=False every key after the query (r >= 0) must be in bucket 0: a decoder masks those "
            "keys anyway, so T5 folds them into one bucket."
            + diagnose_buckets(later, bucket_mistakes(distance, False, 32, 128))
        ),
    )
    expect(
        sorted(set(earlier.double().tolist())) == [float(b) for b in range(32)],
        lambda: (
            "With bidirectional=False, keys before the query must use all 32 buckets (16 exact, 16 log-spaced): "
            "there is no sign split in a decoder."
            + diagnose_buckets(earlier, bucket_mistakes(-distance, False, 32, 128))
        ),
    )


@graded(points=1, family="range", visibility=HIDDEN)
@for_each(bucket_configs(), count=6)
def test_buckets_never_decrease_with_distance(student, config):
    """Within a direction the bucket never decreases as the key moves away, and stays in 0 .. num_buckets - 1."""
    bidirectional, num_buckets, max_distance = config
    distance = torch.arange(0, 3000)
    relative = torch.cat([-distance, distance]) if bidirectional else -distance
    buckets = _buckets(
        student, relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    ).double()
    expect(
        bool(((buckets >= 0) & (buckets < num_buckets)).all()),
        "Every bucket must be in 0 .. num_buckets - 1, for any distance.",
    )
    for direction in buckets.split(len(distance)):
        expect(
            bool((direction[1:] >= direction[:-1]).all()),
            "The bucket must never decrease as a key moves further from the query in the same direction.",
        )


@lru_cache(maxsize=64)
def _bias_buckets(
    query_len: int, key_len: int, bidirectional: bool, num_buckets: int, max_distance: int, relative_sign: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The lowest and highest accepted bucket of every (i, j): the same for every submission."""
    relative = torch.arange(key_len)[None, :] - torch.arange(query_len)[:, None]
    return oracle_t5_bucket_bounds(relative_sign * relative, bidirectional, num_buckets, max_distance)


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
    if not _matches_bias(bias, _expected_bias(table, query_len, key_len, bidirectional, max_distance)):
        hint = ""
        if _matches_bias(bias, _expected_bias(table, query_len, key_len, bidirectional, max_distance, -1)):
            hint = " Your bias uses i - j (query - key); the spec's relative position is j - i (key - query)."
        raise AssertionError(
            "t5_relative_bias must be [n_heads, Tq, Tk] with bias[h, i, j] = table[t5_relative_bucket(j - i, "
            "bidirectional, table.shape[0], max_distance), h]: the number of buckets is the table's first axis." + hint
        )
    return bias


@graded(points=2, family="bias", visibility=VISIBLE)
def test_bias_reads_the_table_by_bucket(student):
    """t5_relative_bias(table, Tq, Tk) is [n_heads, Tq, Tk], the table's dtype, with bias[h, i, j] = table[bucket(j - i), h]."""
    table = randn(32, 4, seed=61)
    bias = _expect_bias(student, table, 6, 9, True, 128, strict=True)  # the type test of t5_relative_bias
    expect_dtype(bias, torch.float32, "t5_relative_bias")
    _expect_bias(student, randn(16, 3, seed=62), 9, 6, True, 128)  # the table's first axis is num_buckets


@graded(points=1, family="bias", visibility=HIDDEN)
@for_each(relative_bias_cases(), count=6)
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
@for_each(
    st.one_of(
        laid_cases(bucket_cases(), BucketCase.tensor_specs, ("relative_position",)),
        laid_cases(relative_bias_cases(), RelativeBiasCase.tensor_specs, ("table",)),
    ),
    count=3,
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
