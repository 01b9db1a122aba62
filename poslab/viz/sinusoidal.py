"""The sinusoidal lesson: the table, its waves, its dot products and the shift matrix M_k.

    PE[p, 2i] = sin(p w_i),   PE[p, 2i+1] = cos(p w_i),   w_i = base^(-2i/d),  wavelength 2 pi / w_i

Shifting by k positions rotates every (sin, cos) pair by the angle k w_i, whatever p is:

    [PE[p+k, 2i], PE[p+k, 2i+1]]^T = [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] [PE[p, 2i], PE[p, 2i+1]]^T

so PE[p+k] = M_k PE[p] with M_k block diagonal, and <PE_p, PE_{p+k}> = sum_i cos(k w_i): a function
of the offset k alone, and an even one (+k and -k give the same number).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import torch

from poslab.encodings.sinusoidal import inverse_frequencies, sinusoidal_encoding
from poslab.viz.common import axis_title, heatmap

POSITION = axis_title("position p", "token index")
DIMENSION = axis_title("dimension", "column of PE")


def column_wavelength(column: int, d_model: int, base: float) -> float:
    """Wavelength in positions of PE column ``column``: 2 pi base^(2 floor(column/2) / d)."""
    return 2 * math.pi * base ** (2 * (column // 2) / d_model)


# --- the table and its waves ------------------------------------------------------------------


@dataclass(frozen=True)
class TableView:
    chart: alt.Chart
    shortest_wavelength: float  # positions, column 0/1
    longest_wavelength: float  # positions, last pair


def table_view(length: int, d_model: int, base: float) -> TableView:
    """Heatmap of the ``[length, d_model]`` table (reduced over blocks past the cell cap)."""
    table = sinusoidal_encoding(length, d_model, base)  # (T, d)
    chart = heatmap(table, title=f"Sinusoidal table, {length} positions x {d_model} dimensions",
                    x_title=DIMENSION, y_title=POSITION, value_title="PE value", domain=(-1.0, 1.0))
    return TableView(chart, column_wavelength(0, d_model, base), column_wavelength(d_model - 1, d_model, base))


def waves_frame(length: int, d_model: int, base: float, columns: tuple[int, ...]) -> pd.DataFrame:
    """Tidy ``position, column, value, wavelength`` for the chosen columns of the table."""
    table = sinusoidal_encoding(length, d_model, base).numpy()  # (T, d)
    frames = [pd.DataFrame({
        "position": np.arange(length),
        "column": f"{c} ({'sin' if c % 2 == 0 else 'cos'})",
        "value": table[:, c],
        "wavelength": column_wavelength(c, d_model, base),
    }) for c in columns if 0 <= c < d_model]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["position", "column", "value", "wavelength"])


def waves_chart(length: int, d_model: int, base: float, columns: tuple[int, ...]) -> alt.Chart:
    frame = waves_frame(length, d_model, base, columns)
    return alt.Chart(frame, title="Each column is a sinusoid with its own wavelength").mark_line().encode(
        x=alt.X("position:Q", title=POSITION),
        y=alt.Y("value:Q", title="PE[p, column] (unitless)", scale=alt.Scale(domain=(-1.05, 1.05))),
        color=alt.Color("column:N", title="column"),
        tooltip=[alt.Tooltip("column:N"), alt.Tooltip("position:Q"), alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("wavelength:Q", title="wavelength (positions)", format=",.1f")],
    )


# --- dot products against distance -----------------------------------------------------------


def _diagonals(matrix: np.ndarray) -> np.ndarray:
    """``[T, T]`` -> ``[T, T]`` with column k holding diagonal k (``matrix[p, p + k]``), NaN past the edge."""
    size = len(matrix)
    rows = np.arange(size)[:, None]
    cols = rows + np.arange(size)[None, :]  # (T, T): p + k
    return np.where(cols < size, matrix[rows, np.minimum(cols, size - 1)], np.nan)


def dot_by_offset(length: int, d_model: int, base: float) -> pd.DataFrame:
    """``offset, dot, spread, pairs``: <PE_p, PE_{p+offset}> over every valid p.

    ``dot`` is the mean over p and ``spread`` the max minus the min: ~0 if the dot product
    depends on the offset alone.
    """
    table = sinusoidal_encoding(length, d_model, base).double().numpy()  # (T, d)
    gram = table @ table.T  # (T, T): gram[p, q] = <PE_p, PE_q>
    ahead, behind = _diagonals(gram), _diagonals(gram.T)[:, 1:]  # offsets 0..T-1 and -1..-(T-1)
    by_offset = np.concatenate([behind[:, ::-1], ahead], axis=1)  # (T, 2T-1): offsets -(T-1)..T-1
    return pd.DataFrame({
        "offset": np.arange(-(length - 1), length),
        "dot": np.nanmean(by_offset, axis=0),
        "spread": np.nanmax(by_offset, axis=0) - np.nanmin(by_offset, axis=0),
        "pairs": np.sum(~np.isnan(by_offset), axis=0),
    })


@dataclass(frozen=True)
class DotView:
    chart: alt.Chart
    max_spread: float  # the largest spread over p of any offset's dot product


def dot_view(length: int, d_model: int, base: float) -> DotView:
    frame = dot_by_offset(length, d_model, base)
    chart = alt.Chart(frame, title="<PE_p, PE_p+k> depends on the offset k only, and is even in k").mark_line().encode(
        x=alt.X("offset:Q", title=axis_title("offset k = q - p", "positions")),
        y=alt.Y("dot:Q", title="dot product (unitless, at most d/2)"),
        tooltip=[alt.Tooltip("offset:Q", title="offset k"), alt.Tooltip("dot:Q", format=".4f"),
                 alt.Tooltip("spread:Q", title="max - min over p", format=".1e"),
                 alt.Tooltip("pairs:Q", title="pairs (p, p+k)")],
    )
    return DotView(chart, float(frame["spread"].max()))


# --- the shift matrix M_k ---------------------------------------------------------------------


def shift_matrix(k: int, d_model: int, base: float) -> torch.Tensor:
    """``M_k``, float64 ``[d, d]``: block diagonal, block i = [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]]."""
    angles = k * inverse_frequencies(d_model, base)  # (d/2,)
    cos, sin = angles.cos(), angles.sin()
    blocks = torch.stack([torch.stack([cos, sin], -1), torch.stack([-sin, cos], -1)], -2)  # (d/2, 2, 2)
    return torch.block_diag(*blocks)


def shift_errors(k: int, length: int, d_model: int, base: float) -> torch.Tensor:
    """``max_j |PE[p+k, j] - (M_k PE[p])_j|`` for every p with 0 <= p + k < length, float64."""
    table = sinusoidal_encoding(length, d_model, base).double()  # (T, d)
    first, last = max(0, -k), min(length, length - k)  # p range keeping p + k inside the table
    moved = table[first:last] @ shift_matrix(k, d_model, base).T  # (P, d): row p is M_k PE[p]
    return (table[first + k:last + k] - moved).abs().amax(-1)


def blocks_frame(k: int, d_model: int, base: float, pairs: int = 4) -> pd.DataFrame:
    """The first ``pairs`` 2x2 blocks of M_k, read off the matrix itself."""
    matrix = shift_matrix(k, d_model, base).numpy()
    freqs = inverse_frequencies(d_model, base).numpy()
    rows = []
    for i in range(min(pairs, d_model // 2)):
        block = matrix[2 * i:2 * i + 2, 2 * i:2 * i + 2]
        rows.append({"pair i": i, "columns": f"{2 * i}, {2 * i + 1}", "w_i (rad/position)": freqs[i],
                     "k w_i (rad)": k * freqs[i], "M[0,0]": block[0, 0], "M[0,1]": block[0, 1],
                     "M[1,0]": block[1, 0], "M[1,1]": block[1, 1]})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ShiftView:
    blocks: pd.DataFrame
    matrix_chart: alt.Chart
    max_error: float  # over every p and column of PE[p+k] - M_k PE[p]
    positions_checked: int
    off_block_max: float  # largest |entry| of M_k outside the 2x2 blocks: 0
    dot_plus: float  # <PE_p, PE_{p+k}> at p = k
    dot_minus: float  # <PE_p, PE_{p-k}> at p = k


def shift_view(k: int, length: int, d_model: int, base: float, shown_dims: int = 16) -> ShiftView:
    """Everything the relative-offset section shows for one k (needs 2k < length)."""
    if not 0 < 2 * k < length:
        raise ValueError(f"the offset k must satisfy 0 < 2k < length, got k={k}, length={length}")
    matrix = shift_matrix(k, d_model, base)
    block_mask = torch.block_diag(*[torch.ones(2, 2, dtype=torch.bool)] * (d_model // 2))
    errors = shift_errors(k, length, d_model, base)
    table = sinusoidal_encoding(length, d_model, base).double()
    shown = min(shown_dims, d_model)
    chart = heatmap(matrix[:shown, :shown], title=f"M_{k}, first {shown} dimensions: 2x2 rotation blocks",
                    x_title=axis_title("input column", "PE[p]"), y_title=axis_title("output column", "PE[p+k]"),
                    value_title="entry", domain=(-1.0, 1.0), value_format=".4f")
    return ShiftView(
        blocks=blocks_frame(k, d_model, base),
        matrix_chart=chart,
        max_error=float(errors.max()),
        positions_checked=int(errors.numel()),
        off_block_max=float(matrix.masked_fill(block_mask, 0).abs().max()),
        dot_plus=float(table[k] @ table[2 * k]),
        dot_minus=float(table[k] @ table[0]),
    )
