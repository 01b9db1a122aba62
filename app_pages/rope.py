"""Lesson: RoPE. Clock hands, shift invariance, the long-range decay, the two pairings."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import rope as lesson
from poslab.viz import rope_pairing

LESSON = "rope"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

left, right = st.columns(2)
head_dim = left.select_slider("head dimension D", options=[8, 16, 32, 64, 128], value=64, key="rope-d")
base = right.select_slider("base", options=[100, 1_000, 10_000, 500_000], value=10_000, key="rope-base")

st.header("Every pair is a clock hand")
left, right = st.columns(2)
m = left.slider("query position m", 0, 200, 3, key="rope-m")
n = right.slider("key position n", 0, 200, 10, key="rope-n")
frame.chart(caching.cached(lesson.clock_chart, head_dim=head_dim, base=float(base), m=m, n=n))
with st.expander("The numbers behind this chart", icon=":material/table:"):  # the hands, not the drawn circles
    st.dataframe(lesson.clock_frame(head_dim, float(base), m, n), hide_index=True)
frame.text(LESSON, "clocks")

st.header("Shift both positions: the score stays")
shift = st.slider("shift s (positions)", 0, 5_000, 1_000, step=50, key="rope-shift")
scores = caching.cached(lesson.shift_view, head_dim=head_dim, base=float(base), m=m, n=n, shift=shift)
now, both, key_only = frame.row(3)
now.metric(f"score at (m, n) = ({m}, {n})", f"{scores.score:.6f}")
both.metric(
    f"both moved: ({m + shift}, {n + shift})",
    f"{scores.shifted_score:.6f}",
    delta=f"{scores.shifted_score - scores.score:.1e}",
    delta_color="off",
)
key_only.metric(
    f"key only: ({m}, {n + shift})",
    f"{scores.key_only_score:.6f}",
    delta=f"{scores.key_only_score - scores.score:+.3f}",
    delta_color="off",
)
frame.chart(scores.chart, numbers=True)
frame.text(LESSON, "shift")

st.header("Long-range decay")
reach = st.select_slider(
    "largest distance (positions)", options=[250, 1_000, 4_000, 16_000], value=1_000, key="rope-reach"
)
frame.chart(caching.cached(lesson.decay_chart, head_dim=head_dim, base=float(base), max_distance=reach), numbers=True)
frame.text(LESSON, "decay")

st.header("Interleaved or half-split pairs")
pairs = caching.cached(rope_pairing.pairing_view, head_dim=head_dim, d_model=2 * head_dim, seq_len=16, base=float(base))
st.dataframe(pairs.pairs, hide_index=True)
vectors, relative_a, relative_b = frame.row(3)
vectors.metric("max |rope_interleaved(q) − rope_half(q)|", f"{pairs.vector_difference:.3f}")
relative_a.metric("shift error, interleaved", f"{pairs.shift_error_interleaved:.1e}")
relative_b.metric("shift error, half-split", f"{pairs.shift_error_half:.1e}")
swapped, permuted = frame.row(2)
swapped.metric("scores, interleaved weights run half-split: max change", f"{pairs.swapped_score_error:.3f}")
permuted.metric("same, after permuting W_Q and W_K rows", f"{pairs.permuted_score_error:.1e}")
frame.text(LESSON, "pairing")

frame.lesson_footer(LESSON)
