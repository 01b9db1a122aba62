"""The context-extension lesson: which RoPE dimensions a longer context pushes out of range.

Pair i turns by theta_i per position; its wavelength is lambda_i = 2 pi / theta_i positions.
Training on positions [0, L) shows pair i the angles [0, L theta_i). If lambda_i <= L the pair has
gone all the way round, so every angle is familiar. If lambda_i > L (the low-frequency pairs) the
model has seen only an arc, and running to length T = s L with a schedule's theta'_i reaches

    T theta'_i  vs  L theta_i           ratio  rho_i = T theta'_i / (L theta_i)

A pair is flagged when lambda_i > L and rho_i > 1: its angle at the target length lies beyond
anything it saw in training. Lengths are half-open ([0, L) -> largest angle L theta_i), so position
interpolation by exactly s maps [0, sL) onto [0, L) and is not flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import torch

from poslab.encodings.rope import rope_inverse_frequencies
from poslab.encodings.rope_scaling import ROPE_SCHEDULES, SCHEDULE_TITLES, rope_schedule
from poslab.viz.common import axis_title, y_axis_title

RELATIVE_TOLERANCE = 1e-5  # float32 inverse frequencies: an exact match may round to 1 + 1e-7


def flag_out_of_range(
    new_freqs: torch.Tensor, trained_freqs: torch.Tensor, original_len: int, target_len: int
) -> torch.Tensor:
    """Bool ``[D/2]``: lambda_i > L and T theta'_i > L theta_i (beyond the trained arc)."""
    trained = original_len * trained_freqs.double()  # (D/2,) largest angle seen in training
    reached = target_len * new_freqs.double()
    wavelength = 2 * math.pi / trained_freqs.double()
    return (wavelength > original_len) & (reached > trained * (1 + RELATIVE_TOLERANCE))


def schedules_frame(head_dim: int, base: float, original_len: int, factor: int) -> pd.DataFrame:
    """One row per (schedule, pair): frequencies, wavelengths, the angle ratio rho and the flag."""
    target_len = original_len * factor
    trained = rope_inverse_frequencies(head_dim, base)
    frames = []
    for name in ROPE_SCHEDULES:
        schedule = rope_schedule(name, head_dim, base, float(factor), original_len, current_len=target_len)
        new = schedule.inv_freq
        frames.append(
            pd.DataFrame(
                {
                    "schedule": SCHEDULE_TITLES[name],
                    "pair": np.arange(head_dim // 2),
                    "theta": new.double().numpy(),
                    "wavelength": (2 * math.pi / new.double()).numpy(),
                    "trained wavelength": (2 * math.pi / trained.double()).numpy(),
                    "frequency ratio": (new.double() / trained.double()).numpy(),
                    "angle ratio": (target_len * new.double() / (original_len * trained.double())).numpy(),
                    "out of range": flag_out_of_range(new, trained, original_len, target_len).numpy(),
                    "attention scale": schedule.attention_scale,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _tooltip() -> list[alt.Tooltip]:
    return [
        alt.Tooltip("schedule:N"),
        alt.Tooltip("pair:Q", title="pair i"),
        alt.Tooltip("wavelength:Q", title="wavelength (positions)", format=",.0f"),
        alt.Tooltip("frequency ratio:Q", title="theta'/theta", format=".4f"),
        alt.Tooltip("angle ratio:Q", title="angle at T / largest trained angle", format=".3f"),
        alt.Tooltip("out of range:N"),
    ]


WAVELENGTH = y_axis_title("wavelength 2π/θ′ᵢ", "positions, log scale")
# px of the whole chart: Streamlit fits title, plot, axes and the legend below into this height,
# which leaves the plot about 300 px.
CHART_HEIGHT = 500


def _schedule_encodings() -> dict:
    """Colour, point shape and dash all tell the schedules apart (not colour alone); one legend, whole labels."""
    # Below the plot in two columns, so a narrow page keeps the plot's width (see CHART_HEIGHT).
    legend = alt.Legend(orient="bottom", columns=2, labelLimit=400, title="schedule")
    return dict(
        color=alt.Color("schedule:N", legend=legend),
        shape=alt.Shape("schedule:N", legend=legend),
        strokeDash=alt.StrokeDash("schedule:N", legend=legend),
    )


def _schedules_in_words(frame: pd.DataFrame) -> str:
    return ", ".join(dict.fromkeys(frame["schedule"]))


def wavelength_chart(frame: pd.DataFrame, original_len: int, target_len: int) -> alt.LayerChart:
    lines = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=30, filled=True))
        .encode(
            x=alt.X("pair:Q", title=axis_title("pair i", "fast to slow")),
            y=alt.Y("wavelength:Q", title=WAVELENGTH, scale=alt.Scale(type="log")),
            tooltip=_tooltip(),
            **_schedule_encodings(),
        )
    )
    marks = pd.DataFrame(
        {
            "length": [original_len, target_len],
            "label": [f"training length L = {original_len:,}", f"target length T = {target_len:,}"],
        }
    )
    rules = (
        alt.Chart(marks)
        .mark_rule(strokeDash=[4, 4], color="black")
        .encode(y=alt.Y("length:Q", title=WAVELENGTH), tooltip=[alt.Tooltip("label:N", title="line")])
    )
    return alt.layer(lines, rules, title="Wavelength per pair: which pairs fit inside L, and inside T").properties(
        height=CHART_HEIGHT,
        description=(
            f"Line chart, log scale: the wavelength 2π/θ′ᵢ in positions of every RoPE pair i under each "
            f"schedule ({_schedules_in_words(frame)}), from {frame['wavelength'].min():,.1f} to "
            f"{frame['wavelength'].max():,.0f} positions, with dashed lines at the training length "
            f"L = {original_len:,} and the target length T = {target_len:,}."
        ),
    )


def angle_ratio_chart(frame: pd.DataFrame, first_slow_pair: int | None) -> alt.LayerChart:
    points = (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=30, filled=True))
        .encode(
            x=alt.X("pair:Q", title=axis_title("pair i", "fast to slow")),
            y=alt.Y(
                "angle ratio:Q",
                title=y_axis_title("angle at T / largest trained angle", "ratio, log scale"),
                scale=alt.Scale(type="log"),
            ),
            tooltip=_tooltip(),
            **_schedule_encodings(),
        )
    )
    one = (
        alt.Chart(pd.DataFrame({"ratio": [1.0], "label": ["trained range: ratio 1"]}))
        .mark_rule(strokeDash=[4, 4], color="black")
        .encode(
            y=alt.Y("ratio:Q", title=y_axis_title("angle at T / largest trained angle", "ratio, log scale")),
            tooltip=[alt.Tooltip("label:N", title="line")],
        )
    )
    layers = [points, one]
    if first_slow_pair is not None:  # left of this line the pairs wrapped around during training
        edge = pd.DataFrame({"pair": [first_slow_pair - 0.5], "label": ["slow pairs (wavelength > L) start here"]})
        layers.append(
            alt.Chart(edge)
            .mark_rule(color="gray")
            .encode(
                x=alt.X("pair:Q", title=axis_title("pair i", "fast to slow")),
                tooltip=[alt.Tooltip("label:N", title="line")],
            )
        )
    above = frame.loc[frame["angle ratio"] > 1 + 1e-9].groupby("schedule", sort=False)["pair"].count()
    counts = "; ".join(
        f"{schedule}: {int(above.get(schedule, 0))} pairs above 1" for schedule in dict.fromkeys(frame["schedule"])
    )
    title = alt.TitleParams(["Angle at T over the largest trained angle", "(above 1, slow pairs: unseen)"])
    return alt.layer(*layers, title=title).properties(
        height=CHART_HEIGHT,
        description=(
            f"Line chart, log scale: for every RoPE pair, the angle it reaches at the target length over "
            f"the largest angle it turned through in training, per schedule; a dashed line marks 1, the "
            f"edge of the trained range. {counts}."
        ),
    )


@dataclass(frozen=True)
class ExtensionView:
    target_len: int
    slow_pairs: int  # pairs with trained wavelength > L
    first_slow_pair: int | None
    flags: pd.DataFrame  # schedule, flagged pairs, which pairs, attention scale
    wavelength_chart: alt.LayerChart
    angle_chart: alt.LayerChart
    yarn_ramp_ratio: float  # the largest theta' ratio between YaRN's code ramp and the paper's ramp


def _pair_ranges(pairs: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    if not pairs:
        return "none"
    runs, start = [], pairs[0]
    for previous, current in zip(pairs, pairs[1:] + [None]):
        if current != previous + 1:
            runs.append(f"{start}" if start == previous else f"{start}-{previous}")
            start = current
    return ", ".join(runs)


def extension_view(head_dim: int, base: float, original_len: int, factor: int) -> ExtensionView:
    frame = schedules_frame(head_dim, base, original_len, factor)
    target_len = original_len * factor
    slow = frame.loc[
        (frame["schedule"] == SCHEDULE_TITLES["none"]) & (frame["trained wavelength"] > original_len), "pair"
    ]
    flags = pd.DataFrame(
        [
            {
                "schedule": title,
                "flagged pairs": int(group["out of range"].sum()),
                "which": _pair_ranges(group.loc[group["out of range"], "pair"].tolist()),
                "largest angle ratio, slow pairs": float(
                    group.loc[group["trained wavelength"] > original_len, "angle ratio"].max()
                ),
                "attention scale": float(group["attention scale"].iloc[0]),
            }
            for title, group in frame.groupby("schedule", sort=False)
        ]
    )
    first_slow = int(slow.min()) if len(slow) else None
    code, paper = (
        frame.loc[frame["schedule"] == SCHEDULE_TITLES[name], "theta"].to_numpy() for name in ("yarn", "yarn_paper")
    )
    ramp_ratio = float(np.maximum(code / paper, paper / code).max())
    return ExtensionView(
        target_len,
        len(slow),
        first_slow,
        flags,
        wavelength_chart(frame, original_len, target_len),
        angle_ratio_chart(frame, first_slow),
        ramp_ratio,
    )
