"""What real engines do with positions: llama.cpp's context shift, Phi-3's factor switch against the cache,
dynamic NTK in Hugging Face and in vLLM, and the KV memory each configuration costs per token.

* ``context_shift``: a tiny RoPE model of a few layers (residual attention, float64). After the sequence has
  been cached, ``discard`` tokens after the first ``keep`` are evicted and the keys behind them are moved back
  by a further rotation R(-discard) (llama.cpp's K-shift). The recompute runs the model on the kept tokens
  alone. Layer 0's keys agree to rounding; an upper layer's keys were computed from hidden states that read
  the evicted tokens, and no rotation removes that.
* ``phi3_switch``: LongRoPE's short factors up to the original length L, long factors past it (Hugging Face's
  Phi-3 picks the set from the current length). Keys cached with the short factors stay so; the reference is
  a fresh forward with the set of the current length; re-rotating the cache by p (theta_long - theta_short)
  at the switch is exact.
* ``dynamic_bases``: Hugging Face's dynamic NTK base at each length, against vLLM's, computed once for the
  longest length s L and used at every length.
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.model_configs import model_configs
from poslab.viz.common import axis_title, y_axis_title
from poslab.viz.engine_rules import attend, full_forward, projections

HEAD_DIM = 8
LEGEND = alt.Legend(orient="bottom", direction="vertical", labelLimit=600)


def _tiny_model(layers: int, width: int, seed: int) -> list[tuple[torch.Tensor, ...]]:
    generator = torch.Generator().manual_seed(seed)
    return [
        tuple(torch.randn(width, width, generator=generator, dtype=torch.float64) / width**0.5 for _ in range(3))
        for _ in range(layers)
    ]


def _run(x: torch.Tensor, weights, positions: torch.Tensor, freqs: torch.Tensor) -> list[torch.Tensor]:
    """The rotated keys of every layer, as a cache would hold them, for tokens ``x`` ``[T, D]``."""
    keys, seq = [], torch.arange(len(x))
    causal = seq[None, :] <= seq[:, None]
    for w_q, w_k, w_v in weights:
        q, k, v = apply_rotary(x @ w_q, freqs, positions), apply_rotary(x @ w_k, freqs, positions), x @ w_v
        keys.append(k)
        x = x + attend(q, k, v, causal)
    return keys


def context_shift(seq_len: int, keep: int, discard: int, layers: int = 3, seed: int = 0) -> list[float]:
    """Per layer: the largest difference between the shifted cached keys and the keys of a recompute."""
    freqs = rope_inverse_frequencies(HEAD_DIM, 10_000.0, torch.float64)
    x = torch.randn(seq_len, HEAD_DIM, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    weights = _tiny_model(layers, HEAD_DIM, seed)
    cached = _run(x, weights, torch.arange(seq_len), freqs)
    kept = torch.cat([torch.arange(keep), torch.arange(keep + discard, seq_len)])
    recomputed = _run(x[kept], weights, torch.arange(len(kept)), freqs)
    moved = torch.cat([torch.zeros(keep, dtype=torch.long), torch.full((seq_len - keep - discard,), -discard)])
    return [
        float((apply_rotary(layer[kept], freqs, moved) - fresh).abs().max()) for layer, fresh in zip(cached, recomputed)
    ]


def shift_chart(errors: list[float], keep: int, discard: int) -> alt.Chart:
    frame = pd.DataFrame({"layer": range(len(errors)), "error": errors, "drawn": [max(e, 1e-17) for e in errors]})
    return (
        alt.Chart(frame)
        .mark_line(point=alt.OverlayMarkDef(size=80))
        .encode(
            x=alt.X("layer:Q", title=axis_title("layer", "0 = first"), axis=alt.Axis(format="d", tickMinStep=1)),
            y=alt.Y(
                "drawn:Q",
                title=y_axis_title("max |shifted - recomputed key|", "log scale"),
                scale=alt.Scale(type="log", domain=[1e-17, 10]),
                axis=alt.Axis(format=".0e"),
            ),
            tooltip=[alt.Tooltip("layer:Q"), alt.Tooltip("error:Q", format=".2e")],
        )
        .properties(
            title=f"Context shift: {discard} tokens evicted after the first {keep}, keys moved by R(-{discard})",
            description=(
                "Line chart, log scale: per layer, the largest difference between the cached keys moved back by a "
                f"rotation and the keys of a recompute over the kept tokens. Layer 0: {errors[0]:.1e}; upper layers: "
                f"up to {max(errors[1:]):.1e}."
            ),
        )
    )


SHORT_FACTORS = (1.0, 1.0, 1.2, 1.5)  # a toy LongRoPE head of 4 pairs: fast pairs kept, slow pairs stretched
LONG_FACTORS = (1.0, 1.5, 4.0, 8.0)
PHI3_RULES = (
    "cache re-rotated by p(θ_long − θ_short) at the switch",
    "broken: cached keys keep the short factors",
)


def phi3_switch(seq_len: int, original_len: int, seed: int = 0) -> dict[str, list[float]]:
    """Per decode step: the cached decode's output against a fresh forward with the current length's factors."""
    q, k, v = projections(seq_len, HEAD_DIM, seed)
    theta = rope_inverse_frequencies(HEAD_DIM, 10_000.0, torch.float64)
    short, long = theta / torch.tensor(SHORT_FACTORS, dtype=torch.float64), theta / torch.tensor(LONG_FACTORS).double()
    errors: dict[str, list[float]] = {name: [] for name in PHI3_RULES}
    kept = k[:0]  # keys rotated as they entered, with the factors of their step
    for step in range(seq_len):
        freqs = long if step + 1 > original_len else short  # Hugging Face: long factors once the text exceeds L
        positions = torch.arange(step + 1)
        reference = full_forward(q[: step + 1], k[: step + 1], v[: step + 1], positions, freqs)[step]
        query = apply_rotary(q[step : step + 1], freqs, torch.tensor([step]))
        kept = torch.cat([kept, apply_rotary(k[step : step + 1], freqs, torch.tensor([step]))])
        fixed = kept
        if step + 1 > original_len:  # the difference of two rotations is a rotation: move the short-factor keys
            early = torch.arange(min(step, original_len))
            fixed = kept.clone()
            fixed[early] = apply_rotary(kept[early], long - short, early)
        every = torch.ones(1, step + 1, dtype=torch.bool)
        for name, keys in zip(PHI3_RULES, (fixed, kept)):
            errors[name].append(float((attend(query, keys, v[: step + 1], every)[0] - reference).abs().max()))
    return errors


def dynamic_bases(original_len: int, factor: float, head_dim: int = 128, base: float = 10_000.0) -> pd.DataFrame:
    """The RoPE base at each length: Hugging Face's dynamic NTK, and vLLM's (fixed at length factor * L)."""
    exponent = head_dim / (head_dim - 2)
    vllm = base * (factor * factor - (factor - 1)) ** exponent  # HF's formula evaluated once, at T = s L
    rows = []
    for length in range(original_len // 4, int(factor * original_len) + 1, original_len // 4):
        scale = max(1.0, factor * length / original_len - (factor - 1))
        rows += [
            {"length": length, "engine": "Hugging Face (recomputed per length)", "base": base * scale**exponent},
            {"length": length, "engine": "vLLM (computed once, for s·L)", "base": vllm},
        ]
    return pd.DataFrame(rows)


def dynamic_chart(frame: pd.DataFrame, original_len: int, factor: float) -> alt.Chart:
    vllm = frame[frame["engine"].str.startswith("vLLM")]["base"].iloc[0]
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("length:Q", title=axis_title("current length", "tokens"), axis=alt.Axis(format=",d")),
            y=alt.Y("base:Q", title=y_axis_title("RoPE base in use", "log scale"), scale=alt.Scale(type="log")),
            color=alt.Color("engine:N", title="engine", legend=LEGEND),
            strokeDash=alt.StrokeDash("engine:N", title="engine", legend=LEGEND),
            tooltip=[
                alt.Tooltip("engine:N"),
                alt.Tooltip("length:Q", format=","),
                alt.Tooltip("base:Q", format=",.0f"),
            ],
        )
        .properties(
            title=f"Dynamic NTK, s = {factor:g}: the base in use",
            description=(
                f"Line chart, log y: the RoPE base at each current length. Hugging Face keeps 10,000 up to {original_len:,} "
                f"and raises it past; vLLM uses {vllm:,.0f} at every length, short prompts included."
            ),
        )
    )


def kv_memory_table(context: int) -> pd.DataFrame:
    """Per model: KV cache bytes per token (all layers, keys and values, 2 bytes each), and at ``context`` tokens."""
    rows = []
    for config in model_configs():
        per_token = 2 * config.num_key_value_heads * config.head_dim * config.num_hidden_layers * 2
        rows.append(
            {
                "model": config.name,
                "KV heads / heads": f"{config.num_key_value_heads} / {config.num_attention_heads}",
                "KiB per token": f"{per_token / 1024:,.0f}",
                f"GiB at {context:,}": f"{per_token * context / 2**30:,.1f}",
            }
        )
    return pd.DataFrame(rows)


def phi3_view(seq_len: int, original_len: int):
    """The factor switch as a kept-and-broken ``RuleView`` of the inference-engine lesson."""
    from poslab.viz.inference_engine import error_chart, rule_view

    errors = phi3_switch(seq_len, original_len)
    title = f"Short factors, then long ones past L = {original_len}"
    return rule_view(errors, error_chart(errors, title, "the cached decode's output and a fresh forward"))
