"""Lesson: ALiBi. Slopes for any head count, the bias per head, windows, nothing added."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import alibi as lesson

LESSON = "alibi"
RATIOS = {"1/10": 0.1, "1/100": 0.01, "1/1000": 0.001}

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

st.header("Slopes and windows")
left, right = st.columns(2)
n_heads = left.slider("number of heads", 1, 32, 12, key="alibi-heads")
ratio = right.select_slider(
    "window edge: weight relative to the current token", options=list(RATIOS), value="1/100", key="alibi-ratio"
)
slopes = caching.cached(lesson.slopes_view, n_heads=n_heads, weight_ratio=RATIOS[ratio])
st.info(slopes.rule)
# One under the other: beside the table, the chart's column was too narrow for its title and legend.
st.dataframe(
    slopes.table,
    hide_index=True,
    column_order=("head", "slope", "log2 slope", "rule", "window"),
    column_config={"window": st.column_config.NumberColumn(f"window at {ratio} (tokens)", format="%.1f")},
)
st.caption(f"The window is where the bias reaches ln({ratio}) = {slopes.penalty:.3f}.")
frame.chart(slopes.chart)  # its numbers are the table above
frame.text(LESSON, "slopes")

st.header("The bias of one head")
left, right = st.columns(2)
head = left.selectbox("head", options=list(range(n_heads)), key=f"alibi-head-{n_heads}")
seq_len = right.slider("sequence length (tokens)", 8, 64, 32, key="alibi-seq-len")
frame.chart(caching.cached(lesson.bias_chart, n_heads=n_heads, head=head, seq_len=seq_len), numbers=True)
frame.text(LESSON, "bias")

st.header("Nothing is added to the embeddings")
frame.chart(caching.cached(lesson.recency_chart, n_heads=n_heads, max_distance=200), numbers=True)
offset = st.slider("move the whole sequence by s positions", 1, 10_000, 1_000, key="alibi-offset")
moved = caching.cached(lesson.shifted_inputs, n_heads=n_heads, seq_len=16, shift=offset)
alibi_change, sinusoidal_change = frame.row(2)
alibi_change.metric("ALiBi: max output change", f"{moved.alibi_difference:.1e}")
sinusoidal_change.metric("added sinusoidal table: max output change", f"{moved.sinusoidal_difference:.3f}")
frame.text(LESSON, "embeddings")

frame.lesson_footer(LESSON)
