"""The learned-embeddings lesson: the table, a tiny fit beside the sinusoidal table, and max_len.

A learned table is a ``[max_len, D]`` parameter, ``max_len x D`` numbers (GPT-2: 1024 x 768 =
786,432). Row p is whatever the training signal made it; the similarity of two rows,

    sim(p, q) = <E_p, E_q> / (|E_p| |E_q|),

shows what structure the task put there. The sinusoidal table has it by construction: its
similarity depends on p - q only.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings.learned import LearnedPositionalEmbedding
from poslab.encodings.sinusoidal import sinusoidal_encoding
from poslab.fit.learned_table import fit_learned_table
from poslab.viz.common import axis_title, heatmap, y_axis_title

POSITION = axis_title("position p", "row of the table")


def parameter_count(max_len: int, d_model: int) -> int:
    """Numbers in the table: one row of D per position."""
    return max_len * d_model


def cosine_similarity(table: torch.Tensor) -> torch.Tensor:
    """``[P, D]`` -> ``[P, P]`` cosine similarity of every pair of rows."""
    unit = table.double() / table.double().norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


def band_similarity(table: torch.Tensor, rows: int, offset: int = 1) -> float:
    """Mean cosine similarity of rows p and p + offset for p + offset < rows: high if neighbours agree."""
    similarity = cosine_similarity(table[:rows])
    return float(torch.diagonal(similarity, offset).mean())


@dataclass(frozen=True)
class FitView:
    learned_table: alt.Chart
    sinusoidal_table: alt.Chart
    learned_similarity: alt.Chart
    sinusoidal_similarity: alt.Chart
    loss_chart: alt.Chart
    final_excess_loss: float  # nats above the target's entropy; 0 is a perfect fit
    trained_row_norm: float  # mean |E_p| for p < train_len
    untrained_row_norm: float  # mean |E_p| for p >= train_len (still the 0.02 initialisation)
    neighbour_similarity: float  # mean sim(p, p+1) over the trained rows
    distant_similarity: float  # mean sim(p, p + train_len // 2)


def fit_view(max_len: int, train_len: int, d_model: int, steps: int, seed: int) -> FitView:
    fit = fit_learned_table(max_len, train_len, d_model, steps, seed)
    sinusoidal = sinusoidal_encoding(max_len, d_model)
    untrained = fit.table[train_len:] if train_len < max_len else torch.zeros(0, d_model)

    def table_chart(table: torch.Tensor, name: str) -> alt.Chart:
        return heatmap(
            table,
            title=f"{name} table [{max_len} x {d_model}]",
            x_title=axis_title("dimension", "column"),
            y_title=POSITION,
            value_title="value",
        )

    def similarity_chart(table: torch.Tensor, name: str) -> alt.Chart:
        return heatmap(
            cosine_similarity(table),
            title=f"{name}: cosine similarity of rows p and q",
            x_title=axis_title("position q", "row"),
            y_title=POSITION,
            value_title="cosine similarity",
            domain=(-1.0, 1.0),
        )

    losses = pd.DataFrame({"step": range(1, len(fit.losses) + 1), "excess loss": fit.losses})
    loss_chart = (
        alt.Chart(losses, title="Training: cross-entropy above the target's own entropy")
        .mark_line()
        .encode(
            x=alt.X("step:Q", title=axis_title("step", "full-batch Adam updates")),
            y=alt.Y("excess loss:Q", title=y_axis_title("excess loss", "nats, log scale"), scale=alt.Scale(type="log")),
            tooltip=[alt.Tooltip("step:Q"), alt.Tooltip("excess loss:Q", format=".2e")],
        )
        .properties(
            description=(
                f"Line chart, log scale: the excess cross-entropy over {len(fit.losses)} training steps, from "
                f"{fit.losses[0]:.2e} nats at step 1 to {fit.losses[-1]:.2e} nats at the last step."
            )
        )
    )
    return FitView(
        learned_table=table_chart(fit.table, "Learned"),
        sinusoidal_table=table_chart(sinusoidal, "Sinusoidal"),
        learned_similarity=similarity_chart(fit.table, "Learned"),
        sinusoidal_similarity=similarity_chart(sinusoidal, "Sinusoidal"),
        loss_chart=loss_chart,
        final_excess_loss=fit.losses[-1],
        trained_row_norm=float(fit.table[:train_len].norm(dim=-1).mean()),
        untrained_row_norm=float(untrained.norm(dim=-1).mean()) if len(untrained) else float("nan"),
        neighbour_similarity=band_similarity(fit.table, train_len, 1),
        distant_similarity=band_similarity(fit.table, train_len, train_len // 2),
    )


@dataclass(frozen=True)
class LookupOutcome:
    ok: bool
    message: str  # the output's shape, or the ValueError's own text


def look_up(max_len: int, seq_len: int, d_model: int = 8) -> LookupOutcome:
    """Run a real ``LearnedPositionalEmbedding(max_len)`` on a ``[1, seq_len, D]`` input."""
    embedding = LearnedPositionalEmbedding(max_len, d_model)
    try:
        with torch.no_grad():
            out = embedding(torch.zeros(1, seq_len, d_model))
    except ValueError as error:
        return LookupOutcome(False, str(error))
    return LookupOutcome(True, f"output shape {tuple(out.shape)}: rows 0..{seq_len - 1} of the table were added")
