"""External links: the primary sources and the best explanations, each with what to read it for."""

import streamlit as st

from app_pages.ui import frame
from poslab import references
from poslab.lessons import get_lesson

LESSON = "links"
KIND_LABELS = {"paper": "Papers", "explanation": "Explanations"}

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

kind = st.segmented_control("Kind", list(KIND_LABELS), format_func=KIND_LABELS.get, key="links-kind")
topic = st.pills("Lesson", references.topics(), format_func=lambda i: get_lesson(i).title, key="links-topic")
chosen = references.select_readings(kind=kind, topic=topic)
st.caption(f"Showing {len(chosen)} of {len(references.readings())} sources.")
for label in references.KINDS:
    group = [reading for reading in chosen if reading.kind == label]
    if group:
        st.header(KIND_LABELS[label])
        st.markdown("\n".join(reading.markdown for reading in group))

frame.text(LESSON, "how-to-read")
frame.lesson_footer(LESSON)
