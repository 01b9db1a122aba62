"""The precision lesson: positions and RoPE angles in float32, float16 and bfloat16, and the scores they move.

A float with p significant bits (float16: 11, bfloat16: 8, float32: 24) holds every integer up to 2^p;
from 2^k on (k >= p) its spacing is 2^(k-p+1), so rounding moves a position by up to 2^(k-p). Every
number here is computed by casting the integers themselves: ``position_errors`` takes every integer up to
``MAX_POSITION`` through each dtype and keeps the largest error per power-of-two segment.

The score demo puts a query at position p and a key d positions earlier and computes their RoPE score
from positions stored in each dtype (angles then computed in float64), or, for float32, from angles
p * theta computed in float32. The exact score depends on d only; a rounded position changes the offset
the score sees (transformers PR #29285 fixed RoPE angles computed from bfloat16 positions).
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz.common import axis_title, y_axis_title

MAX_POSITION = 1 << 20  # 1,048,576: a million-token context
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
FLOAT16_MAX = 65_504  # the largest finite float16


def rounded(positions: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Integer positions stored in ``dtype`` and read back as float64 (inf past float16's range)."""
    return positions.to(dtype).double()


def position_errors(max_position: int = MAX_POSITION) -> pd.DataFrame:
    """``segment start, segment end, dtype, largest error``: every integer 0..max through each dtype."""
    every = torch.arange(max_position, dtype=torch.float64)
    rows = []
    for name, dtype in DTYPES.items():
        error = (rounded(every, dtype) - every).abs()
        for start in [0, *(1 << k for k in range(max_position.bit_length() - 1))]:
            end = max(1, start * 2) - 1
            rows.append({"from": start, "to": end, "dtype": name, "largest error": float(error[start : end + 1].max())})
    return pd.DataFrame(rows)


def exact_up_to(dtype: torch.dtype) -> int:
    """The largest n such that every integer 0..n is stored exactly.

    For a binary float the first integer it cannot hold is 2^k + 1 for some k (below 2^p every integer
    fits, and 2^p + 1 needs p + 1 significant bits), so trying 2^k + 1 for growing k finds it.
    """
    for k in range(1, 64):
        n = (1 << k) + 1
        if rounded(torch.tensor([float(n)], dtype=torch.float64), dtype).item() != n:
            return n - 1
    raise ValueError(f"{dtype} holds every integer below 2^64")


def largest_error(dtype_name: str, start: int, end: int) -> float:
    every = torch.arange(start, end + 1, dtype=torch.float64)
    return float((rounded(every, DTYPES[dtype_name]) - every).abs().max())


def _error_chart(frame: pd.DataFrame) -> alt.Chart:
    # the segment {0} has no place on a log axis (and no error): the chart starts at position 1
    shown = frame[(frame["largest error"] < float("inf")) & (frame["from"] > 0)].assign(
        drawn=lambda f: f["largest error"].clip(lower=0.01)
    )
    return (
        alt.Chart(shown)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X("from:Q", title=axis_title("position (segment start)", "log scale"), scale=alt.Scale(type="log")),
            y=alt.Y(
                "drawn:Q",
                title=y_axis_title("largest rounding error", "positions, log scale"),
                scale=alt.Scale(type="log", domain=[0.01, 10_000]),
                # Plain numbers, not SI ("10m" read as ten metres); 0.01 is where exact values are drawn.
                axis=alt.Axis(labelExpr="datum.value <= 0.01 ? 'exact' : format(datum.value, ',~g')"),
            ),
            color=alt.Color("dtype:N", title="stored as"),
            strokeDash=alt.StrokeDash("dtype:N", title="stored as"),
            tooltip=[
                alt.Tooltip("dtype:N"),
                alt.Tooltip("from:Q", format=","),
                alt.Tooltip("to:Q", format=","),
                alt.Tooltip("largest error:Q", format=","),
            ],
        )
        .properties(
            title="How far a stored position can be from the true one",
            description=(
                "Step chart, log scales: for each power-of-two segment of positions up to 1,048,576, the largest "
                "difference between an integer and its float16, bfloat16 or float32 copy. Exact values are drawn at "
                f"0.01; float16 overflows past {FLOAT16_MAX:,}, so its line stops there."
            ),
        )
    )


@dataclass(frozen=True)
class PrecisionView:
    table: pd.DataFrame  # segment x dtype, largest error as text; "overflow" past float16's range
    exact: dict[str, int]  # dtype -> largest n with every integer up to n exact
    chart: alt.Chart


def precision_view() -> PrecisionView:
    frame = position_errors()
    table = frame.pivot(index=["from", "to"], columns="dtype", values="largest error")[list(DTYPES)].reset_index()
    for name in DTYPES:  # strings, so that float16's overflow reads as a word
        table[name] = [f"{value:,.0f}" if value < float("inf") else "overflow" for value in table[name]]
    exact = {name: exact_up_to(dtype) for name, dtype in DTYPES.items()}
    return PrecisionView(table, exact, _error_chart(frame))


def _score(q, k, query_pos: torch.Tensor, key_pos: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """RoPE scores of one query and one key at many (query, key) position pairs: ``[N]``."""
    return (
        apply_rotary(q.expand(len(query_pos), -1), freqs, query_pos)
        * apply_rotary(k.expand(len(key_pos), -1), freqs, key_pos)
    ).sum(-1)


def score_frame(
    offset: int, head_dim: int = 64, base: float = 10_000.0, points: int = 400, seed: int = 0
) -> pd.DataFrame:
    """``position, way, score``: the score of a query at p and a key at p - offset, for p up to 1M."""
    generator = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(1, head_dim, generator=generator, dtype=torch.float64) for _ in range(2))
    freqs = rope_inverse_frequencies(head_dim, base, torch.float64)
    query = torch.unique(torch.logspace(np.log10(max(offset, 1)), np.log10(MAX_POSITION - 1), points).round()).double()
    key = query - offset
    frames = [
        pd.DataFrame(
            {"position": query.numpy(), "way": "exact (float64)", "score": _score(q, k, query, key, freqs).numpy()}
        )
    ]
    for name in ("float16", "bfloat16"):
        dtype = DTYPES[name]
        finite = rounded(query, dtype).isfinite() & rounded(key, dtype).isfinite()
        scores = _score(q, k, rounded(query[finite], dtype), rounded(key[finite], dtype), freqs)
        frames.append(
            pd.DataFrame({"position": query[finite].numpy(), "way": f"positions in {name}", "score": scores.numpy()})
        )
    # float32 positions are exact here; the product p * theta rounded to float32 is not
    angles = (query.float()[:, None] * freqs.float()[None, :]).double() - (
        key.float()[:, None] * freqs.float()[None, :]
    ).double()
    relative = torch.cat([angles.cos(), angles.sin()], -1)  # the score as a function of the angle differences
    a, b = q[0, 0::2], q[0, 1::2]
    c, d = k[0, 0::2], k[0, 1::2]
    half = head_dim // 2
    score32 = ((a * c + b * d) * relative[:, :half] + (a * d - b * c) * relative[:, half:]).sum(-1)
    frames.append(pd.DataFrame({"position": query.numpy(), "way": "angles in float32", "score": score32.numpy()}))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class ScoreView:
    exact: float  # the score at this offset, the same at every position
    largest_change: dict[str, float]  # way -> largest |score - exact| over the positions drawn
    first_wrong: dict[str, int | None]  # way -> first query position with |score - exact| > 1e-3
    chart: alt.Chart


def score_view(offset: int) -> ScoreView:
    frame = score_frame(offset)
    exact = float(frame.loc[frame["way"] == "exact (float64)", "score"].iloc[0])
    frame["change"] = (frame["score"] - exact).abs()
    ways = [way for way in dict.fromkeys(frame["way"]) if way != "exact (float64)"]
    largest = {way: float(frame.loc[frame["way"] == way, "change"].max()) for way in ways}
    first = {}
    for way in ways:
        wrong = frame.loc[(frame["way"] == way) & (frame["change"] > 1e-3), "position"]
        first[way] = int(wrong.min()) if len(wrong) else None
    chart = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=12))
        .encode(
            x=alt.X(
                "position:Q",
                title=axis_title("query position p (key at p - offset)", "log scale"),
                scale=alt.Scale(type="log", domain=[max(offset, 1), MAX_POSITION], nice=False),
            ),
            y=alt.Y("score:Q", title=y_axis_title("RoPE score q . k", "unitless")),
            color=alt.Color(
                "way:N", title="positions / angles", legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)
            ),
            strokeDash=alt.StrokeDash(
                "way:N", title="positions / angles", legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)
            ),
            tooltip=[
                alt.Tooltip("way:N"),
                alt.Tooltip("position:Q", format=","),
                alt.Tooltip("score:Q", format=".4f"),
                alt.Tooltip("change:Q", title="|score - exact|", format=".2e"),
            ],
        )
        .properties(
            title=f"One query and one key {offset} positions apart, moved along the context",
            height=460,
            description=(
                f"Line chart, log x: the RoPE score of a fixed query and key {offset} positions apart, computed exactly "
                f"({exact:.4f} at every position) and from positions or angles rounded to lower precision. "
                + "; ".join(f"{way}: largest change {largest[way]:.3f}" for way in ways)
                + "."
            ),
        )
    )
    return ScoreView(exact, largest, first, chart)


def score_table(view: ScoreView) -> pd.DataFrame:
    """One row per rounded way: where the score first moves by more than 0.001, and by how much at most."""
    return pd.DataFrame(
        [
            {
                "positions / angles": way,
                "first query position off by > 0.001": "never"
                if view.first_wrong[way] is None
                else f"{view.first_wrong[way]:,}",
                "largest change of the score": f"{view.largest_change[way]:.3g}",
            }
            for way in view.largest_change
        ]
    )


def segment_errors() -> dict[str, float]:
    """The segments the lesson quotes: float16 at 4,096-8,191 and 8,192-16,383, bfloat16 at 4,096-8,191."""
    return {
        "float16 4096": largest_error("float16", 4096, 8191),
        "float16 8192": largest_error("float16", 8192, 16383),
        "bfloat16 4096": largest_error("bfloat16", 4096, 8191),
    }
