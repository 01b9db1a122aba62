"""Lesson: Relative position biases. Shaw's clip, T5's buckets and the bias they give, ALiBi's line past the last bucket."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import relative_bias as lesson

LESSON = "relative-bias"
N_HEADS = 4  # heads of the random stand-in table

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.predict(LESSON, "causal-later-keys")

st.header("T5's bucket map")
buckets_column, distance_column = st.columns(2)
num_buckets = buckets_column.selectbox("number of buckets", [8, 16, 32, 64], index=2, key="rb-buckets")
max_distance = distance_column.selectbox("maximum distance", [20, 64, 128, 256, 512], index=2, key="rb-max-distance")
bidirectional = st.toggle(
    "bidirectional (an encoder)", value=True, key="rb-bidirectional", help="Off: causal, as in a decoder."
)
reach = st.slider("relative positions shown: from -reach to reach", 50, 1_000, 300, step=10, key="rb-reach")
frame.chart(
    caching.cached(
        lesson.bucket_chart,
        num_buckets=num_buckets,
        max_distance=max_distance,
        bidirectional=bidirectional,
        reach=reach,
    ),
    numbers=True,
)
st.caption("Which distances back (key before the query, j - i <= 0) share each bucket:")
st.dataframe(
    caching.cached(
        lesson.bucket_ranges, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional
    ),
    hide_index=True,
)
frame.text(LESSON, "buckets")

st.header("The bias matrix")
length_column, head_column, seed_column = st.columns(3)
seq_len = length_column.slider("sequence length (tokens)", 8, 64, 32, key="rb-seq-len")
head = head_column.selectbox("head", list(range(N_HEADS)), key="rb-head")
seed = seed_column.number_input("seed of the random table", 0, 10_000, 0, key="rb-seed")
frame.chart(
    caching.cached(
        lesson.bias_matrix_chart,
        num_buckets=num_buckets,
        max_distance=max_distance,
        bidirectional=bidirectional,
        seq_len=seq_len,
        head=head,
        n_heads=N_HEADS,
        seed=int(seed),
    ),
    numbers=True,
)
frame.text(LESSON, "bias")

frame.predict(LESSON, "far-keys")
st.header("Past the maximum distance")
saturated = caching.cached(
    lesson.saturation, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional, reach=1_000
)
first, shared = frame.row(2)
direction = "bidirectional" if bidirectional else "causal"
first.metric(f"first distance back in the last bucket ({direction})", f"{saturated.first_saturated:,}")
shared.metric(f"distances 0..{saturated.reach:,} back sharing it", f"{saturated.distances_in_last_bucket:,}")
frame.chart(
    caching.cached(
        lesson.distance_profile_chart,
        num_buckets=num_buckets,
        max_distance=max_distance,
        reach=reach,
        head=head,
        n_heads=N_HEADS,
        seed=int(seed),
    ),
    numbers=True,
)
st.caption(
    f"A causal head (as in a decoder) of the same table: T5's {num_buckets} buckets against ALiBi's slope "
    f"for head {head} of {N_HEADS}."
)
frame.text(LESSON, "past-max")

st.header("Shaw's clip")
clip = st.slider("clipping distance k", 1, 16, 4, key="rb-clip")
frame.chart(caching.cached(lesson.shaw_chart, clip=clip, reach=32), numbers=True)
frame.text(LESSON, "shaw")

frame.lesson_footer(LESSON)
