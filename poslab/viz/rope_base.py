"""The RoPE-base lesson: which pairs turn fully within the context, and the base that a length needs.

    theta_i = b^(-2i/D),  wavelength lambda_i = 2 pi / theta_i = 2 pi b^(2i/D)
    pair i completes a full turn within L positions  <=>  lambda_i <= L

* Critical dimension (Liu et al., "Scaling Laws of RoPE-based Extrapolation", 2023):
  d_extra = 2 ceil((D/2) log_b(L / (2 pi))), the features whose period fits in the training length.
* Base lower bound (Men et al., "Base of RoPE Bounds Context Length", 2024, arXiv 2405.14591): for q
  and a similar key k* = q + noise, E[q R_m k*] - E[q R_m k] is proportional to B(m) = sum_i cos(m theta_i);
  the model can prefer similar tokens up to distance L only while B(m) >= 0 for every m <= L. The
  search for the base that needs is in ``poslab.viz.rope_base_bound``.
* Adjusted base frequency (Xiong et al., "Effective Long-Context Scaling of Foundation Models", 2023):
  raise b from 10,000 to 500,000 and continue pre-training on long sequences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings.rope import rope_inverse_frequencies
from poslab.model_configs import config_sources, config_table
from poslab.viz.common import axis_title, y_axis_title


def turns_frame(head_dim: int, base: float, context_len: int) -> pd.DataFrame:
    """``pair, wavelength, turns in L, full turn``: one row per pair of one head."""
    theta = rope_inverse_frequencies(head_dim, base, dtype=torch.float64)
    wavelength = 2 * math.pi / theta
    return pd.DataFrame(
        {
            "pair": range(head_dim // 2),
            "wavelength": wavelength.numpy(),
            "turns in L": (context_len / wavelength).numpy(),
            "full turn": ["yes" if w <= context_len else "no" for w in wavelength.tolist()],
        }
    )


def critical_dimension(head_dim: int, base: float, context_len: int) -> int:
    """Liu et al. (2023): 2 ceil((D/2) log_base(L / 2 pi)), clipped to 0..D."""
    exponent = (head_dim / 2) * math.log(context_len / (2 * math.pi)) / math.log(base)
    return max(0, min(head_dim, 2 * math.ceil(exponent)))


@dataclass(frozen=True)
class TurnsSummary:
    full_turn_pairs: int  # pairs with wavelength <= L
    pairs: int
    critical_dimension: int  # Liu et al.'s d_extra (features, not pairs)
    slowest_wavelength: float


def turns_summary(head_dim: int, base: float, context_len: int) -> TurnsSummary:
    frame = turns_frame(head_dim, base, context_len)
    return TurnsSummary(
        int((frame["full turn"] == "yes").sum()),
        len(frame),
        critical_dimension(head_dim, base, context_len),
        float(frame["wavelength"].iloc[-1]),
    )


def turns_chart(head_dim: int, base: float, context_len: int) -> alt.LayerChart:
    frame = turns_frame(head_dim, base, context_len)
    points = (
        alt.Chart(frame)
        .mark_point(filled=True)
        .encode(
            x=alt.X("pair:Q", title=axis_title("pair i", "index")),
            y=alt.Y(
                "wavelength:Q",
                title=y_axis_title("wavelength 2 pi / theta_i", "positions, log scale"),
                scale=alt.Scale(type="log"),
            ),
            color=alt.Color(
                "full turn:N",
                title=f"full turn within {context_len:,}?",
                scale=alt.Scale(domain=["yes", "no"], range=["#4c78a8", "#f58518"]),
            ),
            tooltip=[
                alt.Tooltip("pair:Q"),
                alt.Tooltip("wavelength:Q", format=",.0f"),
                alt.Tooltip("turns in L:Q", format=",.3f"),
                alt.Tooltip("full turn:N"),
            ],
        )
    )
    line = (
        alt.Chart(pd.DataFrame({"L": [context_len]}))
        .mark_rule(strokeDash=[4, 4], color="gray")
        .encode(y=alt.Y("L:Q", title=y_axis_title("wavelength 2 pi / theta_i", "positions, log scale")))
    )
    return alt.layer(points, line).properties(
        title=f"Base {base:,.0f}, D = {head_dim}: which pairs complete a full turn within L = {context_len:,}",
        description=(
            f"Wavelength of each of the {head_dim // 2} RoPE pairs on a log scale, coloured by whether it "
            f"fits within the context length {context_len}, which is drawn as a dashed line."
        ),
    )


def similarity_margin(head_dim: int, base: float, max_distance: int) -> torch.Tensor:
    """Men et al.'s B(m) = sum_i cos(m theta_i) for m = 0..max_distance, float64 ``[max_distance + 1]``."""
    theta = rope_inverse_frequencies(head_dim, base, dtype=torch.float64)
    distance = torch.arange(max_distance + 1, dtype=torch.float64)
    return torch.cos(distance[:, None] * theta[None, :]).sum(-1)


def first_negative(head_dim: int, base: float, max_distance: int) -> int | None:
    """The first distance m <= max_distance with B(m) < 0, or None if there is none."""
    negative = (similarity_margin(head_dim, base, max_distance) < 0).nonzero()
    return int(negative[0]) if len(negative) else None


def margin_chart(head_dim: int, base: float, context_len: int) -> alt.LayerChart:
    margin = similarity_margin(head_dim, base, context_len)
    stride = max(1, len(margin) // 2000)  # draw at most ~2,000 points; the first negative is reported exactly
    frame = pd.DataFrame({"distance": range(0, len(margin), stride), "B(m)": margin[::stride].numpy()})
    line = (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=alt.X("distance:Q", title=axis_title("relative distance m", "positions")),
            y=alt.Y("B(m):Q", title=axis_title("B(m) = sum_i cos(m theta_i)", "unitless")),
            tooltip=[alt.Tooltip("distance:Q"), alt.Tooltip("B(m):Q", format=".2f")],
        )
    )
    zero = (
        alt.Chart(pd.DataFrame({"zero": [0.0]}))
        .mark_rule(color="gray")
        .encode(y=alt.Y("zero:Q", title=axis_title("B(m) = sum_i cos(m theta_i)", "unitless")))
    )
    return alt.layer(line, zero).properties(
        title=f"Men et al.'s margin B(m) for base {base:,.0f}, D = {head_dim}, up to m = {context_len:,}",
        description=(
            f"Line chart of the sum of cos(m theta_i) over the {head_dim // 2} pairs against distance m, "
            f"with a rule at zero: below zero, a similar key no longer scores above a random one on average."
        ),
    )


def real_configs() -> pd.DataFrame:
    """The published configurations' values (poslab.model_configs)."""
    return config_table()


def real_config_sources() -> pd.DataFrame:
    """Where each row of ``real_configs`` comes from, and what it was checked against."""
    return config_sources()
