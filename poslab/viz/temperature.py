"""The attention-temperature lesson: why attention flattens over long contexts, and the logit scalings against it.

One query scores n keys: n - 1 distractors with logits drawn from N(0, spread^2) and one "needle" whose
logit is ``margin`` higher than the distractors' mean. With the logits multiplied by m(n), the softmax gives
the needle weight w(n) and the attention entropy H(n) (nats; at most ln n, for uniform weights). Without
scaling the distractors' mass grows like n e^{spread^2 / 2}, so w(n) falls like 1/n and H(n) tracks ln n.

Scalings m(n), with L the training length:

* ``none``       1
* ``log-n``      ln n / ln L: logits scaled by the log of the length (Chiang and Cholak 2022, arXiv
                 2202.12172; as Scalable-Softmax, Nakanishi 2025, arXiv 2501.19399), 1 at n = L
* ``YaRN``       (0.1 ln s + 1)^2 with s = max(1, n / L): YaRN multiplies q and k by 0.1 ln s + 1 each
                 (Peng et al. 2023, arXiv 2309.00071, eq. (22)), fixed per model by its scale factor s
* ``Llama 4``    1 + attn_scale ln(1 + floor(n / floor_scale)) for the query at position n - 1: the query
                 multiplier of Llama 4's NoPE layers (transformers' Llama4TextAttention, citing 2501.19399),
                 values from the published config (poslab.model_configs.llama4_temperature)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.model_configs import llama4_temperature
from poslab.viz.common import axis_title, y_axis_title

LENGTHS = tuple(1 << k for k in range(8, 18))  # 256 .. 131,072 keys
SCHEMES = ("none", "log-n", "YaRN", "Llama 4")
DRAWS = 2  # independent sets of distractors per point, averaged


def multiplier(scheme: str, n: int, train_len: int) -> float:
    """The factor the logits of a query over n keys are multiplied by."""
    if scheme == "none":
        return 1.0
    if scheme == "log-n":
        return math.log(n) / math.log(train_len)
    if scheme == "YaRN":
        scale = max(1.0, n / train_len)
        return (0.1 * math.log(scale) + 1.0) ** 2
    if scheme == "Llama 4":
        config = llama4_temperature()
        return 1.0 + config.attn_scale * math.log1p(math.floor(n / config.floor_scale))
    raise KeyError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")


def scaled_logits(n: int, spread: float, margin: float, seed: int = 0) -> torch.Tensor:
    """``[DRAWS, n]`` unscaled logits: column 0 is the needle (``margin``), the rest N(0, spread^2)."""
    generator = torch.Generator().manual_seed(seed)
    distractors = torch.randn(DRAWS, n - 1, generator=generator, dtype=torch.float64) * spread
    return torch.cat([torch.full((DRAWS, 1), margin, dtype=torch.float64), distractors], -1)


def attention_stats(logits: torch.Tensor, factor: float) -> tuple[float, float]:
    """(entropy in nats, needle weight) of softmax(factor * logits), averaged over the draws."""
    scaled = logits * factor
    log_norm = torch.logsumexp(scaled, -1, keepdim=True)
    weights = (scaled - log_norm).exp()
    entropy = log_norm[:, 0] - (weights * scaled).sum(-1)  # H = log Z - sum_j w_j l_j
    return float(entropy.mean()), float(weights[:, 0].mean())


def temperature_frame(train_len: int, spread: float, margin: float) -> pd.DataFrame:
    rows = []
    for n in LENGTHS:
        logits = scaled_logits(n, spread, margin)  # the same keys under every scheme
        for scheme in SCHEMES:
            factor = multiplier(scheme, n, train_len)
            entropy, needle = attention_stats(logits, factor)
            rows.append(
                {
                    "keys": n,
                    "scheme": scheme,
                    "multiplier": factor,
                    "entropy": entropy,
                    "entropy / ln n": entropy / math.log(n),
                    "needle weight": needle,
                }
            )
    return pd.DataFrame(rows)


def _lines(frame: pd.DataFrame, field: str, title: str, y_title: str, log_y: bool, description: str) -> alt.Chart:
    scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "keys:Q",
                title=axis_title("keys the query attends to, n", "log scale"),
                scale=alt.Scale(type="log", domain=[LENGTHS[0], LENGTHS[-1]], nice=False),
            ),
            y=alt.Y(f"{field}:Q", title=y_axis_title(*y_title), scale=scale),
            color=alt.Color("scheme:N", title="logit scaling", sort=list(SCHEMES)),
            strokeDash=alt.StrokeDash("scheme:N", title="logit scaling", sort=list(SCHEMES)),
            tooltip=[
                alt.Tooltip("scheme:N"),
                alt.Tooltip("keys:Q", format=","),
                alt.Tooltip("multiplier:Q", format=".3f"),
                alt.Tooltip("needle weight:Q", format=".4f"),
                alt.Tooltip("entropy:Q", format=".2f"),
                alt.Tooltip("entropy / ln n:Q", format=".3f"),
            ],
        )
        .properties(title=title, description=description)
    )


@dataclass(frozen=True)
class TemperatureView:
    frame: pd.DataFrame
    multiplier_chart: alt.Chart
    needle_chart: alt.Chart


def temperature_view(train_len: int, spread: float, margin: float) -> TemperatureView:
    frame = temperature_frame(train_len, spread, margin)
    last = frame[frame["keys"] == LENGTHS[-1]].set_index("scheme")
    factors = "; ".join(f"{scheme} {last.loc[scheme, 'multiplier']:.3f}" for scheme in SCHEMES)
    weights = "; ".join(f"{scheme} {last.loc[scheme, 'needle weight']:.4f}" for scheme in SCHEMES)
    multipliers = _lines(
        frame,
        "multiplier",
        "How much each scheme multiplies the logits",
        ("logit multiplier m(n)", "factor"),
        False,
        f"Line chart, log x: the factor each scheme multiplies the attention logits by, for a query over "
        f"256 to {LENGTHS[-1]:,} keys, with training length {train_len:,}. At {LENGTHS[-1]:,}: {factors}.",
    )
    needle = _lines(
        frame,
        "needle weight",
        f"Weight on one key {margin:g} logits above the rest",
        ("needle weight", "log scale"),
        True,
        f"Line chart, log scales: the softmax weight on the needle among n keys with distractor logits of "
        f"spread {spread:g}, under each scaling. At {LENGTHS[-1]:,} keys: {weights}.",
    )
    return TemperatureView(frame, multipliers, needle)
