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

from grader.suite import HIDDEN, VISIBLE, graded
from grader.suite.draw import answer, for_each
from grader.suite.expect import as_tensor, dtype_name, expect, expect_dtype, expect_shape
from grader.suite.t5.domains import bucket_cases, bucket_configs
from grader.suite.t5.mistakes import bucket_mistakes, diagnose_buckets, in_bounds
from grader.suite.t5.oracle import oracle_t5_bucket_bounds

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
    # The last two: max_distance just past the exact buckets (E + 1), where bucket(max_distance - 1) < N - 1.
    for num_buckets, max_distance, directions in (
        (32, 128, (True, False)),
        (16, 64, (True, False)),
        (8, 20, (True, False)),
        (32, 9, (True,)),
        (32, 17, (False,)),
    ):
        far = torch.tensor([max_distance, max_distance + 1, 2 * max_distance, 10_000, 1_000_000])
        per_direction = num_buckets // 2
        last_before, last_after = torch.full_like(far, per_direction - 1), torch.full_like(far, 2 * per_direction - 1)
        for bidirectional, relative, last in (
            (True, torch.cat([-far, far]), torch.cat([last_before, last_after])),
            (False, -far, torch.full_like(far, num_buckets - 1)),
        ):
            if bidirectional not in directions:
                continue
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
    """Bidirectional: a key after the query (r > 0) gets N plus the bucket of the same distance before it
    (N = num_buckets // 2, an odd count too)."""
    distance = torch.arange(1, 400)
    for num_buckets in (32, 31):
        half = num_buckets // 2
        both = _buckets(student, torch.cat([-distance, distance]), num_buckets=num_buckets).double()
        before, after = both[: len(distance)], both[len(distance) :]
        if not bool((before < half).all()):
            raise AssertionError(
                f"With {num_buckets} buckets, bidirectional, keys before the query (r = key - query < 0) must use "
                f"the lower {half} buckets; yours puts some of them in the upper half."
                + (
                    diagnose_buckets(before, bucket_mistakes(-distance, True, num_buckets, 128))
                    or " Is r read as query - key?"
                )
            )
        expect(
            bool((after == before + half).all()),
            f"With {num_buckets} buckets, bidirectional, a key after the query (r > 0) must get N = "
            f"num_buckets // 2 = {half} plus the bucket of the key the same distance before it.",
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
