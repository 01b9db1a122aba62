"""Lesson: the extrapolation lab. Train short, test long: accuracy, perplexity, a passkey probe,
RoPE stretched at test time and a two-hop probe with its effective length, for the shipped results
and for a live quick run in a process of its own."""

import time

import streamlit as st

from app_pages.runtime.run_gate import page_runs
from app_pages.ui import caching, frame
from poslab.experiments.config import LiveQuickRun
from poslab.experiments.lab_runner import LabProgress, QuickRunFailed, QuickRuns
from poslab.viz import extrapolation as lesson

LESSON = "extrapolation"
LIVE_KEY = "extrapolation-live"  # session_state: the last live quick run's view and its wall time


@st.cache_resource(show_spinner=False)
def quick_runs() -> QuickRuns:
    """One per app process: its sessions share the slots and the last run's time."""
    return QuickRuns(live=LiveQuickRun.from_env())


def show_lengths(view: lesson.ExtrapolationView) -> None:
    st.subheader("Accuracy against test length")
    frame.chart(view.accuracy_chart)  # its numbers are the results table below it
    st.markdown(view.reading)
    st.table(view.table.set_index("encoding"))  # a static table wraps its cells: no column cut off at 800 px
    st.subheader("Perplexity against test length")
    if view.perplexity_chart is not None:
        frame.chart(view.perplexity_chart)
    st.markdown(view.perplexity_reading)
    st.table(view.perplexity_table.set_index("encoding"))


def show_probe(view: lesson.ExtrapolationView, key: str) -> None:
    st.subheader("Passkey retrieval")
    if view.passkey_charts:
        lengths = sorted(view.passkey_charts)
        length = st.select_slider(
            "test length for the chart (tokens)",
            options=lengths,
            value=lengths[-1],
            key=f"extrapolation-probe-length-{key}",
        )
        frame.chart(view.passkey_charts[length])
    st.markdown(view.probe_reading)
    if view.probe_table is not None:
        st.table(view.probe_table.set_index(["encoding", "needle depth"]))
    if view.distance_charts:
        st.subheader("Retrieval against distance")
        frame.text(LESSON, "distance")
        arms = list(view.distance_charts)
        arm = st.selectbox(
            "arm", arms, index=arms.index("RoPE") if "RoPE" in arms else 0, key=f"extrapolation-distance-arm-{key}"
        )
        frame.chart(view.distance_charts[arm])


def show_extension(view: lesson.ExtrapolationView) -> None:
    st.subheader("Effective length")
    st.markdown(view.extension_reading)
    if not view.effective_table.empty:
        st.table(view.effective_table.set_index("arm"))
        st.table(view.scores_table.set_index(["arm", "score"]))


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.text(LESSON, "task")

shipped = caching.cached(lesson.shipped_view)
st.header("Accuracy and perplexity against test length")
frame.text(LESSON, "method")
frame.text(LESSON, "perplexity")
show_lengths(shipped)

st.header("The passkey probe: does it retrieve?")
frame.text(LESSON, "probe")
if frame.predict(LESSON, "perplexity-says-retrieval", reveal_after=True):
    show_probe(shipped, "shipped")
    st.header("Stretching RoPE, and a harder probe")
    frame.text(LESSON, "extension")
    show_extension(shipped)
st.caption(shipped.provenance)

st.header("Run it yourself")
frame.text(LESSON, "live")
runs = quick_runs()
seed = st.number_input("seed", min_value=0, max_value=999, value=0, step=1, key="extrapolation-seed")
estimate = st.empty()  # redrawn once a run of this session finishes: it is then the last one
estimate.caption(lesson.quick_estimate(runs.last, runs.running, runs.slots))
if runs.live.shortened():
    st.caption(runs.live.shortened())
if st.button("Run the quick mode live", key="extrapolation-run", type="primary"):
    models = f"{runs.live.models} small model{'s' if runs.live.models > 1 else ''}"
    with st.status(f"Training and testing {models}...", expanded=True) as status:
        bar = st.progress(0.0, text="starting")

        def on_progress(progress: LabProgress) -> None:
            bar.progress(progress.fraction, text=progress.message)

        started = time.monotonic()
        try:
            with page_runs().let_go():  # a child process trains for seconds: other students' pages go on
                live = lesson.quick_run_view(runs, int(seed), on_progress)
        except QuickRunFailed as error:
            status.update(label="The quick run failed", state="error", expanded=True)
            st.error(
                f"{error}. The shipped results above are unchanged; try again, or run the same command "
                "in a terminal to see its whole output."
            )
        else:
            st.session_state[LIVE_KEY] = (live, time.monotonic() - started)
            status.update(
                label=f"Quick run finished in {st.session_state[LIVE_KEY][1]:.0f} s", state="complete", expanded=False
            )
            estimate.caption(lesson.quick_estimate(runs.last, runs.running, runs.slots))
if LIVE_KEY in st.session_state:
    live, took = st.session_state[LIVE_KEY]
    st.caption(f"Your quick run took {took:.0f} s from the button to the results.")
    show_lengths(live)
    show_probe(live, "live")
    show_extension(live)
    st.caption(live.provenance)

frame.text(LESSON, "why")
frame.lesson_footer(LESSON)
