"""Lesson: Long context in practice. Nominal and effective context, sinks, RoPE with a KV cache, packing, partial rotary."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import long_context as lesson

LESSON = "long-context"
CACHE_HEAD_DIM = 8

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.text(LESSON, "sinks")

frame.predict(LESSON, "decode-position")
frame.predict(LESSON, "rotate-again")
st.header("RoPE with a KV cache")
mode_column, length_column = st.columns(2)
mode = mode_column.radio(
    "how the engine handles the cache",
    list(lesson.CACHE_MODES),
    captions=list(lesson.CACHE_MODES.values()),
    key="lc-mode",
)
seq_len = length_column.slider("tokens decoded", 4, 32, 16, key="lc-seq-len")
decoded = caching.cached(lesson.cache_view, seq_len=seq_len, head_dim=CACHE_HEAD_DIM, mode=mode)
largest, first_wrong = frame.row(2)
largest.metric("max |cached - full pass| over all scores", f"{decoded.max_difference:.1e}")
first_wrong.metric(
    "first decode step that differs", "none" if decoded.first_wrong_step is None else str(decoded.first_wrong_step)
)
frame.chart(decoded.difference, numbers=True)
frame.text(LESSON, "cache")

frame.predict(LESSON, "packed-reset")
st.header("Packed sequences")
length_columns = st.columns(3)
lengths = tuple(
    int(column.number_input(f"document {i + 1}: tokens", 1, 16, default, key=f"lc-doc-{i}"))
    for i, (column, default) in enumerate(zip(length_columns, (5, 4, 3)))
)
reset = st.toggle("positions restart at 0 for each document", value=True, key="lc-reset")
packed = caching.cached(lesson.packed_view, doc_lengths=lengths, reset=reset)
leaked, changed = frame.row(2)
leaked.metric("largest attention weight on other documents", f"{packed.leaked_weight:.3f}")
changed.metric("max |packed output - document alone|", f"{packed.output_difference:.1e}")
frame.chart(packed.weights, numbers=True)
st.caption("Positions: " + ", ".join(str(p) for p in packed.positions))
frame.text(LESSON, "packed")

st.header("Partial rotary")
model_column, dims_column = st.columns(2)
model = model_column.selectbox("model", list(lesson.PARTIAL_ROTARY_MODELS), key="lc-model")
head_dim, model_rotary_dims, pairing = lesson.PARTIAL_ROTARY_MODELS[model]
rotary_dims = dims_column.slider(
    "rotated features per head",
    0,
    head_dim,
    model_rotary_dims,
    step=2,
    key=f"lc-rotary-{model}",
    help=f"{model} rotates {model_rotary_dims} ({pairing} pairs).",
)
frame.chart(
    caching.cached(lesson.partial_rotary_chart, head_dim=head_dim, rotary_dims=rotary_dims, max_distance=100),
    numbers=True,
)
frame.text(LESSON, "partial")

frame.lesson_footer(LESSON)
