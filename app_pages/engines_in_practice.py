"""Lesson: positions in real engines. Context shift, Phi-3's switch, dynamic NTK in two engines, KV memory."""

import streamlit as st

from app_pages.ui import caching, frame
from app_pages.ui.rule_metrics import show_rules
from poslab.viz import engine_practice as lesson

LESSON = "engines-in-practice"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "shift-layers")
st.header("llama.cpp's context shift")
keep_column, discard_column = st.columns(2)
keep = keep_column.slider("tokens kept at the start", 1, 8, 4, key="ep-keep")
discard = discard_column.slider("tokens evicted after them", 1, 12, 8, key="ep-discard")
errors = caching.cached(lesson.context_shift, seq_len=24, keep=keep, discard=discard)
first, upper = frame.row(2)
first.metric("layer 0: shifted vs recomputed keys", f"{errors[0]:.1e}")
upper.metric("upper layers: largest difference", f"{max(errors[1:]):.1e}")
frame.chart(lesson.shift_chart(errors, keep, discard), numbers=True)
frame.text(LESSON, "shift")

st.header("Phi-3's switch against the cache")
original = st.slider("original length L (short factors up to it)", 4, 16, 10, key="ep-original")
phi3 = caching.cached(lesson.phi3_view, seq_len=20, original_len=original)
show_rules(phi3, *lesson.PHI3_RULES)
frame.text(LESSON, "phi3")

st.header("Dynamic NTK in Hugging Face and in vLLM")
factor = st.select_slider("scale factor s", [2.0, 4.0, 8.0], value=2.0, key="ep-factor")
bases = caching.cached(lesson.dynamic_bases, original_len=4096, factor=factor)
frame.chart(lesson.dynamic_chart(bases, 4096, factor), numbers=True)
frame.text(LESSON, "dynamic")

st.header("DeepSeek's MLA")
frame.text(LESSON, "mla")

frame.predict(LESSON, "prefix-cache")
st.header("KV memory per token")
context = st.select_slider(
    "context length (tokens)", [8_192, 32_768, 131_072], value=32_768, format_func="{:,}".format, key="ep-context"
)
st.table(caching.cached(lesson.kv_memory_table, context=context).set_index("model"))
frame.text(LESSON, "memory")

frame.lesson_footer(LESSON)
