"""The extension-in-production lesson: what a long training token costs, and PoSE's positions.

* Cost per token. A forward pass spends about 2N FLOPs per token on the weights (N parameters; Kaplan et
  al. 2020, arXiv 2001.08361) plus, in attention, a score q.k and a weighted sum over the keys:
  2 + 2 FLOPs per key and feature, 4 n d_attn per layer for a query over n keys. A causal sequence of
  length T averages n = T / 2 keys per query, so the attention term is 2 n_layers T d_attn per token, with
  d_attn = heads x head_dim. Training multiplies both terms by three (forward and backward), which leaves
  the ratio between lengths unchanged. N here is the nominal size in the model's name.
* PoSE (Zhu et al. 2023, arXiv 2309.10400). Train in a window of W tokens, but give them positions from a
  target length T: the window is cut into chunks, and chunk c starts after a skip u_c drawn uniformly
  with u_0 = 0 <= u_1 <= ... <= T - W. Relative distances up to T - 1 then occur in training, though
  each example only ever holds W tokens.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.lessons import CONTENT_DIR
from poslab.model_configs import model_config
from poslab.viz.common import axis_title, y_axis_title

COST_MODELS = {  # model -> nominal parameters (from the name); dimensions come from poslab.model_configs
    "Llama 3.1 8B": 8e9,
    "Llama 3.2 1B / 3B": 1e9,
    "Qwen3 8B": 8e9,
    "Qwen2.5 7B": 7e9,
    "Mistral Nemo 12B": 12e9,
    "Phi-3.5 mini": 3.8e9,
}
LENGTHS = tuple(1 << k for k in range(11, 21))  # 2,048 .. 1,048,576


def flops_per_token(model: str, length: int) -> tuple[float, float]:
    """(weights, attention) forward FLOPs per token of a causal sequence of ``length`` tokens."""
    config = model_config(model)
    d_attn = config.num_attention_heads * config.head_dim
    return 2 * COST_MODELS[model], 2 * config.num_hidden_layers * length * d_attn


@dataclass(frozen=True)
class CostView:
    original_len: int
    target_len: int
    cost_ratio: float  # a token at the target length over a token at the original length
    attention_share: float  # of the FLOPs per token at the target length
    chart: alt.Chart


def cost_view(model: str, original_len: int, target_len: int) -> CostView:
    rows = []
    for length in sorted({*LENGTHS, original_len, target_len}):
        weights, attention = flops_per_token(model, length)
        rows += [
            {"length": length, "part": "weights (2N)", "GFLOPs per token": weights / 1e9},
            {"length": length, "part": "attention (2 layers T d_attn)", "GFLOPs per token": attention / 1e9},
        ]
    frame = pd.DataFrame(rows)
    before, after = (sum(flops_per_token(model, n)) for n in (original_len, target_len))
    chart = (
        alt.Chart(frame)
        .mark_area(opacity=0.8)
        .encode(
            x=alt.X(
                "length:Q",
                title=axis_title("sequence length T", "tokens, log scale"),
                scale=alt.Scale(type="log", domain=[LENGTHS[0], LENGTHS[-1]], nice=False),
            ),
            y=alt.Y("GFLOPs per token:Q", title=y_axis_title("forward GFLOPs per token", "stacked"), stack=True),
            color=alt.Color("part:N", title="where the FLOPs go", legend=alt.Legend(orient="bottom", labelLimit=300)),
            tooltip=[
                alt.Tooltip("part:N"),
                alt.Tooltip("length:Q", format=","),
                alt.Tooltip("GFLOPs per token:Q", format=",.1f"),
            ],
        )
        .properties(
            title=f"{model}: the cost of one training token grows with its sequence",
            description=(
                f"Stacked area chart, log x: forward GFLOPs per token of {model}, split into the weights' 2N and attention's "
                f"2 x layers x T x d_attn, for sequence lengths 2,048 to 1,048,576. A token at {target_len:,} costs "
                f"{after / before:.2f} times one at {original_len:,}."
            ),
        )
    )
    return CostView(original_len, target_len, after / before, flops_per_token(model, target_len)[1] / after, chart)


def pose_positions(window: int, target: int, chunks: int, generator: torch.Generator) -> torch.Tensor:
    """``[window]`` position ids of one PoSE example: chunk c is shifted by a skip u_c, u_0 = 0."""
    cuts = torch.sort(torch.randperm(window - 1, generator=generator)[: chunks - 1] + 1).values
    bounds = [0, *cuts.tolist(), window]
    skips = torch.sort(torch.randint(0, target - window + 1, (chunks - 1,), generator=generator)).values
    offsets = [0, *skips.tolist()]
    return torch.cat([torch.arange(bounds[c], bounds[c + 1]) + offsets[c] for c in range(chunks)])


def covered_distances(positions: torch.Tensor) -> torch.Tensor:
    """The query-key distances (query after key) one example trains, with repeats: ``[K]``."""
    distances = positions[:, None] - positions[None, :]
    return distances[distances > 0]


@dataclass(frozen=True)
class PoseView:
    window: int
    target: int
    examples: int
    pose_coverage: float  # share of distances 1 .. target - 1 seen in some example
    plain_coverage: float  # the same for ordinary training in the window
    largest_position: int
    chart: alt.Chart


def pose_view(window: int, target: int, chunks: int, examples: int, seed: int = 0) -> PoseView:
    generator = torch.Generator().manual_seed(seed)
    seen = torch.zeros(target, dtype=torch.bool)
    largest = 0
    for _ in range(examples):
        positions = pose_positions(window, target, chunks, generator)
        seen[covered_distances(positions)] = True
        largest = max(largest, int(positions.max()))
    buckets = max(1, target // 64)
    frame = pd.DataFrame(
        {
            "distance": range(0, target, buckets),
            "PoSE": [float(seen[d : d + buckets].double().mean()) for d in range(0, target, buckets)],
            f"plain training in {window}": [min(1.0, max(0, window - d) / buckets) for d in range(0, target, buckets)],
        }
    )
    frame.loc[0, "PoSE"] = float(seen[1:buckets].double().mean())  # distance 0 is the token itself
    long_form = frame.melt(id_vars="distance", var_name="training", value_name="share seen")
    chart = (
        alt.Chart(long_form)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("distance:Q", title=axis_title("query-key distance", "positions")),
            y=alt.Y(
                "share seen:Q",
                title=y_axis_title("share of distances trained", "per bucket"),
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=alt.Color("training:N", title="training", legend=alt.Legend(orient="bottom")),
            strokeDash=alt.StrokeDash("training:N", title="training", legend=alt.Legend(orient="bottom")),
            tooltip=[
                alt.Tooltip("training:N"),
                alt.Tooltip("distance:Q", format=","),
                alt.Tooltip("share seen:Q", format=".0%"),
            ],
        )
        .properties(
            title=f"Distances a {window}-token window trains, towards a target of {target:,}",
            description=(
                f"Step chart: for buckets of {buckets} distances up to {target:,}, the share that occurs in {examples} PoSE "
                f"examples of {window} tokens in {chunks} chunks, against plain training in the window, which stops at "
                f"{window - 1}."
            ),
        )
    )
    pose = float(seen[1:].double().mean())
    return PoseView(window, target, examples, pose, (window - 1) / (target - 1), largest, chart)


def recipes_table() -> pd.DataFrame:
    """The extension recipes of the lesson's [[recipes]]: reported numbers, each row with its source."""
    raw = tomllib.loads((CONTENT_DIR / "lessons" / "extension-production.toml").read_text(encoding="utf-8"))
    return pd.DataFrame(
        [
            {
                "recipe": r["recipe"],
                "what changes": r["changes"],
                "training (reported)": r["training"],
                "reach (reported)": r["reach"],
                "source": r["source"],
            }
            for r in raw["recipes"]
        ]
    )
