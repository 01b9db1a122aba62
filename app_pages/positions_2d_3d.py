"""Lesson: positions in 2D and 3D. Axial 2D RoPE on a grid of patches, M-RoPE on text, an image and a video."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import rope_nd as lesson

LESSON = "positions-2d-3d"


def show_checks(values: dict[str, tuple[float, str]]) -> None:
    """One metric per check: its largest difference, and what that difference means as help."""
    for column, (label, (value, meaning)) in zip(frame.row(len(values)), values.items()):
        column.metric(label, f"{value:.1e}", help=meaning)


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "raster-neighbour")
st.header("Axial 2D RoPE on a grid of patches")
(size_rows, size_cols), (query_rows, query_cols) = st.columns(2), st.columns(2)
height = size_rows.slider("grid rows", 3, 12, 8, key="nd-height")
width = size_cols.slider("grid columns", 3, 12, 8, key="nd-width")
query_row = query_rows.slider("query row", 0, height - 1, min(3, height - 1), key="nd-qrow")
query_col = query_cols.slider("query column", 0, width - 1, min(3, width - 1), key="nd-qcol")
grid = caching.cached(
    lesson.grid_view, height=height, width=width, query_row=query_row, query_col=query_col, shift=(2, 3)
)
left, right = frame.chart_row(440, 440)
with left:
    frame.chart(grid.chart_2d, numbers=True)
with right:
    frame.chart(grid.chart_raster, numbers=True)
show_checks(
    {
        "offset: every patch moved by (2, 3)": (grid.offset_error, "largest score change: rounding"),
        "permutation, positions carried": (grid.permutation_error, "shuffled scores against scores shuffled"),
        "permutation, positions left behind": (grid.positions_left_behind, "the scores change: position is read"),
    }
)
st.caption(
    f"Rows and columns are distinct: keys at offsets (1, 2) and (2, 1) differ by {grid.mirror_difference:.3f}. "
    f"In raster order, the key one row below and the key one column right differ by {grid.raster_rows_vs_cols:.3f}."
)
frame.text(LESSON, "axial")

frame.predict(LESSON, "image-ids")
st.header("M-RoPE: text, an image and a video")
(before, after, frames), (rows, cols) = st.columns(3), st.columns(2)
text_before = before.slider("text before", 1, 8, 5, key="nd-before")
image_rows = rows.slider("image rows", 1, 6, 3, key="nd-image-rows")
image_cols = cols.slider("image columns", 1, 6, 4, key="nd-image-cols")
text_after = after.slider("text after", 1, 8, 3, key="nd-after")
video_frames = frames.slider("video frames (2 × 2)", 0, 4, 2, key="nd-frames")
mrope = caching.cached(
    lesson.mrope_view,
    text_before=text_before,
    image_rows=image_rows,
    image_cols=image_cols,
    text_after=text_after,
    frames=video_frames,
)
tokens, largest = frame.row(2)
tokens.metric("tokens", f"{mrope.tokens}")
largest.metric("largest position id", f"{mrope.largest_id}", help="ids run slower than tokens once an image is in")
frame.chart(mrope.chart, numbers=True)
show_checks(
    {
        "offset: ids moved by (5, −3, 7)": (mrope.offset_error, "largest score change: rounding"),
        "permutation, ids carried": (mrope.permutation_error, "shuffled scores against scores shuffled"),
        "text only: M-RoPE vs 1D RoPE": (mrope.text_vs_1d, "equal ids: every pair turns by the position"),
    }
)
with st.expander("The position ids, token by token"):
    st.dataframe(mrope.table, hide_index=True)
frame.text(LESSON, "mrope")

frame.predict(LESSON, "text-mrope")
frame.lesson_footer(LESSON)
