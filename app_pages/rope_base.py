"""Lesson: RoPE's base and the context length. Full turns within L, the critical dimension, Men et al.'s bound
and the stricter value beside it, published configurations."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import rope_base as lesson
from poslab.viz import rope_base_bound as base_bound

LESSON = "rope-base"
BASES = [10_000, 500_000, 1_000_000, 5_000_000]
LENGTHS = [2_048, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072]
BOUND_UP_TO = 16_384  # the base sweep checks hundreds of bases: a fraction of a second at 8K, too slow past 16K


def length_label(length: int) -> str:
    return f"{length // 1024}K"


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.predict(LESSON, "larger-base-turns")

st.header("Which pairs turn fully within L")
dim_column, base_column, length_column = st.columns(3)
head_dim = dim_column.selectbox("head dimension D", [64, 128], index=1, key="base-head-dim")
base = base_column.selectbox("base b", BASES, format_func=lambda b: f"{b:,}", key="base-b")
context_len = length_column.select_slider(
    "context length L", LENGTHS, value=8_192, format_func=length_label, key="base-length"
)

frame.chart(
    caching.cached(lesson.turns_chart, head_dim=head_dim, base=float(base), context_len=context_len), numbers=True
)
summary = caching.cached(lesson.turns_summary, head_dim=head_dim, base=float(base), context_len=context_len)
turned, critical, slowest = frame.row(3)
turned.metric("pairs with a full turn within L", f"{summary.full_turn_pairs} of {summary.pairs}")
critical.metric("critical dimension d_extra (features)", f"{summary.critical_dimension} of {head_dim}")
slowest.metric("slowest wavelength (positions)", f"{summary.slowest_wavelength:,.0f}")
frame.text(LESSON, "critical")
frame.text(LESSON, "abf")

frame.predict(LESSON, "margin-zero")
st.header("The base a length needs")
frame.chart(
    caching.cached(lesson.margin_chart, head_dim=head_dim, base=float(base), context_len=context_len), numbers=True
)
negative = caching.cached(lesson.first_negative, head_dim=head_dim, base=float(base), max_distance=context_len)
st.metric("first distance with B(m) < 0, for this base", "none up to L" if negative is None else f"{negative:,}")
frame.text(LESSON, "bound")

frame.predict(LESSON, "bound-monotone")
st.header("Which bases pass: the bound and the stricter value")
if context_len <= BOUND_UP_TO:
    bound = caching.cached(base_bound.base_bound, context_len=context_len, head_dim=head_dim)
    first, every, failing = frame.row(3)
    first.metric(
        f"first base that passes up to {length_label(context_len)} (Men et al.'s bound)", f"{bound.first_crossing:,.0f}"
    )
    every.metric(
        "from here up, every base passes",
        f"{bound.every_base_above:,.0f}",
        help=f"Checked on the grid up to {bound.checked_up_to:,.0f}, {base_bound.CHECK_SPAN:g} times the first crossing.",
    )
    failing.metric("bases above the first crossing that fail", f"{bound.failing_above_first}")
    frame.chart(bound.chart, numbers=True)
else:
    st.caption(
        f"The base sweep is computed here up to L = {length_label(BOUND_UP_TO)}: beyond, it takes too long "
        "for a page. Men et al. (2024) plot the bound for longer contexts."
    )
frame.text(LESSON, "bound-sweep")

frame.predict(LESSON, "llama31-scaling")
st.header("What real models use")
st.table(caching.cached(lesson.real_configs).set_index("model"))  # a table, not a grid: its cells wrap, uncut
st.subheader("Where each row comes from")
st.table(caching.cached(lesson.real_config_sources).set_index("model"))
frame.text(LESSON, "configs")

frame.lesson_footer(LESSON)
