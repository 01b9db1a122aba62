"""Lesson: attention entropy and temperature. Why long contexts flatten attention, and the logit scalings against it."""

import math

import streamlit as st

from app_pages.ui import caching, frame
from poslab.model_configs import llama4_temperature
from poslab.viz import temperature as lesson

LESSON = "attention-temperature"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "needle-halves")
st.header("One needle among n keys")
trained, spread_column, margin_column = st.columns(3)
train_len = trained.select_slider(
    "training length L (keys)", [1_024, 2_048, 4_096, 8_192], value=4_096, format_func="{:,}".format, key="at-train"
)
spread = spread_column.select_slider("distractor spread", [0.5, 1.0, 1.5, 2.0], value=1.0, key="at-spread")
margin = margin_column.select_slider("needle margin (logits)", [2.0, 4.0, 6.0, 8.0, 10.0], value=8.0, key="at-margin")
view = caching.cached(lesson.temperature_view, train_len=train_len, spread=spread, margin=margin)
keys = st.select_slider(
    "keys n, for the numbers below", lesson.LENGTHS, value=lesson.LENGTHS[-1], format_func="{:,}".format, key="at-keys"
)
at_n = view.frame[view.frame["keys"] == keys].set_index("scheme")
entropy, maximum = frame.row(2)
entropy.metric("entropy without scaling (nats)", f"{at_n.loc['none', 'entropy']:.2f}")
maximum.metric("its maximum, ln n (uniform weights)", f"{math.log(keys):.2f}")
for column, scheme in zip(frame.row(len(lesson.SCHEMES)), lesson.SCHEMES):
    column.metric(
        f"needle weight, {scheme}",
        f"{at_n.loc[scheme, 'needle weight']:.4f}",
        help=f"logits multiplied by {at_n.loc[scheme, 'multiplier']:.3f}",
    )
frame.chart(view.needle_chart, numbers=True)
frame.text(LESSON, "schemes")

frame.predict(LESSON, "yarn-square")
st.header("How much each scheme sharpens")
frame.chart(view.multiplier_chart, numbers=True)
config = llama4_temperature()
scale, floor, longest = frame.row(3)
scale.metric("Llama 4 attn_scale", f"{config.attn_scale:g}")
floor.metric("Llama 4 floor_scale", f"{config.floor_scale:,}")
longest.metric("Llama 4 factor at 10,485,760 tokens", f"{lesson.multiplier('Llama 4', 10_485_760, train_len):.3f}")
st.caption(f"From the config.json of {config.source}; checked against {config.checked}.")
frame.text(LESSON, "llama4")

frame.lesson_footer(LESSON)
