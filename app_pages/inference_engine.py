"""Lesson: positions in an inference engine. A tiny RoPE layer decoded with a KV cache, each rule kept and broken."""

import streamlit as st

from app_pages.ui import caching, frame
from app_pages.ui.rule_metrics import show_rules
from poslab.viz import inference_engine as lesson

LESSON = "inference-engine"


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "raw-or-rotated")
st.header("Rotate before caching, or at read")
steps = st.slider("tokens decoded", 4, 32, 16, key="ie-steps")
modes = caching.cached(lesson.cache_mode_view, seq_len=steps)
show_rules(modes, "cache raw, rotate at read", "broken: rotated twice (once more at read)")
st.caption(f"Rotate, then cache: max error {modes.largest['rotate, then cache']:.1e}.")
frame.text(LESSON, "cache-modes")

frame.predict(LESSON, "padding-position")
st.header("Left padding in a batch")
short, new = st.columns(2)
shortest = short.slider("shortest prompt (tokens; the longest has 9)", 1, 9, 5, key="ie-prompt")
new_tokens = new.slider("tokens generated", 1, 12, 6, key="ie-new")
padding = caching.cached(lesson.padding_view, prompt_lengths=(9, shortest), new_tokens=new_tokens)
show_rules(padding, "next position from the attention mask", "broken: next position = cache length")
st.caption(
    f"One frame counting the padding, prefill and decode: max error "
    f"{padding.largest['one frame counting the padding, prefill and decode']:.1e}."
)
frame.text(LESSON, "padding")

frame.predict(LESSON, "rolling-position")
st.header("A rolling buffer for a sliding window")
window = st.slider("window W (buffer slots)", 2, 12, 6, key="ie-window")
rolling = caching.cached(lesson.rolling_view, seq_len=24, window=window)
show_rules(rolling, "position tracked apart from the buffer", "broken: position = number of cached keys")
frame.text(LESSON, "rolling")

st.header("Attention sinks and StreamingLLM")
sinks_column, recent_column = st.columns(2)
sinks = sinks_column.slider("sink tokens kept", 1, 4, 4, key="ie-sinks")
recent = recent_column.slider("recent tokens kept", 2, 16, 8, key="ie-recent")
stream = caching.cached(lesson.streaming_view, seq_len=48, sinks=sinks, recent=recent)
show_rules(
    stream,
    "re-indexed inside the cache (StreamingLLM)",
    "broken: positions of the original text",
    unit="largest distance",
)
frame.text(LESSON, "streaming")

st.header("Dynamic scaling with a cache")
trained = st.slider("training length L (tokens)", 4, 20, 12, key="ie-trained")
dynamic = caching.cached(lesson.dynamic_view, seq_len=24, original_len=trained)
show_rules(dynamic, "cache raw keys, rotate at read", "broken: keys rotated once, with their step's frequencies")
frame.text(LESSON, "dynamic")

frame.lesson_footer(LESSON)
