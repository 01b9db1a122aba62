"""The position problem: a permutation lab comparing attn(PX) with P·attn(X), and an RNN."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.viz import permutation as lab

LESSON = "position-problem"
HOW = {"type": "Type an order", "pick": "Pick in order", "shuffle": "Shuffle"}


def pick_order(sentence: str, tokens: tuple[str, ...]) -> tuple[int, ...] | str:
    """The new order, typed, picked or shuffled; or the sentence saying why it is not a permutation."""
    how = st.segmented_control(
        "Reorder by", list(HOW), format_func=HOW.get, default="type", required=True, key="pp-how"
    )
    suggested = lab.suggested_order(sentence, len(tokens))
    try:
        if how == "type":
            typed = st.text_input(
                "New order: slot i gets token order[i]",
                lab.format_order(suggested),
                key=f"pp-order-{sentence}-{len(tokens)}",
            )
            return lab.parse_order(typed, len(tokens))
        if how == "pick":
            picks = st.multiselect(
                "Click the tokens in their new order",
                range(len(tokens)),
                default=suggested,
                format_func=lambda i: f"{i}: {tokens[i]}",
                key=f"pp-picks-{sentence}-{len(tokens)}",
            )
            return lab.order_from_picks(tuple(picks), len(tokens))
        draw = st.session_state.setdefault("pp-draw", 1)
        st.button(
            "Shuffle again",
            icon=":material/shuffle:",
            key="pp-shuffle",
            on_click=lambda: st.session_state.update({"pp-draw": draw + 1}),
        )
        return lab.shuffled_order(len(tokens), draw)
    except lab.PermutationError as error:
        return str(error)


frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.text(LESSON, "lab")


left, right = st.columns([3, 2])
sentence = left.selectbox(
    "Sentence (or type your own)", [*lab.PRESETS, lab.RANDOM_TOKENS], accept_new_options=True, key="pp-sentence"
)
# Shown only when it applies: a disabled slider's faded label would be text below 4.5:1 contrast.
if sentence == lab.RANDOM_TOKENS:
    n_random = right.slider("How many random tokens", 3, 10, 6, key="pp-n-random")
else:
    n_random = st.session_state.get("pp-n-random", 6)
with st.expander("Model settings"):
    d_model = st.select_slider("Embedding size D", [8, 16, 32, 64], value=16, key="pp-d")
    seed = st.number_input("Random seed (embeddings and weights)", 0, 9999, 0, key="pp-seed")

try:
    tokens = lab.sentence_tokens(sentence, n_random)
    picked = pick_order(sentence, tokens)
except lab.PermutationError as error:  # a sentence that gives no tokens to reorder
    tokens, picked = (), str(error)
problem = picked if isinstance(picked, str) else None
order = None if problem else picked

frame.text(LESSON, "toggles")
switches = frame.row(3)
positional = switches[0].toggle("Add a positional encoding", key="pp-positional")
causal = switches[1].toggle("Add a causal mask", key="pp-causal")
pooled = switches[2].toggle("Mean-pool the output", key="pp-pooled")

if problem:
    st.error(problem, icon=":material/error:")
else:
    result = caching.cached(
        lab.equivariance_experiment,
        tokens=tokens,
        order=order,
        d_model=d_model,
        seed=int(seed),
        positional=positional,
        causal=causal,
        pooled=pooled,
    )
    st.markdown(f"**X:** {' '.join(result.tokens)} &nbsp;→&nbsp; **PX:** {' '.join(result.permuted_tokens)}")
    (st.success if result.holds else st.warning)(result.verdict)
    frame.text(LESSON, result.explanation_key)
    heatmaps = caching.cached(lab.comparison_charts, result=result)
    for column, heatmap in zip(frame.chart_row(330, 330, 330), heatmaps):
        with column:
            frame.chart(heatmap, numbers=True)

frame.text(LESSON, "rnn")
if not problem:
    recurrence = caching.cached(lab.recurrence_contrast, tokens=tokens, order=order, d_model=d_model, seed=int(seed))
    # A table, not a grid: at 800 px a grid's columns cut their numbers ("1.75e") and hid one; a table's wrap.
    summary = recurrence.summary()
    st.table(summary.style.format({"max |difference| between the two orders": "{:.2e}"}).hide(axis="index"))
    for column, bars in zip(frame.chart_row(510, 510), caching.cached(lab.contrast_charts, contrast=recurrence)):
        with column:
            frame.chart(bars, numbers=True)
frame.text(LESSON, "takeaway")
frame.lesson_footer(LESSON)
