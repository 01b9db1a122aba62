"""The alibi exercise's inputs: the cases its hidden tests draw."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

from grader.suite.domains import sizes

MAX_BIAS_ENTRIES = 1 << 15


@dataclass(frozen=True)
class AlibiCase:
    n_heads: int
    seq_len: int

    def describe(self) -> str:
        return f"n_heads={self.n_heads}, seq_len={self.seq_len}"


def head_counts() -> st.SearchStrategy:
    """1 to 64 heads, with the powers of two as likely as the rest."""
    return st.one_of(st.sampled_from([1, 2, 4, 8, 16, 32, 64]), st.integers(1, 64))


@st.composite
def alibi_cases(draw) -> AlibiCase:
    n_heads = draw(head_counts())
    return AlibiCase(n_heads, draw(sizes(1, max(1, min(200, math.isqrt(MAX_BIAS_ENTRIES // n_heads))))))


def past_bfloat16_lengths() -> st.SearchStrategy:
    """for_each's edges: one head at 260 positions, past the 256 integers bfloat16 holds exactly (distances
    built in bfloat16 round there, and the drawn lengths stop at 200)."""
    return st.tuples(st.just(AlibiCase(1, 260)))
