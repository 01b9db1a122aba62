"""Shared chart conventions: axis titles with units, tooltips, and a capped heatmap.

Every chart in the course has a title, a description (Vega-Lite's ``description``, the chart's
accessible name: what it shows, in words and numbers), axis titles that name the unit, and
tooltips. Heatmaps
never draw more than ``MAX_HEATMAP_CELLS`` cells: a bigger matrix is averaged (or max-reduced)
over rectangular blocks first, and the tooltip says which rows and columns a cell covers.

Stable API (other lesson modules build on it):

* ``axis_title(name, unit)``                     -> "name (unit)"
* ``y_axis_title(name, unit)``                   -> the same, on two lines when long (rotated titles clip)
* ``block_strides(n_rows, n_cols, max_cells)``   -> (row_stride, col_stride)
* ``matrix_frame(values, ...)``                  -> tidy DataFrame, one row per drawn cell
* ``heatmap(values, ...)``                       -> alt.Chart
* ``row_step(n_rows)``                           -> px per heatmap row (the default height)
* ``convention_problems(chart)``                 -> list of what a chart is missing (for tests)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

MAX_HEATMAP_CELLS = 5_000
ROW_STEP_BUDGET = 420  # px of plot height a heatmap aims for when it has many rows
REDUCERS = ("mean", "max")


def axis_title(name: str, unit: str | None = None) -> str:
    """``axis_title("key position", "token index")`` -> ``"key position (token index)"``."""
    return f"{name} ({unit})" if unit else name


# A rotated y title longer than the plot is tall spills above the chart, and Streamlit clips it
# along with the chart's own title: seen in Chromium at ~30 characters for the default height.
Y_TITLE_MAX_CHARS = 28


def y_axis_title(name: str, unit: str | None = None) -> str | list[str]:
    """``axis_title`` for a y axis: a long one breaks before the unit, as Vega-Lite's list of lines."""
    title = axis_title(name, unit)
    return [name, f"({unit})"] if unit and len(title) > Y_TITLE_MAX_CHARS else title


ROUNDING_NOISE = 1e-6  # differences below this are float rounding in the lessons' float64/float32 demos


def difference_domain(values: Any, floor: float = ROUNDING_NOISE) -> tuple[float, float]:
    """A colour range centred on 0 for a difference heatmap, never narrower than ``±floor``: rounding
    noise (1e-15) then draws as the zero colour instead of filling the whole scale."""
    finite = as_matrix(values)
    finite = finite[np.isfinite(finite)]
    largest = max(float(np.abs(finite).max()) if finite.size else 0.0, floor)
    return (-largest, largest)


def as_matrix(values: Any) -> np.ndarray:
    """A 2-D float64 array from a nested list, numpy array or (CPU) torch tensor."""
    if hasattr(values, "detach"):  # a torch tensor, without importing torch here
        values = values.detach().cpu().double().numpy()
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"a heatmap needs a 2-D matrix, got shape {matrix.shape}")
    if matrix.size == 0:
        raise ValueError("a heatmap needs at least one cell")
    return matrix


def block_strides(n_rows: int, n_cols: int, max_cells: int = MAX_HEATMAP_CELLS) -> tuple[int, int]:
    """Block size (rows, cols) so that ceil(n_rows/r) * ceil(n_cols/c) <= max_cells.

    Greedy: widen the stride of whichever axis currently has more blocks, so a tall, thin matrix
    (10,000 positions x 8 features) is shrunk along its long side only.
    """
    if max_cells < 1:
        raise ValueError(f"max_cells must be at least 1, got {max_cells}")
    row_stride, col_stride = 1, 1
    while math.ceil(n_rows / row_stride) * math.ceil(n_cols / col_stride) > max_cells:
        if math.ceil(n_rows / row_stride) >= math.ceil(n_cols / col_stride):
            row_stride += max(1, row_stride // 8)  # grow ~12% a step: few steps, near-tight cap
        else:
            col_stride += max(1, col_stride // 8)
    return row_stride, col_stride


def _reduce_blocks(matrix: np.ndarray, row_stride: int, col_stride: int, reduce: str) -> np.ndarray:
    """(R, C) -> (ceil(R/rs), ceil(C/cs)); ragged edge blocks are padded with NaN and ignored."""
    n_rows, n_cols = matrix.shape
    out_rows, out_cols = math.ceil(n_rows / row_stride), math.ceil(n_cols / col_stride)
    padded = np.full((out_rows * row_stride, out_cols * col_stride), np.nan)
    padded[:n_rows, :n_cols] = matrix
    blocks = padded.reshape(out_rows, row_stride, out_cols, col_stride)
    with warnings.catch_warnings():  # an all-NaN block (fully masked) stays NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(blocks, axis=(1, 3)) if reduce == "mean" else np.nanmax(blocks, axis=(1, 3))


def _labels(labels: Sequence[str] | None, count: int, starts: np.ndarray, what: str) -> list[str] | None:
    if labels is None:
        return None
    if len(labels) != count:
        raise ValueError(f"{len(labels)} {what} labels for {count} {what}s")
    return [f"{start} {labels[start]}" for start in starts]  # the index keeps repeated words apart


def matrix_frame(
    values: Any,
    *,
    max_cells: int = MAX_HEATMAP_CELLS,
    reduce: str = "mean",
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per drawn cell: ``row, row_end, col, col_end, value`` (+ ``row_label, col_label``).

    ``row``/``col`` are the first index a cell covers, ``*_end`` the last (inclusive). Non-finite
    entries (a causal mask's -inf) become NaN and draw as blank cells. Labels, one per original
    row/column, become ``"<index> <label>"`` so that two "the" tokens stay two columns.
    """
    if reduce not in REDUCERS:
        raise ValueError(f"reduce must be one of {REDUCERS}, got {reduce!r}")
    matrix = as_matrix(values)
    matrix = np.where(np.isfinite(matrix), matrix, np.nan)
    n_rows, n_cols = matrix.shape
    row_stride, col_stride = block_strides(n_rows, n_cols, max_cells)
    grid = _reduce_blocks(matrix, row_stride, col_stride, reduce)
    row_starts = np.arange(0, n_rows, row_stride)
    col_starts = np.arange(0, n_cols, col_stride)
    rows, cols = np.meshgrid(row_starts, col_starts, indexing="ij")
    frame = pd.DataFrame(
        {
            "row": rows.ravel(),
            "row_end": np.minimum(rows.ravel() + row_stride, n_rows) - 1,
            "col": cols.ravel(),
            "col_end": np.minimum(cols.ravel() + col_stride, n_cols) - 1,
            "value": grid.ravel(),
        }
    )
    row_names = _labels(row_labels, n_rows, row_starts, "row")
    col_names = _labels(col_labels, n_cols, col_starts, "column")
    if row_names is not None:
        frame["row_label"] = np.repeat(row_names, len(col_starts))
    if col_names is not None:
        frame["col_label"] = np.tile(col_names, len(row_starts))
    return frame


def row_step(n_rows: int, target: int = ROW_STEP_BUDGET) -> int:
    """Pixels per heatmap row: 24 for a few rows, shrinking so the plot stays near ``target`` px.

    A step (not a total height) because Streamlit's width="stretch" fits the whole chart, title and
    axes included, into a total height: 140 px leaves a 5-row heatmap about 25 px of plot.
    """
    return max(1, min(24, target // max(n_rows, 1)))


def _position_field(frame: pd.DataFrame, axis: str, title: str, channel: type) -> Any:
    label_field = f"{axis}_label"
    if label_field in frame:
        order = list(dict.fromkeys(frame[label_field]))
        return channel(
            f"{label_field}:N", title=title, sort=order, axis=alt.Axis(labelAngle=0 if axis == "row" else -45)
        )
    return channel(f"{axis}:O", title=title, axis=alt.Axis(labelOverlap=True, labelAngle=0))


def heatmap(
    values: Any,
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    diverging: bool = True,
    value_format: str = ".3f",
    max_cells: int = MAX_HEATMAP_CELLS,
    reduce: str = "mean",
    height: int | None = None,
    domain: tuple[float, float] | None = None,
    description: str | None = None,
) -> alt.Chart:
    """A rect heatmap of a 2-D matrix: rows on y (top = row 0), columns on x.

    ``diverging`` centres a blue-orange scale on 0 (signed values: differences, logits);
    otherwise a sequential scale (weights, distances). ``domain`` fixes the colour range, so two
    heatmaps meant to be compared share one. Matrices above ``max_cells`` are reduced over blocks
    first (see ``matrix_frame``); the title then says so. ``height`` (px) is the whole chart's,
    title and axes included; by default each row gets a fixed step (see ``row_step``).
    ``description`` says what the matrix shows; by default its size and range (``heatmap_description``).
    """
    frame = matrix_frame(values, max_cells=max_cells, reduce=reduce, row_labels=row_labels, col_labels=col_labels)
    n_rows, n_cols = as_matrix(values).shape
    n_drawn_rows = frame["row"].nunique()
    row_stride, col_stride = block_strides(n_rows, n_cols, max_cells)
    if (row_stride, col_stride) != (1, 1):
        title = f"{title} (each cell: {reduce} of a {row_stride}x{col_stride} block)"
    scale_args: dict[str, Any] = {"domain": list(domain)} if domain is not None else {}
    scale = (
        alt.Scale(scheme="blueorange", domainMid=0, **scale_args)
        if diverging
        else alt.Scale(scheme="viridis", **scale_args)
    )
    tooltip = [
        alt.Tooltip("row:Q", title=f"{y_title}: from"),
        alt.Tooltip("row_end:Q", title=f"{y_title}: to"),
        alt.Tooltip("col:Q", title=f"{x_title}: from"),
        alt.Tooltip("col_end:Q", title=f"{x_title}: to"),
        alt.Tooltip("value:Q", title=value_title, format=value_format),
    ]
    for field in ("row_label", "col_label"):
        if field in frame:
            tooltip.insert(0, alt.Tooltip(f"{field}:N", title="row" if field == "row_label" else "column"))
    return (
        alt.Chart(frame, title=title)
        .mark_rect()
        .encode(
            x=_position_field(frame, "col", x_title, alt.X),
            y=_position_field(frame, "row", y_title, alt.Y),
            color=alt.Color("value:Q", title=value_title, scale=scale, legend=alt.Legend(format=value_format)),
            tooltip=tooltip,
        )
        .properties(
            height=height or alt.Step(row_step(n_drawn_rows)),
            description=description or heatmap_description(frame, title, x_title, y_title, value_title),
        )
    )


def heatmap_description(frame: pd.DataFrame, title: str, x_title: str, y_title: str, value_title: str) -> str:
    """What a heatmap shows, in words: its title, size and range of values, and any blank cells."""
    values = frame["value"].dropna()
    span = f"from {values.min():.3g} to {values.max():.3g}" if len(values) else "no finite value"
    blank = int(frame["value"].isna().sum())
    blanks = f"; {blank} cells are blank (masked)" if blank else ""
    return (
        f"Heatmap: {title}. {value_title} over {frame['row'].nunique()} rows ({y_title}) and "
        f"{frame['col'].nunique()} columns ({x_title}), {span}{blanks}."
    )


def _specs(spec: dict) -> list[dict]:
    """The unit specs inside a (possibly layered / concatenated) Vega-Lite spec."""
    children = [child for key in ("layer", "hconcat", "vconcat", "concat") for child in spec.get(key, [])]
    if "spec" in spec:
        children.append(spec["spec"])
    if not children:
        return [spec]
    return [unit for child in children for unit in _specs(child)]


def convention_problems(chart: alt.TopLevelMixin) -> list[str]:
    """What a chart lacks of the course conventions; ``[]`` when it has them all.

    Checks a title somewhere, a top-level description, a title on every x/y encoding, and a tooltip in at least one
    layer (rules and text marks may go without).
    """
    spec = chart.to_dict()
    problems: list[str] = []
    units = _specs(spec)
    if not spec.get("title") and not any(unit.get("title") for unit in units):
        problems.append("no chart title")
    if not str(spec.get("description", "")).strip():
        problems.append("no description")
    has_tooltip = False
    for index, unit in enumerate(units):
        encoding = unit.get("encoding", {})
        for channel in ("x", "y"):
            definition = encoding.get(channel)
            if isinstance(definition, dict) and "field" in definition and not definition.get("title"):
                problems.append(f"layer {index}: {channel} axis has no title")
        has_tooltip = (
            has_tooltip
            or "tooltip" in encoding
            or bool(unit.get("mark", {}).get("tooltip") if isinstance(unit.get("mark"), dict) else False)
        )
    if not has_tooltip:
        problems.append("no tooltip")
    return problems
