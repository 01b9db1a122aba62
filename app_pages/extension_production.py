"""Lesson: extension in production. Staged continued pre-training, the cost of a long token, PoSE, what extension buys."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import production as lesson

LESSON = "extension-production"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
st.table(caching.cached(lesson.recipes_table).set_index("recipe"))  # a table: its sources and sentences wrap, uncut
frame.text(LESSON, "recipes")

frame.predict(LESSON, "long-token-cost")
st.header("What a long token costs")
model_column, from_column, to_column = st.columns(3)
model = model_column.selectbox("model", list(lesson.COST_MODELS), key="ep-model")
original = from_column.select_slider(
    "original length", [2_048, 4_096, 8_192, 32_768], value=8_192, format_func="{:,}".format, key="ep-from"
)
target = to_column.select_slider(
    "target length", [32_768, 131_072, 262_144, 1_048_576], value=131_072, format_func="{:,}".format, key="ep-to"
)
cost = caching.cached(lesson.cost_view, model=model, original_len=original, target_len=target)
ratio, share = frame.row(2)
ratio.metric(
    "cost of a long token, against a short one",
    f"{cost.cost_ratio:.2f}×",
    help=f"FLOPs per token at {target:,} over FLOPs per token at {original:,}",
)
share.metric(
    "attention's share at the target length",
    f"{cost.attention_share:.0%}",
    help=f"of the FLOPs per token at {target:,}",
)
frame.chart(cost.chart, numbers=True)
frame.text(LESSON, "cost")

frame.predict(LESSON, "pose-what")
st.header("PoSE: long positions in a short window")
window_column, target_column, chunks_column = st.columns(3)
window = window_column.select_slider("training window W", [16, 32, 64], value=64, key="ep-window")
pose_target = target_column.select_slider("target length T", [256, 1_024, 4_096], value=1_024, key="ep-target")
chunks = chunks_column.select_slider("chunks", [2, 3, 4], value=2, key="ep-chunks")
examples = st.slider("training examples sampled", 1, 400, 100, key="ep-examples")
pose = caching.cached(lesson.pose_view, window=window, target=pose_target, chunks=chunks, examples=examples)
covered, plain, largest = frame.row(3)
covered.metric("PoSE: distances trained", f"{pose.pose_coverage:.1%}", help="share of the distances 1 to T - 1")
plain.metric(
    "plain window: distances trained",
    f"{pose.plain_coverage:.1%}",
    help=f"the same share, for ordinary training in a window of {window}",
)
largest.metric("largest position id", f"{pose.largest_position:,}")
frame.chart(pose.chart, numbers=True)
frame.text(LESSON, "pose")

frame.text(LESSON, "buys")
frame.lesson_footer(LESSON)
