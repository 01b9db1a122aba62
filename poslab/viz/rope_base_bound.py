"""Men et al.'s lower bound on RoPE's base, searched on a grid of bases, with the stricter value beside it.

    B(m) = sum_i cos(m theta_i),  theta_i = b^(-2i/D)          (Men et al. 2024, arXiv 2405.14591)
    a base b "passes" for a context length L  <=>  B(m) >= 0 for every m = 0 .. L

The pass/fail pattern is not monotone in b: close to the bound, thin windows of passing bases alternate
with failing ones. So two numbers answer "which base does L need?":

* the **first crossing**: the smallest grid base that passes, scanning up from a small base. This is
  the bound Men et al. tabulate and plot (their Fig. 1);
* the **every-base-above** value: the smallest grid base from which every grid base passes, up to
  ``CHECK_SPAN`` times the first crossing. It is several times larger.

Both depend on the grid: a passing window narrower than one step can fall between two grid bases.
The grid is b = 10^(k / STEPS_PER_DECADE), the same for every L.

Speed: B(m) for m = R q + r is Re sum_i e^{i R q theta_i} e^{i r theta_i}, that is
cos(Rq theta) cos(r theta)^T - sin(Rq theta) sin(r theta)^T: two small matrix products per base,
instead of (L + 1) D/2 cosines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.viz.common import axis_title, y_axis_title

STEPS_PER_DECADE = 500  # grid bases 10^(k/500): neighbours 0.46% apart
CHECK_SPAN = 8.0  # "every base above" is checked up to this many times the first crossing
SCAN_FROM = 100.0  # the first crossing is searched upwards from here
BATCH = 64  # bases per matrix product


def _theta(bases: torch.Tensor, head_dim: int) -> torch.Tensor:
    return bases.double()[:, None] ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (N, D/2)


def _margin_minimum(theta: torch.Tensor, first: int, last: int) -> torch.Tensor:
    """min over m = first .. last of B(m), one value per row of theta: float64 ``[N]``.

    m = first + R q + r with R about sqrt(last - first), so that the trigonometry costs (Q + R) D/2
    per base and the rest is two batched matrix products.
    """
    count = last - first + 1
    remainder = 1 << max(0, math.ceil(math.log2(math.sqrt(count))))
    quotients = first + torch.arange(math.ceil(count / remainder), dtype=torch.float64) * remainder
    remainders = torch.arange(remainder, dtype=torch.float64)
    outer = quotients[None, :, None] * theta[:, None, :]  # (N, Q, D/2)
    inner = remainders[None, :, None] * theta[:, None, :]  # (N, R, D/2)
    # cos((a + r) theta) = cos(a theta) cos(r theta) - sin(a theta) sin(r theta), summed over the pairs i
    margin = outer.cos() @ inner.cos().transpose(1, 2) - outer.sin() @ inner.sin().transpose(1, 2)  # (N, Q, R)
    margin = margin.reshape(len(theta), -1)[:, :count]  # q-major: column j is m = first + j
    return margin.min(-1).values


def worst_margin(bases: torch.Tensor, head_dim: int, context_len: int) -> torch.Tensor:
    """min over m = 0 .. L of B(m) per base (batched); below 0 the base fails for L."""
    return torch.cat(
        [
            _margin_minimum(_theta(bases[start : start + BATCH], head_dim), 0, context_len)
            for start in range(0, len(bases), BATCH)
        ]
    )


def _passes_early_exit(bases: torch.Tensor, head_dim: int, context_len: int) -> torch.Tensor:
    """Bool ``[N]``: B(m) >= 0 up to L, checking short distances first (low bases fail early)."""
    theta = _theta(bases, head_dim)
    alive = torch.ones(len(bases), dtype=torch.bool)
    start, stop = 0, min(context_len, 63)
    while start <= context_len and alive.any():
        index = alive.nonzero().squeeze(1)
        alive[index] = _margin_minimum(theta[index], start, stop) >= 0
        start, stop = stop + 1, min(context_len, 4 * stop + 3)
    return alive


def base_grid(low: float, high: float) -> torch.Tensor:
    """Grid bases 10^(k/STEPS_PER_DECADE) from the first >= low to the last <= high, float64."""
    first = math.ceil(STEPS_PER_DECADE * math.log10(low) - 1e-9)
    last = math.floor(STEPS_PER_DECADE * math.log10(high) + 1e-9)
    return 10.0 ** (torch.arange(first, last + 1, dtype=torch.float64) / STEPS_PER_DECADE)


def first_crossing(context_len: int, head_dim: int = 128) -> float:
    """The smallest grid base with B(m) >= 0 for all m <= L, scanning up from ``SCAN_FROM``."""
    bases = base_grid(SCAN_FROM, 1e12)
    for start in range(0, len(bases), BATCH):  # in ascending batches: stop at the first that holds a pass
        batch = bases[start : start + BATCH]
        passing = batch[_passes_early_exit(batch, head_dim, context_len)]
        if len(passing):
            return float(passing[0])
    raise ValueError(f"no base up to 1e12 keeps B(m) >= 0 up to {context_len}")


@dataclass(frozen=True)
class BaseBound:
    context_len: int
    head_dim: int
    first_crossing: float  # Men et al.'s bound: the smallest passing grid base
    every_base_above: float  # from here up to checked_up_to, every grid base passes
    checked_up_to: float
    failing_above_first: int  # grid bases above the first crossing that still fail
    sweep: pd.DataFrame  # base, worst B(m) up to L, passes: from first crossing / 1.5 to checked_up_to
    chart: alt.LayerChart


def base_bound(context_len: int, head_dim: int = 128) -> BaseBound:
    first = first_crossing(context_len, head_dim)
    bases = base_grid(first / 1.5, first * CHECK_SPAN)
    worst = worst_margin(bases, head_dim, context_len)
    passes = worst >= 0
    above = bases >= first
    failing = bases[above & ~passes]
    every_above = float(bases[bases > failing[-1]][0]) if len(failing) else first
    sweep = pd.DataFrame(
        {
            "base": bases.numpy(),
            "worst B(m) up to L": worst.numpy(),
            "passes": ["yes" if flag else "no" for flag in passes.tolist()],
        }
    )
    chart = bound_chart(context_len, head_dim, first, every_above, len(failing), sweep)
    return BaseBound(context_len, head_dim, first, every_above, float(bases[-1]), len(failing), sweep, chart)


def bound_chart(
    context_len: int, head_dim: int, first: float, every_above: float, failing: int, sweep: pd.DataFrame
) -> alt.LayerChart:
    y_title = y_axis_title("min of B(m) over m <= L", "unitless")
    points = (
        alt.Chart(sweep)
        .mark_point(filled=True, size=14)
        .encode(
            x=alt.X(
                "base:Q",
                title=axis_title("RoPE base b", "log scale"),
                scale=alt.Scale(
                    type="log", domain=[float(sweep["base"].min()), float(sweep["base"].max())], nice=False
                ),
            ),
            y=alt.Y("worst B(m) up to L:Q", title=y_title),
            color=alt.Color(
                "passes:N",
                title="B(m) >= 0 up to L?",
                scale=alt.Scale(domain=["yes", "no"], range=["#4c78a8", "#f58518"]),
            ),
            shape=alt.Shape("passes:N", title="B(m) >= 0 up to L?", scale=alt.Scale(domain=["yes", "no"])),
            tooltip=[
                alt.Tooltip("base:Q", format=",.0f"),
                alt.Tooltip("worst B(m) up to L:Q", format=".3f"),
                alt.Tooltip("passes:N"),
            ],
        )
    )
    marks = pd.DataFrame(
        {"base": [first, every_above], "line": ["first crossing (Men et al.'s bound)", "every base above passes"]}
    )
    rules = (
        alt.Chart(marks)
        .mark_rule(strokeDash=[4, 4], color="black")
        .encode(
            x=alt.X("base:Q", title=axis_title("RoPE base b", "log scale")),
            tooltip=[alt.Tooltip("line:N"), alt.Tooltip("base:Q", format=",.0f")],
        )
    )
    zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(color="gray").encode(y=alt.Y("zero:Q", title=y_title))
    return alt.layer(points, zero, rules).properties(
        title=f"Which bases keep B(m) >= 0 up to L = {context_len:,} (D = {head_dim})",
        description=(
            f"Scatter of the smallest B(m) over distances 0 to {context_len} for {len(sweep)} bases "
            f"from {sweep['base'].iloc[0]:,.0f} to {sweep['base'].iloc[-1]:,.0f}, coloured by pass or "
            f"fail. The first passing base is {first:,.0f}; {failing} bases "
            f"above it still fail, the last below {every_above:,.0f}."
        ),
    )
