"""The t5 exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.suite.domains import DTYPES, SEEDS, seeded, shape_text, sizes
from grader.suite.inputs import generator


@dataclass(frozen=True)
class BucketCase:
    """Relative positions of a given shape (0-d to 3-d): the edges of every range, then random ones."""

    bidirectional: bool
    num_buckets: int
    max_distance: int
    shape: tuple[int, ...]
    reach: int  # random positions within +-reach
    seed: int
    defaults: bool = False  # called without bidirectional, num_buckets and max_distance (True, 32, 128)

    @property
    def per_direction(self) -> int:
        return self.num_buckets // 2 if self.bidirectional else self.num_buckets

    @property
    def exact(self) -> int:
        return self.per_direction // 2

    def bucket_edges(self) -> set[int]:
        """The distances where a log-spaced bucket starts (E (M/E)^(k / (N - E)), rounded both ways)."""
        span, ratio = self.per_direction - self.exact, self.max_distance / self.exact
        starts = [self.exact * ratio ** (k / span) for k in range(1, span)] if span > 0 else []
        return {int(math.floor(start)) for start in starts} | {int(math.ceil(start)) for start in starts}

    def relative(self) -> torch.Tensor:
        edges = sorted(
            {
                0,
                1,
                self.exact - 1,
                self.exact,
                self.exact + 1,
                self.max_distance - 1,
                self.max_distance,
                self.max_distance + 1,
                2 * self.max_distance,
                1_000_000,
            }
            | self.bucket_edges()
        )
        values = torch.tensor([sign * edge for edge in edges for sign in (-1, 1)])
        size = torch.Size(self.shape).numel()
        spread = torch.randint(-self.reach, self.reach + 1, (max(size, len(values)),), generator=generator(self.seed))
        spread[: len(values)] = values
        return spread[torch.randperm(len(spread), generator=generator(self.seed + 1))[:size]].reshape(self.shape)

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of relative_position (``layouts.laid_cases``)."""
        return [("relative_position", self.shape, tuple(range(len(self.shape))))]

    def kwargs(self) -> dict:
        if self.defaults:
            return {}
        return {"bidirectional": self.bidirectional, "num_buckets": self.num_buckets, "max_distance": self.max_distance}

    def describe(self) -> str:
        settings = (
            "the default arguments"
            if self.defaults
            else f"bidirectional={self.bidirectional}, num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        )
        return f"relative_position {shape_text(self.shape)}, {settings}"


# The corners of the bucket formula: one exact bucket (E = 1) with one or two log-spaced ones,
# max_distance just past E, an odd num_buckets (N // 2), N not a power of two.
CORNER_CONFIGS = (
    (False, 2, 2),
    (False, 3, 2),
    (False, 3, 4),
    (True, 4, 2),
    (True, 6, 3),
    (True, 7, 4),
    (True, 33, 9),
    (True, 24, 100),
    (False, 20, 11),
)


def bucket_configs() -> st.SearchStrategy:
    """Every (bidirectional, num_buckets, max_distance) the bucket formula defines: E >= 1, max_distance > E."""
    return st.one_of(st.sampled_from(CORNER_CONFIGS), _any_bucket_config())


@st.composite
def _any_bucket_config(draw) -> tuple[bool, int, int]:
    bidirectional = draw(st.booleans())
    smallest = 4 if bidirectional else 2  # one exact bucket
    num_buckets = draw(sizes(smallest, 160, smallest + 2, 32, 24, 33))  # smallest + 2: E = 1 with 2 log buckets
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    return bidirectional, num_buckets, draw(sizes(exact + 1, 40 * exact + 200, 128, 2 * exact + 1))


@st.composite
def bucket_cases(draw) -> BucketCase:
    defaults = draw(st.integers(0, 3)) == 3  # about one case in four calls with the default arguments
    bidirectional, num_buckets, max_distance = (True, 32, 128) if defaults else draw(bucket_configs())
    # Enough entries for every edge (600 hold them all), and now and then a 0-d or one-entry tensor.
    shape = draw(st.sampled_from([(600,), (7, 90), (3, 4, 50), (600,), (), (1,)]))
    reach = draw(st.sampled_from([4 * max_distance, 60, 1_000_000]))
    return BucketCase(bidirectional, num_buckets, max_distance, shape, reach, draw(SEEDS), defaults)


@dataclass(frozen=True)
class RelativeBiasCase:
    num_buckets: int
    n_heads: int
    queries: int
    keys: int
    bidirectional: bool | None  # None: neither bidirectional nor max_distance passed (the defaults)
    max_distance: int
    dtype: str
    seed: int

    def table(self) -> torch.Tensor:
        return seeded((self.num_buckets, self.n_heads), self.seed, DTYPES[self.dtype])

    def tensor_specs(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(name, shape, axes a caller may broadcast) of the table (``layouts.laid_cases``)."""
        return [("table", (self.num_buckets, self.n_heads), (0, 1))]

    def kwargs(self) -> dict:
        return (
            {}
            if self.bidirectional is None
            else {"bidirectional": self.bidirectional, "max_distance": self.max_distance}
        )

    @property
    def used(self) -> tuple[bool, int]:
        return (True, 128) if self.bidirectional is None else (self.bidirectional, self.max_distance)

    def describe(self) -> str:
        text = (
            f"a {self.dtype} table {shape_text([self.num_buckets, self.n_heads])}, query_len={self.queries}, "
            f"key_len={self.keys}"
        )
        return text + (
            ""
            if self.bidirectional is None
            else f", bidirectional={self.bidirectional}, max_distance={self.max_distance}"
        )


@st.composite
def relative_bias_cases(draw) -> RelativeBiasCase:
    defaults = draw(st.booleans())
    if defaults:
        bidirectional, num_buckets, max_distance = None, draw(st.sampled_from([32, 8, 64])), 128
    else:
        bidirectional, num_buckets, max_distance = draw(bucket_configs())
    keys = draw(sizes(1, 160) if bidirectional is not None else st.sampled_from([160, 129]))  # the defaults reach M
    return RelativeBiasCase(
        num_buckets,
        draw(sizes(1, 4)),
        draw(sizes(1, 40) if bidirectional is not None else st.sampled_from([160, 129, 7])),  # keys M before it
        keys,
        bidirectional,
        max_distance,
        draw(st.sampled_from(["float32", "float64", "float16"])),
        draw(SEEDS),
    )


def decoder_bias_edges() -> st.SearchStrategy:
    """for_each's edges: a decoder's bias (bidirectional=False) with two or more queries and keys, in every run:
    a draw of one query and one key reads bucket 0 whatever the direction."""
    return st.tuples(
        relative_bias_cases().filter(lambda case: case.bidirectional is False and min(case.queries, case.keys) >= 2)
    )
