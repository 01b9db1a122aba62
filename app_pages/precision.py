"""Lesson: precision. Positions and RoPE angles in float32, float16 and bfloat16, and the scores they move."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import precision as lesson

LESSON = "precision"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

frame.predict(LESSON, "bf16-exact")
st.header("Where each format stops being exact")
view = caching.cached(lesson.precision_view)
float16, bfloat16, float32 = frame.row(3)
for column, name in zip((float16, bfloat16, float32), lesson.DTYPES):
    column.metric(f"{name}: every integer exact up to", f"{view.exact[name]:,}")
frame.chart(view.chart, numbers=True)
st.dataframe(
    view.table,
    hide_index=True,
    column_config={
        "from": st.column_config.NumberColumn("positions from", format="%d"),
        "to": st.column_config.NumberColumn("to", format="%d"),
    },
)
errors = caching.cached(lesson.segment_errors)
st.caption("The largest position error in three segments the lesson quotes:")
fp16_4k, fp16_8k, bf16_4k = frame.row(3)
fp16_4k.metric("float16, 4,096–8,191", f"{errors['float16 4096']:g}")
fp16_8k.metric("float16, 8,192–16,383", f"{errors['float16 8192']:g}")
bf16_4k.metric("bfloat16, 4,096–8,191", f"{errors['bfloat16 4096']:g}")
frame.text(LESSON, "positions")

frame.predict(LESSON, "float32-enough")
st.header("What the error does to a score")
offset = st.select_slider(
    "offset between query and key (positions)", [1, 2, 4, 8, 16, 64, 256], value=8, key="pr-offset"
)
scores = caching.cached(lesson.score_view, offset=offset)
st.metric("exact score (any position)", f"{scores.exact:.4f}")
st.table(lesson.score_table(scores).set_index("positions / angles"))
frame.chart(scores.chart, numbers=True)
frame.text(LESSON, "scores")

frame.lesson_footer(LESSON)
