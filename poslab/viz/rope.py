"""The RoPE lesson: clock hands, shift invariance and the long-range decay (the pairings: ``rope_pairing``).

    theta_i = base^(-2i/D);  pair i of q at position m is turned by the angle m theta_i

    <rope(q, m), rope(k, n)> = Re sum_i q_i conj(k_i) e^{i (m - n) theta_i}      (pairs as complex numbers)

so the score depends on m - n only. RoFormer (Su et al., 2021, section 3.4.3) bounds it by Abel
summation, with h_i = q_i conj(k_i) and S_j = sum_{l<j} e^{i (m-n) theta_l}:

    |sum_i h_i e^{i (m-n) theta_i}| <= (max_i |h_{i+1} - h_i|) sum_{j=1}^{D/2} |S_j|

and plots the relative upper bound (1 / (D/2)) sum_j |S_j|, which drifts down as |m - n| grows, though not monotonically.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz.common import axis_title

# --- clock hands ------------------------------------------------------------------------------


def shown_pairs(head_dim: int, count: int = 8) -> tuple[int, ...]:
    """``count`` pair indices spread evenly from the fastest (0) to the slowest (D/2 - 1)."""
    last = head_dim // 2 - 1
    return tuple(sorted({round(j * last / max(count - 1, 1)) for j in range(count)}))


def clock_frame(head_dim: int, base: float, m: int, n: int) -> pd.DataFrame:
    """One row per hand: ``pair, hand, angle, x, y, relative``; unit-length hands from the origin."""
    freqs = rope_inverse_frequencies(head_dim, base).double().numpy()
    rows = []
    for i in shown_pairs(head_dim):
        for hand, position in (("query at m", m), ("key at n", n)):
            angle = position * freqs[i]
            rows.append(
                {
                    "pair": f"pair {i}",
                    "hand": hand,
                    "position": position,
                    "angle": float(np.degrees(angle) % 360),
                    "x": float(np.cos(angle)),
                    "y": float(np.sin(angle)),
                    "relative": float(np.degrees((m - n) * freqs[i]) % 360),
                }
            )
    return pd.DataFrame(rows)


# A facet grid cannot stretch to its container (Vega-Lite sizes it from its cells), so it is drawn to
# fit the narrowest page it meets: 500 px wide (an 800 px window with the sidebar open). Four clock
# faces of 90 px a row, without axes (a unit circle needs none), the legend below, a two-line title.
CLOCK_SIZE, CLOCK_SPACING = 90, 12


def clock_chart(head_dim: int, base: float, m: int, n: int) -> alt.FacetChart:
    hands = clock_frame(head_dim, base, m, n).assign(kind="hand", order=0)
    turn = np.linspace(0, 2 * np.pi, 73)
    # Facets of a layer need one data set: the unit circles ride along as rows of kind "ring".
    rings = pd.concat(
        [
            pd.DataFrame({"pair": pair, "kind": "ring", "x": np.cos(turn), "y": np.sin(turn), "order": np.arange(73)})
            for pair in hands["pair"].unique()
        ]
    )
    frame = pd.concat([hands, rings], ignore_index=True)
    scale = alt.Scale(domain=(-1.1, 1.1))
    x_title, y_title = axis_title("cos of angle", "unit circle"), axis_title("sin of angle", "unit circle")
    x, y = alt.X("x:Q", title=x_title, scale=scale, axis=None), alt.Y("y:Q", title=y_title, scale=scale, axis=None)
    base_chart = alt.Chart().properties(width=CLOCK_SIZE, height=CLOCK_SIZE)
    ring = (
        base_chart.mark_line(color="lightgray")
        .encode(x=x, y=y, order=alt.Order("order:Q"))
        .transform_filter("datum.kind == 'ring'")
    )
    hand_domain = ["query at m", "key at n"]
    drawn = (
        base_chart.mark_rule(strokeWidth=3)
        .encode(
            x=alt.X("zero:Q", title=x_title, scale=scale, axis=None),
            y=alt.Y("zero:Q", title=y_title, scale=scale, axis=None),
            x2=alt.X2("x:Q"),
            y2=alt.Y2("y:Q"),
            color=alt.Color(
                "hand:N",
                title="hand",
                scale=alt.Scale(domain=hand_domain, range=["#c0392b", "#2c5d8f"]),
                legend=alt.Legend(orient="bottom"),
            ),
            # Solid query, dashed key: the two hands differ by more than their colour.
            strokeDash=alt.StrokeDash(
                "hand:N",
                title="hand",
                scale=alt.Scale(domain=hand_domain, range=[[1, 0], [4, 2]]),
                legend=alt.Legend(orient="bottom"),
            ),
            tooltip=[
                alt.Tooltip("pair:N"),
                alt.Tooltip("hand:N"),
                alt.Tooltip("position:Q"),
                alt.Tooltip("angle:Q", title="angle (degrees)", format=".1f"),
                alt.Tooltip("relative:Q", title="angle between hands (degrees)", format=".1f"),
            ],
        )
        .transform_filter("datum.kind == 'hand'")
        .transform_calculate(zero="0")
    )
    return (
        alt.layer(ring, drawn, data=frame)
        .facet(
            facet=alt.Facet("pair:N", title="pair i (fast to slow)", sort=list(hands["pair"].unique())),
            columns=4,
            spacing=CLOCK_SPACING,
            title=alt.Title(["Each pair is a clock hand", f"turned by position × θᵢ (m={m}, n={n})"]),
        )
        .properties(description=_clock_description(hands, m, n))
    )


def _clock_description(hands: pd.DataFrame, m: int, n: int) -> str:
    angles = "; ".join(
        f"{pair}: query {rows['angle'].iloc[0]:.0f}°, key {rows['angle'].iloc[1]:.0f}°, "
        f"{rows['relative'].iloc[0]:.0f}° apart"
        for pair, rows in hands.groupby("pair", sort=False)
    )
    return (
        f"Clock faces, one per RoPE pair: the query hand turned by m = {m} times the pair's frequency, the key "
        f"hand by n = {n} times it. {angles}."
    )


# --- shift invariance -------------------------------------------------------------------------


def rope_score(
    q: torch.Tensor, k: torch.Tensor, m: int, n: int, base: float = 10000.0, pairing: str = "interleaved"
) -> float:
    """<rope(q, m), rope(k, n)> for vectors q, k ``[D]``, in float64."""
    freqs = rope_inverse_frequencies(q.shape[-1], base)
    rotated_q = apply_rotary(q.double()[None], freqs, torch.tensor([m]), pairing)[0]
    rotated_k = apply_rotary(k.double()[None], freqs, torch.tensor([n]), pairing)[0]
    return float(rotated_q @ rotated_k)


def random_query_key(head_dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(head_dim, generator=generator, dtype=torch.float64), torch.randn(
        head_dim, generator=generator, dtype=torch.float64
    )


@dataclass(frozen=True)
class ShiftView:
    score: float  # at (m, n)
    shifted_score: float  # at (m + s, n + s)
    key_only_score: float  # at (m, n + s): the offset changed
    chart: alt.Chart


def rope_scores(
    q: torch.Tensor, k: torch.Tensor, m: torch.Tensor, n: torch.Tensor, base: float = 10000.0
) -> torch.Tensor:
    """<rope(q, m_s), rope(k, n_s)> for every s: q, k ``[D]``, positions m, n ``[S]`` -> ``[S]``."""
    freqs = rope_inverse_frequencies(q.shape[-1], base)
    rotated_q = apply_rotary(q.double().expand(len(m), -1), freqs, m)  # (S, D)
    rotated_k = apply_rotary(k.double().expand(len(n), -1), freqs, n)
    return (rotated_q * rotated_k).sum(-1)


def shift_view(head_dim: int, base: float, m: int, n: int, shift: int, seed: int = 0) -> ShiftView:
    """Scores of one random q, k pair as both positions move together, and as only the key moves."""
    q, k = random_query_key(head_dim, seed)
    steps = torch.arange(0, max(shift, 1) + 1, max(1, shift // 128))
    both = rope_scores(q, k, m + steps, n + steps, base)
    key_only = rope_scores(q, k, torch.full_like(steps, m), n + steps, base)
    frame = pd.concat(
        [
            pd.DataFrame({"shift": steps.numpy(), "moved": "both by s (offset fixed)", "score": both.numpy()}),
            pd.DataFrame({"shift": steps.numpy(), "moved": "key only (offset changes)", "score": key_only.numpy()}),
        ],
        ignore_index=True,
    )
    chart = (
        alt.Chart(frame, title="Moving both positions together leaves the score unchanged")
        .mark_line()
        .encode(
            x=alt.X("shift:Q", title=axis_title("shift s", "positions")),
            y=alt.Y("score:Q", title="score <rope(q, .), rope(k, .)> (unitless)"),
            color=alt.Color("moved:N", title="what moves"),
            strokeDash=alt.StrokeDash("moved:N", title="what moves"),  # not told apart by colour alone
            tooltip=[alt.Tooltip("moved:N"), alt.Tooltip("shift:Q"), alt.Tooltip("score:Q", format=".6f")],
        )
        .properties(
            description=(
                f"Line chart of one random query-key score against the shift s from 0 to {int(steps[-1])}: when both "
                f"positions move, the score stays at {float(both[0]):.4f} (it varies by {float((both - both[0]).abs().max()):.1e}); "
                f"when only the key moves, it ranges from {float(key_only.min()):.3f} to {float(key_only.max()):.3f}."
            )
        )
    )
    return ShiftView(
        rope_score(q, k, m, n, base),
        rope_score(q, k, m + shift, n + shift, base),
        rope_score(q, k, m, n + shift, base),
        chart,
    )


# --- long-range decay (RoFormer section 3.4.3) ------------------------------------------------


def decay_bound(head_dim: int, base: float, max_distance: int) -> pd.DataFrame:
    """``distance, bound``: (1 / (D/2)) sum_{j=1}^{D/2} |S_j| for distance 0 .. max_distance."""
    freqs = rope_inverse_frequencies(head_dim, base).double()  # (D/2,)
    distance = torch.arange(max_distance + 1, dtype=torch.float64)
    # S_j = sum_{l < j} e^{i r theta_l}: cumulative sums over the pairs, (R, D/2)
    partial_sums = torch.polar(
        torch.ones(len(distance), len(freqs), dtype=torch.float64), torch.outer(distance, freqs)
    ).cumsum(-1)
    bound = partial_sums.abs().mean(-1)
    return pd.DataFrame({"distance": distance.long().numpy(), "bound": bound.numpy()})


def decay_chart(head_dim: int, base: float, max_distance: int) -> alt.Chart:
    frame = decay_bound(head_dim, base, max_distance)
    return (
        alt.Chart(
            frame,
            title=f"RoFormer's relative upper bound on the score (D={head_dim}): not monotone, not an expected score",
        )
        .mark_line()
        .encode(
            x=alt.X("distance:Q", title=axis_title("relative distance |m - n|", "positions")),
            y=alt.Y("bound:Q", title="(1/(D/2)) sum_j |S_j| (unitless)"),
            tooltip=[alt.Tooltip("distance:Q"), alt.Tooltip("bound:Q", format=".2f")],
        )
        .properties(
            description=(
                f"Line chart of RoFormer's relative upper bound on the score against distance 0 to {max_distance} "
                f"(D = {head_dim}, base {base:g}): {frame['bound'].iloc[0]:.2f} at distance 0, "
                f"{frame['bound'].iloc[-1]:.2f} at {max_distance}, falling overall but not monotonically "
                f"(lowest {frame['bound'].min():.2f})."
            )
        )
    )
