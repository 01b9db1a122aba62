"""Code: the source lesson's equivariance demo with the student's tokens, width, permutation and seed."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import code_demo as demo
from poslab.viz import permutation as perm

LESSON = "code"

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")

sizes, choices = st.columns(2)
n_tokens = sizes.slider("Tokens T", 2, 8, 4, key="code-n")
d_model = sizes.select_slider("Width d", [2, 4, 8, 16, 32, 64], value=8, key="code-d")
seed = choices.number_input("torch.manual_seed", 0, 9999, 0, key="code-seed")
typed = choices.text_input(
    "Permutation: order[i] = token that moves to slot i",
    perm.format_order(demo.default_order(n_tokens)),
    key=f"code-order-{n_tokens}",
)
tolerance = st.radio("Tolerance of the check", list(demo.TOLERANCES), horizontal=True, key="code-tol")
positional = st.toggle("Break it: add a positional encoding", key="code-pe")

try:
    order = perm.parse_order(typed, n_tokens)
except perm.PermutationError as error:
    st.error(str(error), icon=":material/error:")
else:
    settings = dict(
        n_tokens=n_tokens, d_model=d_model, order=order, seed=int(seed), tolerance=tolerance, positional=positional
    )
    result = caching.cached(demo.run_demo, **settings)
    # Plain, without line numbers: Streamlit 1.67 draws Python tokens and line numbers in fixed
    # palette greys and blues below 4.5:1 contrast, and no theme option reaches them.
    st.code(demo.demo_source(**settings), language=None)
    st.caption("Output")
    st.code(result.output_line, language="text")
    numbers = frame.row(3)
    numbers[0].metric("max |P·attn(X) − attn(PX)|", f"{result.max_difference:.2e}")
    numbers[1].metric("tolerance: atol, rtol", f"{result.atol:g}, {result.rtol:g}")
    numbers[2].metric("allowance used (≤ 1 prints True)", f"{result.allowance_used:.3g}")
    left, right = frame.chart_row(400, 610)
    with left:
        frame.chart(demo.permutation_chart(result), numbers=True)
    with right:
        frame.chart(demo.difference_chart(result), numbers=True)

frame.text(LESSON, "walkthrough")
frame.text(LESSON, "tolerance")
frame.text(LESSON, "break-it")
frame.text(LESSON, "takeaway")
frame.lesson_footer(LESSON)
