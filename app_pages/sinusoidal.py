"""Lesson: sinusoidal encoding. The table, its columns, dot product against distance, M_k."""

import math

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import sinusoidal as lesson

LESSON = "sinusoidal"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

st.header("The table")
left, middle, right = st.columns(3)
d_model = left.select_slider("d (dimensions)", options=[8, 16, 32, 64, 128, 256], value=64, key="sin-d")
base = middle.select_slider("base", options=[100, 1_000, 10_000, 100_000], value=10_000, key="sin-base")
length = right.slider("length (positions)", 16, 512, 128, step=16, key="sin-length")
knobs = dict(length=length, d_model=d_model, base=float(base))

table = caching.cached(lesson.table_view, **knobs)
frame.chart(table.chart, numbers=True)
shortest, longest, naive = frame.row(3)
shortest.metric("shortest wavelength 2π (columns 0 and 1)", f"{table.shortest_wavelength:,.2f}")
longest.metric("longest wavelength 2π·base^((d−2)/d) (last pair)", f"{table.longest_wavelength:,.0f}")
naive.metric("2π·base, for comparison", f"{2 * math.pi * base:,.0f}")
frame.text(LESSON, "table")

st.header("One sinusoid per column")
columns = st.multiselect(
    "Columns to plot",
    options=list(range(d_model)),
    key=f"sin-columns-{d_model}",
    default=[0, 1, d_model // 4, d_model // 2],
)
frame.chart(caching.cached(lesson.waves_chart, columns=tuple(columns), **knobs), numbers=True)
frame.text(LESSON, "waves")

st.header("Dot product against distance")
dots = caching.cached(lesson.dot_view, **knobs)
frame.chart(dots.chart, numbers=True)
st.caption(f"For every offset k, ⟨PE_p, PE_p+k⟩ varies over the starting position p by at most {dots.max_spread:.1e}.")
frame.text(LESSON, "dot")

st.header("Moving k positions is one rotation: PE[p+k] = M_k PE[p]")
k = st.slider("offset k (positions)", 1, length // 2 - 1, min(5, length // 2 - 1), key="sin-k")
shift = caching.cached(lesson.shift_view, k=k, **knobs)
blocks, matrix = frame.chart_row(600, 410)
blocks.dataframe(shift.blocks, hide_index=True)
blocks.caption(f"Largest entry of M_{k} outside the 2x2 blocks: {shift.off_block_max:g}.")
with matrix:
    frame.chart(shift.matrix_chart, numbers=True)
error, plus, minus = frame.row(3)
error.metric(
    "max |PE[p+k] − M_k PE[p]|",
    f"{shift.max_error:.1e}",
    help=f"over all {shift.positions_checked} positions p and all {d_model} columns",
)
if frame.predict(LESSON, "sign-of-offset", reveal_after=True):  # the two dot products answer it
    plus.metric(f"⟨PE_{k}, PE_{2 * k}⟩ (offset +{k})", f"{shift.dot_plus:.6f}")
    minus.metric(f"⟨PE_{k}, PE_0⟩ (offset −{k})", f"{shift.dot_minus:.6f}")
frame.text(LESSON, "shift")

frame.lesson_footer(LESSON)
