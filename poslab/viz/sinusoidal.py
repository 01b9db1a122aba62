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
from poslab.viz.common import MAX_HEATMAP_CELLS, axis_title, heatmap

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


def sampling_strides(length: int, d_model: int, max_cells: int = MAX_HEATMAP_CELLS) -> tuple[int, int]:
    """(position stride, pair stride) so every kept cell is a real table entry within the cell cap.

    Averaging a block would mix a sin column with its cos neighbour (a flat 0.5 that is in no row of
    the table) and blur the fast waves: keep every r-th position and every s-th (sin, cos) pair instead.
    """
    row_stride, pair_stride = 1, 1
    while math.ceil(length / row_stride) * 2 * math.ceil(d_model / 2 / pair_stride) > max_cells:
        if math.ceil(length / row_stride) >= 2 * math.ceil(d_model / 2 / pair_stride):
            row_stride += 1
        else:
            pair_stride += 1
    return row_stride, pair_stride


def _nth(stride: int) -> str:
    """``1`` -> "", ``2`` -> "2nd", ``4`` -> "4th": "every 2nd position"."""
    if stride == 1:
        return ""
    suffix = "th" if 10 <= stride % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(stride % 10, "th")
    return f"{stride}{suffix}"


def table_view(length: int, d_model: int, base: float) -> TableView:
    """Heatmap of the ``[length, d_model]`` table; past the cell cap, a sample of its real entries."""
    table = sinusoidal_encoding(length, d_model, base).double().numpy()  # (T, d)
    row_stride, pair_stride = sampling_strides(length, d_model)
    positions = np.arange(0, length, row_stride)
    columns = np.array([c for pair in range(0, d_model // 2, pair_stride) for c in (2 * pair, 2 * pair + 1)])
    title = f"Sinusoidal table, {length} positions x {d_model} dimensions"
    if (row_stride, pair_stride) != (1, 1):
        title += f" (every {_nth(row_stride)} position, every {_nth(pair_stride)} (sin, cos) pair)"
    chart = heatmap(
        table[np.ix_(positions, columns)],
        title=title,
        x_title=DIMENSION,
        y_title=POSITION,
        value_title="PE value",
        domain=(-1.0, 1.0),
    )
    # The sample's cells carry the table's own indices, so axes, tooltips and numbers name real columns.
    data = chart.data.assign(
        row=positions[chart.data["row"]],
        row_end=positions[chart.data["row_end"]],
        col=columns[chart.data["col"]],
        col_end=columns[chart.data["col_end"]],
    )
    chart = chart.properties(
        data=data,
        description=(
            f"Heatmap of the sinusoidal table: {len(positions)} positions (rows, 0 to {positions[-1]}) by {len(columns)} "
            f"columns (even columns sin, odd columns cos), values from -1 to 1; the first columns change fastest, with "
            f"a wavelength of {column_wavelength(0, d_model, base):.2f} positions, the last pair slowest, "
            f"{column_wavelength(d_model - 1, d_model, base):,.0f} positions."
        ),
    )
    return TableView(chart, column_wavelength(0, d_model, base), column_wavelength(d_model - 1, d_model, base))


def waves_frame(length: int, d_model: int, base: float, columns: tuple[int, ...]) -> pd.DataFrame:
    """Tidy ``position, column, value, wavelength`` for the chosen columns of the table."""
    table = sinusoidal_encoding(length, d_model, base).numpy()  # (T, d)
    frames = [
        pd.DataFrame(
            {
                "position": np.arange(length),
                "column": f"{c} ({'sin' if c % 2 == 0 else 'cos'})",
                "value": table[:, c],
                "wavelength": column_wavelength(c, d_model, base),
            }
        )
        for c in columns
        if 0 <= c < d_model
    ]
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["position", "column", "value", "wavelength"])
    )


def waves_chart(length: int, d_model: int, base: float, columns: tuple[int, ...]) -> alt.Chart:
    frame = waves_frame(length, d_model, base, columns)
    in_order = [f"{c} ({'sin' if c % 2 == 0 else 'cos'})" for c in sorted(set(columns)) if 0 <= c < d_model]
    waves = "; ".join(
        f"column {label}: wavelength {column_wavelength(int(label.split()[0]), d_model, base):,.1f} positions"
        for label in in_order
    )
    return (
        alt.Chart(frame, title="Each column is a sinusoid with its own wavelength")
        .mark_line()
        .encode(
            x=alt.X("position:Q", title=POSITION),
            y=alt.Y("value:Q", title="PE[p, column] (unitless)", scale=alt.Scale(domain=(-1.05, 1.05))),
            # Numeric order in the legend (64 before 128), and a dash per column as well as a colour.
            color=alt.Color("column:N", title="column", sort=in_order),
            strokeDash=alt.StrokeDash("column:N", title="column", sort=in_order),
            tooltip=[
                alt.Tooltip("column:N"),
                alt.Tooltip("position:Q"),
                alt.Tooltip("value:Q", format=".3f"),
                alt.Tooltip("wavelength:Q", title="wavelength (positions)", format=",.1f"),
            ],
        )
        .properties(
            description=(
                f"Line chart of the chosen columns of the sinusoidal table against position 0 to "
                f"{length - 1}, each between -1 and 1: {waves or 'no column chosen'}."
            )
        )
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
    return pd.DataFrame(
        {
            "offset": np.arange(-(length - 1), length),
            "dot": np.nanmean(by_offset, axis=0),
            "spread": np.nanmax(by_offset, axis=0) - np.nanmin(by_offset, axis=0),
            "pairs": np.sum(~np.isnan(by_offset), axis=0),
        }
    )


@dataclass(frozen=True)
class DotView:
    chart: alt.Chart
    max_spread: float  # the largest spread over p of any offset's dot product


def dot_view(length: int, d_model: int, base: float) -> DotView:
    frame = dot_by_offset(length, d_model, base)
    chart = (
        alt.Chart(frame, title="<PE_p, PE_p+k> depends on the offset k only, and is even in k")
        .mark_line()
        .encode(
            x=alt.X("offset:Q", title=axis_title("offset k = q - p", "positions")),
            y=alt.Y("dot:Q", title="dot product (unitless, at most d/2)"),
            tooltip=[
                alt.Tooltip("offset:Q", title="offset k"),
                alt.Tooltip("dot:Q", format=".4f"),
                alt.Tooltip("spread:Q", title="max - min over p", format=".1e"),
                alt.Tooltip("pairs:Q", title="pairs (p, p+k)"),
            ],
        )
        .properties(
            description=(
                f"Line chart of the dot product of PE_p and PE_p+k against the offset k from {-(length - 1)} to {length - 1}: "
                f"{frame['dot'].max():.2f} (d/2) at k = 0, symmetric in k, and the same for every p to within "
                f"{frame['spread'].max():.1e}."
            )
        )
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
    return (table[first + k : last + k] - moved).abs().amax(-1)


def blocks_frame(k: int, d_model: int, base: float, pairs: int = 4) -> pd.DataFrame:
    """The first ``pairs`` 2x2 blocks of M_k, read off the matrix itself."""
    matrix = shift_matrix(k, d_model, base).numpy()
    freqs = inverse_frequencies(d_model, base).numpy()
    rows = []
    for i in range(min(pairs, d_model // 2)):
        block = matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        rows.append(
            {
                "pair i": i,
                "columns": f"{2 * i}, {2 * i + 1}",
                "w_i (rad/position)": freqs[i],
                "k w_i (rad)": k * freqs[i],
                "M[0,0]": block[0, 0],
                "M[0,1]": block[0, 1],
                "M[1,0]": block[1, 0],
                "M[1,1]": block[1, 1],
            }
        )
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
    chart = heatmap(
        matrix[:shown, :shown],
        title=f"M_{k}, first {shown} dimensions: 2x2 rotation blocks",
        x_title=axis_title("input column", "PE[p]"),
        y_title=axis_title("output column", "PE[p+k]"),
        value_title="entry",
        domain=(-1.0, 1.0),
        value_format=".4f",
    )
    return ShiftView(
        blocks=blocks_frame(k, d_model, base),
        matrix_chart=chart,
        max_error=float(errors.max()),
        positions_checked=int(errors.numel()),
        off_block_max=float(matrix.masked_fill(block_mask, 0).abs().max()),
        dot_plus=float(table[k] @ table[2 * k]),
        dot_minus=float(table[k] @ table[0]),
    )
