"""Lesson: non-uniform and hybrid schemes. LongRoPE's factors, Gemma 3's two kinds of layers, Llama 4's NoPE layers."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.model_configs import longrope_factors
from poslab.viz import hybrid as lesson
from poslab.viz import rope_base

LESSON = "hybrid-schemes"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "longrope-switch")
st.header("LongRoPE: a factor per pair")
longrope = caching.cached(lesson.longrope_view)
(scale, attention), (slow, ratio) = st.columns(2), st.columns(2)
scale.metric(
    "uniform factor s", f"{longrope.scale:g}", help="max_position_embeddings / original_max_position_embeddings"
)
attention.metric(
    "attention factor", f"{longrope.attention_factor:.4f}", help="√(1 + ln s / ln L), L the original length"
)
slow.metric("slow pairs", f"{longrope.slow_pairs}", help="pairs whose wavelength exceeds the original length")
ratio.metric(
    "smallest slow-pair angle ratio",
    f"{longrope.smallest_slow_ratio:.3f}",
    help="the angle a slow pair reaches at the full length, over the largest it saw in training",
)
frame.chart(longrope.chart, numbers=True)
st.caption(f"Factors from the config.json of {longrope_factors().source}.")
frame.text(LESSON, "longrope")

frame.predict(LESSON, "gemma-cache")
st.header("Gemma 3: local and global layers")
context = st.select_slider(
    "context length (tokens)",
    [1_024, 4_096, 32_768, 131_072],
    value=131_072,
    format_func="{:,}".format,
    key="hy-context",
)
gemma = caching.cached(lesson.gemma_view, context=context)
(local, cache), (turns, slow_global) = st.columns(2), st.columns(2)
local.metric("local : global layers", f"{gemma.local_layers} : {gemma.global_layers}")
cache.metric("KV cache vs all global", f"{gemma.cache_ratio:.1%}", help=f"at {context:,} tokens")
turns.metric(
    "local pairs, full turn in window",
    f"{gemma.local_full_turn_pairs} of {gemma.pairs}",
    help=f"base 10,000 pairs whose wavelength fits within the window of {gemma.window:,}",
)
slow_global.metric(
    "global pairs slower than 128K",
    f"{gemma.global_pairs_past_context} of {gemma.pairs}",
    help="base 1,000,000 pairs, scaled by 8, whose wavelength exceeds the 131,072-token context",
)
frame.chart(gemma.chart)
frame.text(LESSON, "gemma")

frame.predict(LESSON, "chunk-distance")
st.header("Llama 4: NoPE layers beside chunked RoPE layers")
length, chunk = st.columns(2)
seq_len = length.slider("sequence drawn (tokens)", 8, 48, 24, step=4, key="hy-seq")
chunk_size = chunk.slider("chunk size (tokens; Llama 4: 8,192)", 2, 16, 8, key="hy-chunk")
llama4 = caching.cached(lesson.llama4_view, seq_len=seq_len, chunk=chunk_size)
rope, chunk_metric, distance = st.columns(3)
rope.metric(
    "RoPE : NoPE layers",
    f"{llama4.rope_layers} : {llama4.nope_layers}",
    help="RoPE layers attend in chunks; NoPE layers attend to everything",
)
chunk_metric.metric("attention_chunk_size", f"{llama4.chunk:,}")
distance.metric(
    "max RoPE distance",
    f"{llama4.largest_rope_distance:,}",
    help=f"the longest query-key distance any RoPE layer sees, even at {llama4.context:,} tokens",
)
frame.chart(llama4.layer_chart)
left, right = st.columns(2)
with left:
    frame.chart(llama4.chunk_chart, numbers=True)
with right:
    frame.chart(llama4.sliding_chart, numbers=True)
frame.text(LESSON, "llama4")

st.header("The configurations")
st.table(caching.cached(rope_base.real_configs).set_index("model"))
st.subheader("Where each row comes from")
st.table(caching.cached(rope_base.real_config_sources).set_index("model"))
frame.text(LESSON, "configs")

frame.lesson_footer(LESSON)
