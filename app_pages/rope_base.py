"""Lesson: RoPE's base and the context length. Full turns within L, the critical dimension, Men et al.'s bound, real configs."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import rope_base as lesson

LESSON = "rope-base"
BASES = [10_000, 500_000, 1_000_000, 5_000_000]
LENGTHS = [2_048, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072]
BOUND_UP_TO = 16_384  # the base bound searches many bases: about a second at 8K-16K, too slow beyond


def length_label(length: int) -> str:
    return f"{length // 1024}K"


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.predict(LESSON, "larger-base-turns")

st.header("Which pairs turn fully within L")
dim_column, base_column, length_column = st.columns(3)
head_dim = dim_column.selectbox("head dimension D", [64, 128], index=1, key="base-head-dim")
base = base_column.selectbox("base b", BASES, format_func=lambda b: f"{b:,}", key="base-b")
context_len = length_column.select_slider("context length L", LENGTHS, value=8_192, format_func=length_label,
                                          key="base-length")

frame.chart(caching.cached(lesson.turns_chart, head_dim=head_dim, base=float(base), context_len=context_len),
            numbers=True)
summary = caching.cached(lesson.turns_summary, head_dim=head_dim, base=float(base), context_len=context_len)
turned, critical, slowest = st.columns(3)
turned.metric("pairs with a full turn within L", f"{summary.full_turn_pairs} of {summary.pairs}")
critical.metric("critical dimension d_extra (features)", f"{summary.critical_dimension} of {head_dim}")
slowest.metric("slowest wavelength (positions)", f"{summary.slowest_wavelength:,.0f}")
frame.text(LESSON, "critical")
frame.text(LESSON, "abf")

frame.predict(LESSON, "margin-zero")
st.header("The base a length needs")
frame.chart(caching.cached(lesson.margin_chart, head_dim=head_dim, base=float(base), context_len=context_len),
            numbers=True)
negative = caching.cached(lesson.first_negative, head_dim=head_dim, base=float(base), max_distance=context_len)
dips, bound = st.columns(2)
dips.metric("first distance with B(m) < 0", "none up to L" if negative is None else f"{negative:,}")
if context_len <= BOUND_UP_TO:
    lower_bound = caching.cached(lesson.base_lower_bound, context_len=context_len)
    bound.metric(f"smallest base with B(m) >= 0 up to {length_label(context_len)} (D = 128)", f"{lower_bound:,.0f}")
else:
    bound.caption(f"The base bound is computed here up to L = {length_label(BOUND_UP_TO)}: beyond, the search "
                  "takes too long for a page. Men et al. (2024) tabulate it for longer contexts.")
frame.text(LESSON, "bound")

frame.predict(LESSON, "llama31-scaling")
st.header("What real models use")
st.table(caching.cached(lesson.real_configs).set_index("model"))  # a table, not a grid: its sources wrap, uncut
frame.text(LESSON, "configs")

frame.lesson_footer(LESSON)
