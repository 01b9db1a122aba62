"""The non-uniform and hybrid schemes lesson, computed from published configurations.

* LongRoPE (Ding et al. 2024, arXiv 2402.13753), as Phi-3.5 mini ships it: theta'_i = theta_i / f_i with one
  factor f_i per pair, ``short_factor`` up to the original length and ``long_factor`` past it (Hugging
  Face's ``_compute_longrope_parameters``), and the attention factor sqrt(1 + ln s / ln L) with
  s = max_position_embeddings / L. A slow pair (wavelength > L) reaches the angle T theta'_i at T; the
  ratio to its largest trained angle L theta_i is (T / L) / f_i.
* Gemma 3: five sliding-window layers with base 10,000 to one global layer with base 1,000,000 and linear
  scaling 8 (layer i is global when (i + 1) % 6 == 0). The KV cache holds min(n, W) keys in a local layer
  and n in a global one.
* Llama 4: every fourth layer has no RoPE and attends to the whole context; the RoPE layers attend within
  chunks of ``attention_chunk_size`` (key j visible to query i when j <= i and j // c == i // c), so no RoPE
  layer ever sees a distance of c or more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.model_configs import longrope_factors, model_config
from poslab.viz.common import axis_title, heatmap, y_axis_title

# ---------------------------------------------------------------- LongRoPE (Phi-3.5 mini)


def longrope_frame() -> pd.DataFrame:
    """One row per pair: default wavelength, the two factors, and the angle ratio at the full length."""
    config = longrope_factors()
    theta = config.rope_theta ** (-torch.arange(0, config.head_dim, 2, dtype=torch.float64) / config.head_dim)
    scale = config.max_position_embeddings / config.original_max_position_embeddings
    long, short = (
        torch.tensor(config.long_factor, dtype=torch.float64),
        torch.tensor(config.short_factor, dtype=torch.float64),
    )
    wavelength = 2 * math.pi / theta
    return pd.DataFrame(
        {
            "pair": range(len(theta)),
            "wavelength": wavelength.numpy(),
            "long_factor": long.numpy(),
            "short_factor": short.numpy(),
            "uniform factor (interpolation)": scale,
            "slow pair": (wavelength > config.original_max_position_embeddings).numpy(),
            "angle ratio at full length": (scale / long).numpy(),
        }
    )


@dataclass(frozen=True)
class LongRopeView:
    scale: float  # max_position_embeddings / original_max_position_embeddings
    attention_factor: float
    slow_pairs: int
    slow_above_one: int  # slow pairs whose angle at the full length still exceeds the trained one
    smallest_slow_ratio: float
    chart: alt.Chart


def longrope_view() -> LongRopeView:
    config = longrope_factors()
    frame = longrope_frame()
    scale = config.max_position_embeddings / config.original_max_position_embeddings
    attention = math.sqrt(1 + math.log(scale) / math.log(config.original_max_position_embeddings))
    slow = frame[frame["slow pair"]]
    long_form = frame.melt(
        id_vars=["pair", "wavelength"],
        value_vars=["long_factor", "short_factor", "uniform factor (interpolation)"],
        var_name="factor",
        value_name="value",
    )
    chart = (
        alt.Chart(long_form)
        .mark_line(point=alt.OverlayMarkDef(size=20))
        .encode(
            x=alt.X("pair:Q", title=axis_title("pair i", "fast to slow")),
            y=alt.Y(
                "value:Q", title=y_axis_title("theta_i / theta'_i", "factor, log scale"), scale=alt.Scale(type="log")
            ),
            color=alt.Color("factor:N", title="factor", legend=alt.Legend(orient="bottom", labelLimit=300)),
            strokeDash=alt.StrokeDash("factor:N", title="factor", legend=alt.Legend(orient="bottom", labelLimit=300)),
            tooltip=[
                alt.Tooltip("factor:N"),
                alt.Tooltip("pair:Q"),
                alt.Tooltip("value:Q", format=".3f"),
                alt.Tooltip("wavelength:Q", title="default wavelength (positions)", format=",.0f"),
            ],
        )
        .properties(
            title=f"{config.model}: one rescale factor per RoPE pair",
            description=(
                f"Line chart, log y: for each of the {len(frame)} RoPE pairs of {config.model}, the factor its frequency is "
                f"divided by, for long inputs (long_factor, {frame['long_factor'].min():.2f} to {frame['long_factor'].max():.2f}) "
                f"and short ones (short_factor, {frame['short_factor'].min():.2f} to {frame['short_factor'].max():.2f}), "
                f"against the uniform factor {scale:g} of position interpolation."
            ),
        )
    )
    return LongRopeView(
        scale,
        attention,
        len(slow),
        int((slow["angle ratio at full length"] > 1).sum()),
        float(slow["angle ratio at full length"].min()),
        chart,
    )


# ---------------------------------------------------------------- layer patterns and caches


def gemma3_layers(num_layers: int, pattern: int = 6) -> list[str]:
    return ["global" if (i + 1) % pattern == 0 else "local" for i in range(num_layers)]


def llama4_layers(num_layers: int, interval: int = 4) -> list[str]:
    return ["NoPE, full attention" if (i + 1) % interval == 0 else "RoPE, chunked" for i in range(num_layers)]


def layer_chart(kinds: list[str], model: str) -> alt.Chart:
    frame = pd.DataFrame({"layer": range(1, len(kinds) + 1), "kind": kinds, "model": model})
    counts = frame["kind"].value_counts()
    return (
        alt.Chart(frame)
        .mark_rect(stroke="white")
        .encode(
            x=alt.X("layer:O", title=axis_title("layer", "1 = first"), axis=alt.Axis(labelOverlap=True, labelAngle=0)),
            y=alt.Y("model:N", title="model", axis=None),  # one row: every layer a cell of it
            color=alt.Color("kind:N", title="layer kind", legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=[alt.Tooltip("layer:O"), alt.Tooltip("kind:N")],
        )
        .properties(
            title=f"{model}: the kind of each layer",
            height=240,
            description=(
                f"A strip of the {len(kinds)} layers of {model}, coloured by kind: "
                + ", ".join(f"{count} {kind}" for kind, count in counts.items())
                + "."
            ),
        )
    )


def kv_cache_ratio(context: int, kinds: list[str], window: int) -> float:
    """Keys cached with local layers windowed, over keys cached if every layer were global."""
    kept = sum(context if kind == "global" else min(context, window) for kind in kinds)
    return kept / (len(kinds) * context)


@dataclass(frozen=True)
class GemmaView:
    local_layers: int
    global_layers: int
    window: int
    cache_ratio: float  # at the chosen context
    local_full_turn_pairs: int  # local-layer pairs (base 10,000) that turn fully within the window
    global_pairs_past_context: int  # global-layer pairs (1M, linear 8) whose wavelength exceeds the context
    pairs: int
    chart: alt.Chart


def gemma_view(context: int) -> GemmaView:
    config = model_config("Gemma 3 27B")
    kinds = gemma3_layers(config.num_hidden_layers)
    theta_local = 10_000.0 ** (-torch.arange(0, config.head_dim, 2, dtype=torch.float64) / config.head_dim)
    theta_global = (
        config.rope_theta ** (-torch.arange(0, config.head_dim, 2, dtype=torch.float64) / config.head_dim) / 8
    )
    return GemmaView(
        kinds.count("local"),
        kinds.count("global"),
        config.sliding_window,
        kv_cache_ratio(context, kinds, config.sliding_window),
        int((2 * math.pi / theta_local <= config.sliding_window).sum()),
        int((2 * math.pi / theta_global > config.max_position_embeddings).sum()),
        config.head_dim // 2,
        layer_chart(kinds, config.name),
    )


def chunked_mask(seq_len: int, chunk: int) -> torch.Tensor:
    """``[T, T]`` 1 where query i may see key j: causal and in the same chunk of ``chunk`` positions."""
    seq = torch.arange(seq_len)
    return ((seq[None, :] <= seq[:, None]) & (seq[None, :] // chunk == seq[:, None] // chunk)).double()


def sliding_mask(seq_len: int, window: int) -> torch.Tensor:
    seq = torch.arange(seq_len)
    return ((seq[None, :] <= seq[:, None]) & (seq[None, :] > seq[:, None] - window)).double()


@dataclass(frozen=True)
class Llama4View:
    rope_layers: int
    nope_layers: int
    chunk: int
    context: int
    largest_rope_distance: int  # the longest query-key distance any RoPE layer sees
    layer_chart: alt.Chart
    chunk_chart: alt.Chart
    sliding_chart: alt.Chart


def llama4_view(seq_len: int, chunk: int) -> Llama4View:
    config = model_config("Llama 4 Scout")
    kinds = llama4_layers(config.num_hidden_layers)
    mask = chunked_mask(seq_len, chunk)
    seen = torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]
    options = dict(
        x_title=axis_title("key j", "position"),
        y_title=axis_title("query i", "position"),
        value_title="visible",
        diverging=False,
        value_format=".1f",
    )
    chunk_chart = heatmap(
        mask,
        title=f"Chunks of {chunk} (RoPE layers)",
        **options,
        description=f"Mask of {seq_len} queries by {seq_len} keys: 1 where the key is at or before the "
        f"query and in the same chunk of {chunk}; the largest distance seen is "
        f"{int((seen * mask).max())}.",
    )
    sliding_chart = heatmap(
        sliding_mask(seq_len, chunk),
        title=f"Sliding window of {chunk}",
        **options,
        description=f"Mask of {seq_len} queries by {seq_len} keys: 1 where the key is one of the "
        f"last {chunk} positions up to the query.",
    )
    return Llama4View(
        kinds.count("RoPE, chunked"),
        kinds.count("NoPE, full attention"),
        config.attention_chunk_size,
        config.max_position_embeddings,
        config.attention_chunk_size - 1,
        layer_chart(kinds, config.name),
        chunk_chart,
        sliding_chart,
    )
