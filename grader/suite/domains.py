"""Each exercise's input domain as Hypothesis strategies of small, seeded cases (see ``draw``).

The domains follow the specs (``exercises/*.py``): any leading axes, the smallest and long
sequences, odd and even sizes, Tq != Tk, every dtype a spec names, magnitudes from 1e-3 to 1e3,
and every parameter value a spec permits (bases > 1, explicit integer positions of either integer
dtype, any head count, bidirectional and causal buckets with any sizes the bucket formula defines).
Sizes are bounded so that one case is one quick call across the sandbox.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.suite.inputs import randn

DTYPES = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64}
SEEDS = st.integers(0, 2**31 - 1)
MAGNITUDES = st.sampled_from([1.0, 1e-3, 1e3, 30.0, 0.05])
LEADING = st.lists(st.integers(1, 3), max_size=3).map(tuple)


def shape_text(shape) -> str:
    return "[" + ", ".join(str(size) for size in shape) + "]"


def seeded(shape, seed: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    return randn(*shape, seed=seed, dtype=dtype, scale=scale)


def sizes(low: int, high: int, *notable: int) -> st.SearchStrategy:
    """Any size in [low, high], with the edges (and ``notable`` ones) as likely as all the rest."""
    return st.one_of(st.sampled_from(sorted({low, low + 1, high, *notable})), st.integers(low, high))


def bases(default_too: bool = True) -> st.SearchStrategy:
    """None (the default), notable ones (close to 1 too), and any base > 1 spread over [1.1, 1e6] on a log scale."""
    spread = st.floats(0.04, 6.0).map(lambda exponent: float(f"{10**exponent:.4g}"))
    notable = st.sampled_from([10000.0, 500000.0, 100.0, 2.0, 1.5])
    return st.one_of(st.none(), notable, spread) if default_too else st.one_of(notable, spread)


# ---- attention
