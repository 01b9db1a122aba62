"""Lesson: context extension, 4K to 1M. Wavelengths, schedules side by side, flagged pairs."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import context_extension as lesson

LESSON = "context-extension"
FACTORS = [1, 2, 4, 8, 16, 32, 64, 128, 256]

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

head, base, trained, factor = st.columns(4)
head_dim = head.select_slider("head dimension D", options=[32, 64, 128, 256], value=128, key="ext-d")
rope_base = base.select_slider("base b", options=[10_000, 100_000, 500_000, 1_000_000], value=10_000, key="ext-base")
original_len = trained.select_slider("training length L", options=[2_048, 4_096, 8_192], value=4_096, key="ext-length")
scale = factor.select_slider("scale factor s", options=FACTORS, value=256, key="ext-factor")

view = caching.cached(
    lesson.extension_view, head_dim=head_dim, base=float(rope_base), original_len=original_len, factor=scale
)
target, slow, first, ramps = frame.row(4)
target.metric("target length T = s L", f"{view.target_len:,}")
slow.metric("slow pairs (wavelength > L)", f"{view.slow_pairs} of {head_dim // 2}")
first.metric("first slow pair", "none" if view.first_slow_pair is None else f"i = {view.first_slow_pair}")
ramps.metric("YaRN: code's ramp vs paper's, largest θ′ ratio", f"{view.yarn_ramp_ratio:.2f}×")

frame.chart(view.wavelength_chart, numbers=True)
frame.chart(view.angle_chart, numbers=True)
st.header("Pairs whose angle at T leaves the trained range")
st.dataframe(
    view.flags,
    hide_index=True,
    column_config={
        "largest angle ratio, slow pairs": st.column_config.NumberColumn(format="%.3g"),
        "attention scale": st.column_config.NumberColumn("q and k scale", format="%.3f"),
    },
)
frame.text(LESSON, "schedules")
frame.text(LESSON, "scale")

frame.lesson_footer(LESSON)
