"""Lesson: learned positional embeddings. The table, a tiny fit, and the wall at max_len."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import learned as lesson

LESSON = "learned"
FIT_KEY = "learned-fit-settings"  # the settings of the last fit the student asked for
FIT_SHAPE = dict(max_len=64, d_model=16)  # the toy table: small enough to train in about a second

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

st.header("One row per position")
left, right = st.columns(2)
max_len = left.select_slider(
    "max_len (rows)", options=[32, 64, 128, 512, 1024, 2048], value=1024, key="learned-max-len"
)
d_model = right.select_slider("d (width)", options=[16, 64, 256, 768, 1024], value=768, key="learned-d")
st.metric(
    "Numbers in the position table",
    f"{lesson.parameter_count(max_len, d_model):,}",
    help=f"{max_len} rows x {d_model} columns, every one trained",
)
frame.text(LESSON, "table")

st.header("A tiny fit: learn positions from a recency task")
frame.text(LESSON, "fit")
with st.form("learned-fit"):
    left, middle, right = st.columns(3)
    train_len = left.slider("train_len (rows used in training)", 8, 56, 48, step=8, key="learned-train-len")
    steps = middle.select_slider("steps", options=[100, 200, 300, 500], value=300, key="learned-steps")
    seed = right.number_input("seed", 0, 99, 0, key="learned-seed")
    if st.form_submit_button("Train (a second or so)", type="primary"):
        st.session_state[FIT_KEY] = dict(FIT_SHAPE, train_len=train_len, steps=steps, seed=int(seed))

settings = st.session_state.get(FIT_KEY)
if settings is None:
    st.info(
        f"Press **Train** to fit a {FIT_SHAPE['max_len']} x {FIT_SHAPE['d_model']} table; the result is "
        "cached, so the same settings are instant."
    )
else:
    fit = caching.cached(lesson.fit_view, **settings)
    st.caption(
        f"Showing the fit for train_len = {settings['train_len']}, {settings['steps']} steps, seed {settings['seed']}."
    )
    learned, sinusoidal = frame.chart_row(510, 510)
    with learned:
        frame.chart(fit.learned_table, numbers=True)
        frame.chart(fit.learned_similarity, numbers=True)
    with sinusoidal:
        frame.chart(fit.sinusoidal_table, numbers=True)
        frame.chart(fit.sinusoidal_similarity, numbers=True)
    loss, trained, untrained, neighbours = frame.row(4)
    loss.metric("final excess loss (nats)", f"{fit.final_excess_loss:.1e}")
    trained.metric("mean row norm, trained rows", f"{fit.trained_row_norm:.3f}")
    untrained.metric("mean row norm, unused rows", f"{fit.untrained_row_norm:.3f}")
    neighbours.metric(
        "similarity of rows p, p+1",
        f"{fit.neighbour_similarity:.3f}",
        help=f"rows p and p + train_len/2: {fit.distant_similarity:.3f}",
    )
    frame.chart(fit.loss_chart, numbers=True)

st.header("Past max_len")
left, right = st.columns(2)
table_rows = left.slider("table rows (max_len)", 8, 64, 32, key="learned-wall-max-len")
seq_len = right.slider("input length (tokens)", 1, 128, 40, key="learned-wall-seq-len")
outcome = lesson.look_up(table_rows, seq_len)
if outcome.ok:
    st.success("Runs: " + outcome.message, icon=":material/check:")
else:
    # The refusal is the lesson's point, not a crash: say so before showing the error itself.
    st.info(
        f"**This is the wall.** A {table_rows}-row table has no row for positions {table_rows} to {seq_len - 1}, "
        f"so the embedding refuses the {seq_len}-token input, as it should. It raises:\n\n"
        f"`ValueError: {outcome.message}`",
        icon=":material/block:",
    )
frame.text(LESSON, "past-max-len")

frame.lesson_footer(LESSON)
