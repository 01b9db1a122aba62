"""The RNN contrast: a recurrence gets order from its steps, where pooled attention sees none.

Both models summarise a sentence and its permutation in one vector; the RNN's two summaries
differ, mean-pooled attention's do not (without positions).
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd

from poslab.permutation import permutation_matrix
from poslab.viz.common import axis_title
from poslab.viz.permutation.model import TOLERANCE, embed, rnn_final_state, self_attention
from poslab.viz.permutation.orders import validate_order


@dataclass(frozen=True)
class RecurrenceContrast:
    tokens: tuple[str, ...]
    order: tuple[int, ...]
    states: pd.DataFrame  # tidy: model, sentence, unit, value
    rnn_difference: float  # max |h_T(PX) - h_T(X)|
    pooled_attention_difference: float  # max |mean attn(PX) - mean attn(X)|
    tolerance: float = TOLERANCE

    @property
    def rnn_tells_apart(self) -> bool:
        return self.rnn_difference > self.tolerance

    @property
    def attention_tells_apart(self) -> bool:
        return self.pooled_attention_difference > self.tolerance

    def summary(self) -> pd.DataFrame:
        """One row per model: the largest difference and whether it sees the reordering."""
        return pd.DataFrame(
            {
                "model": ["RNN, final hidden state", "attention, mean-pooled, no positions"],
                "max |difference| between the two orders": [self.rnn_difference, self.pooled_attention_difference],
                "tells the two orders apart": [self.rnn_tells_apart, self.attention_tells_apart],
            }
        )


def recurrence_contrast(
    tokens: tuple[str, ...], order: tuple[int, ...], *, d_model: int = 16, seed: int = 0
) -> RecurrenceContrast:
    """Summarise a sentence and its permutation with an RNN and with pooled attention."""
    validate_order(order, len(tokens))
    x = embed(tokens, d_model, seed)
    permuted_x = permutation_matrix(order) @ x
    summaries = {
        "RNN final state": (rnn_final_state(x, seed), rnn_final_state(permuted_x, seed)),
        "attention, mean-pooled": (self_attention(x, seed).mean(0), self_attention(permuted_x, seed).mean(0)),
    }
    sentences = (" ".join(tokens), " ".join(tokens[i] for i in order))
    records = [
        {"model": model, "sentence": sentences[k], "unit": unit, "value": float(state[unit])}
        for model, pair in summaries.items()
        for k, state in enumerate(pair)
        for unit in range(len(state))
    ]
    rnn, pooled = summaries["RNN final state"], summaries["attention, mean-pooled"]
    return RecurrenceContrast(
        tokens=tuple(tokens),
        order=tuple(order),
        states=pd.DataFrame(records),
        rnn_difference=float((rnn[0] - rnn[1]).abs().max()),
        pooled_attention_difference=float((pooled[0] - pooled[1]).abs().max()),
    )


def contrast_charts(contrast: RecurrenceContrast) -> tuple[alt.Chart, alt.Chart]:
    """Grouped bars, one chart per model: its summary vector for the original and the permuted order."""
    charts = []
    for model, title in (
        ("RNN final state", "RNN: final hidden state"),
        ("attention, mean-pooled", "Attention: mean-pooled output"),
    ):
        frame = contrast.states[contrast.states["model"] == model]
        sentences = list(dict.fromkeys(frame["sentence"]))  # the original order first
        gap = contrast.rnn_difference if model == "RNN final state" else contrast.pooled_attention_difference
        # Not by colour alone: the original order's bars are solid and on the left, the permuted one's pale.
        legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=600)
        charts.append(
            alt.Chart(frame, title=title)
            .mark_bar(stroke="black", strokeWidth=0.5)
            .encode(
                x=alt.X("unit:O", title=axis_title("unit of the summary vector", "index"), axis=alt.Axis(labelAngle=0)),
                xOffset=alt.XOffset("sentence:N", sort=sentences),
                y=alt.Y("value:Q", title=axis_title("value", "unitless")),
                color=alt.Color("sentence:N", title="sentence (left bar, right bar)", sort=sentences, legend=legend),
                fillOpacity=alt.FillOpacity(
                    "sentence:N",
                    sort=sentences,
                    scale=alt.Scale(range=[1.0, 0.45]),
                    legend=legend,
                    title="sentence (left bar, right bar)",
                ),
                tooltip=[alt.Tooltip("sentence:N"), alt.Tooltip("unit:O"), alt.Tooltip("value:Q", format=".4f")],
            )
            .properties(
                height=320,
                description=(  # total height: title, axes and the legend below take ~150 px
                    f"Grouped bars: {title}, each unit of the summary vector for the original order "
                    f"({sentences[0]}, left bar) and for the permuted order ({sentences[-1]}, right bar); the largest "
                    f"difference between the two is {gap:.2e}."
                ),
            )
        )
    return charts[0], charts[1]
