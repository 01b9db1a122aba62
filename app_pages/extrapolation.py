"""Lesson: the extrapolation lab. Train short, test long: shipped results, a live quick run, a reading."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import extrapolation as lesson

LESSON = "extrapolation"
LIVE_KEY = "extrapolation-live"  # session_state: the last live quick run's view


def show(view: lesson.ExtrapolationView) -> None:
    frame.chart(view.chart)  # its numbers are the results table below it
    st.markdown(view.reading)
    st.dataframe(view.table, hide_index=True)
    st.caption(view.provenance)


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.text(LESSON, "task")

shipped = caching.cached(lesson.shipped_view)
st.header("Accuracy against test length")
frame.text(LESSON, "method")
# One under the other, full width: side by side, the results table cut its longest columns off.
show(shipped)

with st.container():
    frame.text(LESSON, "live")
    seed = st.number_input("seed", min_value=0, max_value=999, value=0, step=1, key="extrapolation-seed")
    st.caption(shipped.quick_estimate)
    if st.button("Run the quick mode live", key="extrapolation-run", type="primary"):
        with st.status("Training five small models...", expanded=True) as status:
            bar = st.progress(0.0, text="starting")
            st.session_state[LIVE_KEY] = lesson.quick_run_view(
                int(seed), on_progress=lambda done, message: bar.progress(done, text=message))
            status.update(label="Quick run finished", state="complete", expanded=False)
    if LIVE_KEY in st.session_state:
        show(st.session_state[LIVE_KEY])

frame.text(LESSON, "why")
frame.lesson_footer(LESSON)
