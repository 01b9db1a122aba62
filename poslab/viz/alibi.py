"""The ALiBi lesson: slopes for any head count, the bias per head, and each head's window.

    score(i, j) = q_i . k_j / sqrt(D) - m_h (i - j)          (j <= i)

With equal content scores, key j gets weight proportional to exp(-m_h (i - j)): a key r times less
weighted than the current token sits at distance

    window_h(r) = ln(1 / r) / m_h        e.g. r = 1/100: ln(100) / m_h = 4.605 / m_h tokens.

Slopes (Press et al., 2022): for n a power of two, m_h = 2^(-8 (h+1) / n). Otherwise take the n' = c
slopes of the largest power of two c < n, then every other slope of 2c, the first n - c of them:
2^(-8 (2j+1) / (2c)) = 2^(-4 (2j+1) / c), j = 0 .. n - c - 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import torch

from poslab.encodings.alibi import alibi_bias, alibi_slopes
from poslab.encodings.attention import attention
from poslab.encodings.sinusoidal import sinusoidal_encoding
from poslab.viz.common import axis_title, heatmap, y_axis_title


def power_of_two_below(n_heads: int) -> int:
    """c = 2^floor(log2 n): the largest power of two not above n."""
    return 2 ** math.floor(math.log2(n_heads))


def slopes_frame(n_heads: int) -> pd.DataFrame:
    """``head, slope, log2 slope, set, rule``: which part of the rule produced each head's slope."""
    slopes = alibi_slopes(n_heads).double().numpy()
    c = power_of_two_below(n_heads)
    sets = [f"{c}-head set" if h < c else f"odd steps of the {2 * c}-head set" for h in range(n_heads)]
    rules = [f"2^(-8·{h + 1}/{c})" if h < c else f"2^(-4·{2 * (h - c) + 1}/{c})" for h in range(n_heads)]
    return pd.DataFrame(
        {"head": np.arange(n_heads), "slope": slopes, "log2 slope": np.log2(slopes), "set": sets, "rule": rules}
    )


def window_frame(n_heads: int, weight_ratio: float) -> pd.DataFrame:
    """``head, slope, window``: distance (tokens) where the bias reaches ln(weight_ratio)."""
    if not 0 < weight_ratio < 1:
        raise ValueError(f"the weight ratio must be between 0 and 1, got {weight_ratio}")
    frame = slopes_frame(n_heads)[["head", "slope"]]
    return frame.assign(window=np.log(1 / weight_ratio) / frame["slope"])


@dataclass(frozen=True)
class SlopesView:
    table: pd.DataFrame  # head, slope, log2 slope, set, rule, window
    chart: alt.LayerChart
    power_of_two: int  # c
    penalty: float  # ln(weight_ratio), the bias value at the window's edge
    rule: str  # one sentence: which rule made these slopes


def slopes_view(n_heads: int, weight_ratio: float) -> SlopesView:
    table = slopes_frame(n_heads).assign(window=window_frame(n_heads, weight_ratio)["window"])
    # The chart sits in a narrow column: a two-line title and a vertical legend keep every word in view.
    chart = (
        alt.Chart(table, title=alt.TitleParams(["Window per head:", f"distance to relative weight {weight_ratio:g}"]))
        .mark_bar()
        .encode(
            x=alt.X("head:O", title=axis_title("head h", "index")),
            y=alt.Y(
                "window:Q", title=y_axis_title("effective window", "tokens, log scale"), scale=alt.Scale(type="log")
            ),
            y2=alt.datum(1),  # a log axis has no 0: bars start at 1 token
            color=alt.Color(
                "set:N", title="slope from", legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)
            ),
            tooltip=[
                alt.Tooltip("head:O"),
                alt.Tooltip("slope:Q", format=".5f"),
                alt.Tooltip("log2 slope:Q", format=".2f"),
                alt.Tooltip("window:Q", title="window (tokens)", format=",.1f"),
                alt.Tooltip("set:N"),
                alt.Tooltip("rule:N"),
            ],
        )
        .properties(
            description=(
                f"Bar chart, log scale: the effective window of each of the {n_heads} ALiBi heads, the distance in tokens "
                f"at which a key's weight falls to {weight_ratio:g} of the current token's. Windows grow from "
                f"{table['window'].min():,.1f} tokens (head 0) to {table['window'].max():,.1f} tokens."
            )
        )
    )
    return SlopesView(table, chart, power_of_two_below(n_heads), math.log(weight_ratio), slope_rule(n_heads))


def slope_rule(n_heads: int) -> str:
    """The slope rule as it applies to ``n_heads``, in words."""
    c = power_of_two_below(n_heads)
    if c == n_heads:
        if n_heads == 1:
            return "1 is a power of two: the one head gets the slope 2^(-8), the last of the rule's sequence."
        return (
            f"{n_heads} is a power of two: head h gets 2^(-8(h+1)/{n_heads}), a geometric sequence "
            f"from 2^(-{8 / n_heads:g}) down to 2^(-8)."
        )
    return (
        f"{n_heads} is not a power of two, so the rule starts from c = {c}. {_heads(0, c - 1)}: the "
        f"{c}-head slopes 2^(-8(h+1)/{c}). {_heads(c, n_heads - 1)}: every other slope of the "
        f"{2 * c}-head set, the first {n_heads - c} of them, which fall between the first ones."
    )


def _heads(first: int, last: int) -> str:
    return f"Head {first}" if first == last else f"Heads {first}-{last}"


def bias_chart(n_heads: int, head: int, seq_len: int) -> alt.Chart:
    """Heatmap of one head's ``[T, T]`` bias; masked (future) keys draw blank."""
    if not 0 <= head < n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1}, got {head}")
    bias = alibi_bias(n_heads, seq_len)[head]  # (T, T)
    slope = float(alibi_slopes(n_heads)[head])
    return heatmap(
        bias,
        title=f"Head {head} of {n_heads}: bias -m (i - j), m = {slope:.4g}",
        x_title=axis_title("key j", "position"),
        y_title=axis_title("query i", "position"),
        value_title="bias (logit units)",
        diverging=False,
        value_format=".3f",
        description=(
            f"Heatmap of ALiBi head {head}'s bias over {seq_len} queries (rows) and keys "
            f"(columns): 0 on the diagonal, falling by {slope:.4g} per token of distance to "
            f"{-slope * (seq_len - 1):.3f} at the far corner; future keys (above the "
            f"diagonal) are masked and blank."
        ),
    )


SMALLEST_WEIGHT = 1e-6  # the recency chart stops a head's line below this relative weight


def recency_frame(n_heads: int, max_distance: int) -> pd.DataFrame:
    """``head, distance, weight``: exp(-m_h d) relative to distance 0, for equal content scores,
    down to ``SMALLEST_WEIGHT``."""
    slopes = alibi_slopes(n_heads).double()  # (H,)
    distance = torch.arange(max_distance + 1, dtype=torch.float64)
    weights = torch.exp(-slopes[:, None] * distance[None, :])  # (H, R)
    frame = pd.DataFrame(
        {
            "head": np.repeat(np.arange(n_heads), len(distance)),
            "distance": np.tile(distance.numpy(), n_heads),
            "weight": weights.flatten().numpy(),
        }
    )
    return frame[frame["weight"] >= SMALLEST_WEIGHT].reset_index(drop=True)


def line_end_labels(frame: pd.DataFrame, max_distance: int) -> pd.DataFrame:
    """``head, distance, weight, name`` at each line's last point; of the lines that stop on the floor
    (weight below SMALLEST_WEIGHT next), only those far enough apart to be read."""
    ends = frame.loc[frame.groupby("head")["distance"].idxmax()].assign(name=lambda f: "head " + f["head"].astype(str))
    on_floor = ends[ends["distance"] < max_distance].sort_values("distance")
    kept, last = [], -math.inf
    for index, distance in on_floor["distance"].items():
        if distance - last >= max_distance / 10:
            kept.append(index)
            last = distance
    return pd.concat([ends[ends["distance"] >= max_distance], on_floor.loc[kept]]).sort_values("head")


@dataclass(frozen=True)
class ShiftedInputs:
    alibi_difference: float  # max |output change| when the whole sequence moves to later positions
    sinusoidal_difference: float  # the same, with a sinusoidal table added to the embeddings
    shift: int


def shifted_inputs(n_heads: int, seq_len: int, shift: int, d_model: int = 32, seed: int = 0) -> ShiftedInputs:
    """Same tokens placed at 0..T-1 and at s..s+T-1: ALiBi sees only i - j, an added table sees p."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(1, seq_len, d_model, generator=generator, dtype=torch.float64)  # (1, T, D), Q = K = V = x
    slopes = alibi_slopes(n_heads).double()[:, None, None]  # (H, 1, 1)

    def alibi_output(start: int) -> torch.Tensor:
        positions = torch.arange(start, start + seq_len, dtype=torch.float64)
        offset = positions[None, :] - positions[:, None]  # (T, T): j - i
        bias = (slopes * offset).masked_fill(offset > 0, float("-inf"))  # (H, T, T)
        heads = x.expand(n_heads, -1, -1)  # (H, T, D): every head reads the same tokens
        return attention(heads, heads, heads, bias)[0]  # (H, T, D)

    def sinusoidal_output(start: int) -> torch.Tensor:
        table = sinusoidal_encoding(start + seq_len, d_model).double()[start:]  # (T, D), broadcast over heads
        mask = torch.full((seq_len, seq_len), float("-inf"), dtype=torch.float64).triu(1)
        return attention(x + table, x + table, x + table, mask)[0]

    return ShiftedInputs(
        float((alibi_output(shift) - alibi_output(0)).abs().max()),
        float((sinusoidal_output(shift) - sinusoidal_output(0)).abs().max()),
        shift,
    )


def recency_chart(n_heads: int, max_distance: int) -> alt.LayerChart:
    frame = recency_frame(n_heads, max_distance)
    x = alt.X("distance:Q", title=axis_title("distance i - j", "tokens"))
    y = alt.Y("weight:Q", title=axis_title("relative weight exp(-m d)", "log scale"), scale=alt.Scale(type="log"))
    lines = (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=x,
            y=y,
            # viridis: ordered like the heads, and far apart from the first to the last (the default blues
            # make 12 heads near-identical)
            color=alt.Color(
                "head:O", title="head", scale=alt.Scale(scheme="viridis"), legend=alt.Legend(orient="bottom", columns=8)
            ),
            tooltip=[alt.Tooltip("head:O"), alt.Tooltip("distance:Q"), alt.Tooltip("weight:Q", format=".2e")],
        )
    )
    # Line ends are labelled with their head, so the legend's shades are not the only key.
    labels = (
        alt.Chart(line_end_labels(frame, max_distance))
        .mark_text(align="left", dx=3, fontSize=10)
        .encode(x=x, y=y, text="name:N")
    )
    title = alt.TitleParams(["Equal content: weight of a key d tokens back,", "relative to the current token"])
    # The whole chart's height: Streamlit fits the legend below into it as well.
    return alt.layer(lines, labels, title=title).properties(
        height=460,
        description=(
            f"Line chart, one line per head ({n_heads} heads): with equal content scores, the weight of a key d tokens "
            f"back relative to the current token, exp(-m d), on a log scale, for d from 0 to {max_distance}. Head 0 "
            f"falls fastest; each later head falls more slowly, and a line stops below {SMALLEST_WEIGHT:g}."
        ),
    )
