"""The positions-in-2D-and-3D lesson: axial 2D RoPE on a grid of patches, and M-RoPE on text, an image and a video.

Every number comes from ``poslab.encodings.rope_nd``. One query vector and one key vector (random, float64) are
placed at every patch, so only position can change a score. The checks are the 1D lessons', one dimension up:

* offset: shifting every position by the same 2D (3D) offset leaves every score unchanged;
* permutation: shuffling the tokens together with their positions shuffles the scores the same way, while
  shuffling the tokens and leaving the positions in place changes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings import rope_nd
from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz.common import axis_title, heatmap, y_axis_title

HEAD_DIM = 32  # the 2D grid's head: 8 pairs by row, 8 by column
MROPE_SECTIONS = (4, 6, 6)  # Qwen2-VL's 16 : 24 : 24 of 64 pairs, scaled to a 32-feature head
GRID_BASE = 100.0  # a small base so that a pair turns visibly across a grid of a dozen patches


def _vectors(count: int, head_dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(count, head_dim, generator=generator, dtype=torch.float64) for _ in range(2))
    return q, k


def _largest(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max())


@dataclass(frozen=True)
class GridView:
    offset_error: float  # max score change when every patch moves by the same (rows, cols)
    permutation_error: float  # tokens shuffled with their positions vs the scores shuffled
    positions_left_behind: float  # tokens shuffled, positions left in place: the scores change
    mirror_difference: float  # 2D: key (r + a, c + b) vs (r + b, c + a) around the query
    raster_rows_vs_cols: float  # 1D raster order: the key one row below vs one column right
    chart_2d: alt.Chart
    chart_raster: alt.Chart


def _score_map(scores: torch.Tensor, height: int, width: int, title: str, description: str) -> alt.Chart:
    return heatmap(
        scores.reshape(height, width),
        title=title,
        x_title=axis_title("key column", "patch"),
        y_title=axis_title("key row", "patch"),
        value_title="score q·k",
        description=description,
    )


def grid_view(
    height: int, width: int, query_row: int, query_col: int, shift: tuple[int, int], seed: int = 0
) -> GridView:
    """One patch's query scored against the same token's key placed at every patch of a ``height x width`` grid.

    Query and key are one vector, so the score peaks where the key sits on the query (offset 0).
    """
    q, _ = _vectors(1, HEAD_DIM, seed)
    half = HEAD_DIM // 2  # each half at unit length, so that rows and columns weigh the same in the map
    q = torch.cat([q[:, :half] / q[:, :half].norm(), q[:, half:] / q[:, half:].norm()], dim=-1)
    k = q
    rows, cols = rope_nd.grid_positions(height, width)
    n = height * width
    query = rope_nd.axial_rope_2d(q, torch.tensor([query_row]), torch.tensor([query_col]), GRID_BASE)
    keys = rope_nd.axial_rope_2d(k.expand(n, -1), rows, cols, GRID_BASE)
    scores = (keys @ query[0]).clone()
    moved_q = rope_nd.axial_rope_2d(
        q, torch.tensor([query_row + shift[0]]), torch.tensor([query_col + shift[1]]), GRID_BASE
    )
    moved = rope_nd.axial_rope_2d(k.expand(n, -1), rows + shift[0], cols + shift[1], GRID_BASE) @ moved_q[0]

    inv_freq = rope_inverse_frequencies(HEAD_DIM, GRID_BASE, torch.float64)
    raster = (
        apply_rotary(k.expand(n, -1), inv_freq, torch.arange(n))
        @ apply_rotary(q, inv_freq, torch.tensor([query_row * width + query_col]))[0]
    )

    qs, ks = _vectors(n, HEAD_DIM, seed + 1)  # a different token at every patch, for the permutation check
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))

    def all_scores(qx, kx, r, c):
        return rope_nd.axial_rope_2d(qx, r, c, GRID_BASE) @ rope_nd.axial_rope_2d(kx, r, c, GRID_BASE).T

    reference = all_scores(qs, ks, rows, cols)
    carried = all_scores(qs[order], ks[order], rows[order], cols[order])
    left = all_scores(qs[order], ks[order], rows, cols)

    def key_at(r, c):
        return float(rope_nd.axial_rope_2d(k, torch.tensor([r]), torch.tensor([c]), GRID_BASE)[0] @ query[0])

    def raster_at(index):
        return float(
            apply_rotary(k, inv_freq, torch.tensor([index]))[0]
            @ apply_rotary(q, inv_freq, torch.tensor([query_row * width + query_col]))[0]
        )

    here = query_row * width + query_col
    where = f"the query at row {query_row}, column {query_col}"
    return GridView(
        _largest(scores, moved),
        _largest(carried, reference[order][:, order]),
        _largest(left, reference[order][:, order]),
        abs(key_at(query_row + 1, query_col + 2) - key_at(query_row + 2, query_col + 1)),
        abs(raster_at(here + width) - raster_at(here + 1)),
        _score_map(
            scores,
            height,
            width,
            f"2D RoPE: {where}, the same token at every patch",
            f"Heatmap of the score between {where} and the same key vector placed at each patch of a {height} by "
            f"{width} grid, with axial 2D RoPE: the pattern depends on the row and column offsets only.",
        ),
        _score_map(
            raster,
            height,
            width,
            f"1D RoPE in raster order: {where}",
            f"Heatmap of the same scores with 1D RoPE over the patches read row by row: the key one row below the "
            f"query is {width} positions away, the key one column right only 1.",
        ),
    )


# ---------------------------------------------------------------- M-RoPE


def layout(text_before: int, image_rows: int, image_cols: int, text_after: int, frames: int) -> tuple:
    """The lesson's sequence: text, an image, text, and (when ``frames`` > 0) a short video of 2 x 2 patches."""
    segments = [
        rope_nd.Segment("text", width=text_before),
        rope_nd.Segment("image", height=image_rows, width=image_cols),
        rope_nd.Segment("text", width=text_after),
    ]
    if frames:
        segments.append(rope_nd.Segment("video", frames=frames, height=2, width=2))
    return tuple(segments)


@dataclass(frozen=True)
class MropeView:
    tokens: int
    largest_id: int  # the largest position id: below the token count once an image is in
    offset_error: float
    permutation_error: float
    text_vs_1d: float  # M-RoPE on a text-only sequence against 1D RoPE (half pairing)
    chart: alt.Chart
    table: pd.DataFrame


def mrope_view(text_before: int, image_rows: int, image_cols: int, text_after: int, frames: int) -> MropeView:
    segments = layout(text_before, image_rows, image_cols, text_after, frames)
    positions, labels = rope_nd.mrope_positions(segments)
    n = positions.shape[1]
    q, k = _vectors(n, 2 * sum(MROPE_SECTIONS), seed=0)

    def scores(qx, kx, pos):
        return rope_nd.apply_mrope(qx, pos, MROPE_SECTIONS) @ rope_nd.apply_mrope(kx, pos, MROPE_SECTIONS).T

    reference = scores(q, k, positions)
    shifted = scores(q, k, positions + torch.tensor([[5], [-3], [7]]))
    order = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    carried = scores(q[order], k[order], positions[:, order])
    text_ids = torch.arange(n).expand(3, -1)
    inv_freq = rope_inverse_frequencies(q.shape[-1], 10000.0, torch.float64)
    one_d = apply_rotary(q, inv_freq, torch.arange(n), "half")

    table = pd.DataFrame(
        {
            "token": range(n),
            "segment": labels,
            **{axis: positions[i].tolist() for i, axis in enumerate(rope_nd.AXES)},
        }
    )
    long_form = table.melt(
        id_vars=["token", "segment"], value_vars=list(rope_nd.AXES), var_name="axis", value_name="id"
    )
    chart = (
        alt.Chart(long_form)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X(
                "token:Q", title=axis_title("token of the sequence", "index"), axis=alt.Axis(format="d", tickMinStep=1)
            ),
            y=alt.Y("id:Q", title=y_axis_title("position id", "per axis"), axis=alt.Axis(format="d", tickMinStep=1)),
            color=alt.Color("axis:N", title="axis", sort=list(rope_nd.AXES), legend=alt.Legend(orient="bottom")),
            strokeDash=alt.StrokeDash(
                "axis:N", title="axis", sort=list(rope_nd.AXES), legend=alt.Legend(orient="bottom")
            ),
            tooltip=[alt.Tooltip("token:Q"), alt.Tooltip("segment:N"), alt.Tooltip("axis:N"), alt.Tooltip("id:Q")],
        )
        .properties(
            title=f"M-RoPE position ids of {n} tokens: {', '.join(s.kind for s in segments)}",
            description=(
                f"Step chart of the three position ids (temporal, height, width) of each of {n} tokens. Text tokens have "
                f"three equal ids that count up by one; an image's tokens share one temporal id while height and width "
                f"follow the patch's row and column; a video's temporal id counts its frames. The largest id is "
                f"{int(positions.max())}."
            ),
        )
    )
    return MropeView(
        n,
        int(positions.max()),
        _largest(shifted, reference),
        _largest(carried, reference[order][:, order]),
        _largest(rope_nd.apply_mrope(q, text_ids, MROPE_SECTIONS), one_d),
        chart,
        table,
    )
