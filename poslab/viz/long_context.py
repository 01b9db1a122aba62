"""The long-context lesson: RoPE inside an inference engine, computed.

* KV cache. A decode step appends one key and one value and scores one new query. The keys are
  rotated once, at their own position, before they are cached; the new query's position is the
  cache length. Then every step's scores equal the full pass's row for that query. Rotating the cached
  keys again at each step (as if they were still raw) rotates key j by its angle once per step it
  spends in the cache, and the scores drift.
* Packed sequences. Several documents share one row of a batch. Positions restart at 0 for each
  document, and the attention mask is block-diagonal. Engines that derive the document boundaries from
  the positions (a new document wherever the position is 0, as Hugging Face's packed flash-attention
  path does) see one long document when the positions are not reset, and documents attend to each other.
* Partial rotary. Only the first ``rotary_dims`` features of a head are rotated: GPT-J rotates 64 of
  its 256 (Wang and Komatsuzaki, 2021), GPT-NeoX 25% (Black et al., 2022: 24 of 96). The rest of the
  score carries content only.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings.attention import attention
from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz.common import ROUNDING_NOISE, axis_title, difference_domain, heatmap

CACHE_MODES = {
    "correct": "keys rotated once, before caching; query at position = cache length",
    "re-rotated every step": "the cached keys are rotated again and stored back at every step, so the error accumulates",
}


def _projections(seq_len: int, head_dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(seq_len, head_dim, generator=generator, dtype=torch.float64) for _ in range(2))
    return q, k  # (T, D) each: one head's raw (unrotated) queries and keys


def full_pass_scores(q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """``[T, T]`` causal scores of the whole sequence at once; future keys are NaN."""
    scores = apply_rotary(q, freqs) @ apply_rotary(k, freqs).T
    return scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("nan"))


def incremental_scores(q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor, mode: str) -> torch.Tensor:
    """``[T, T]``: row t is decode step t's scores against the cache (keys 0..t); future keys NaN."""
    if mode not in CACHE_MODES:
        raise ValueError(f"unknown cache mode {mode!r}; known: {', '.join(CACHE_MODES)}")
    seq_len = q.shape[0]
    scores = torch.full((seq_len, seq_len), float("nan"), dtype=q.dtype)
    cache = q.new_zeros((0, q.shape[1]))  # (cached keys, D), already rotated
    for step in range(seq_len):
        position = torch.tensor([len(cache)])  # a decode step's position is the cache length
        new_key = apply_rotary(k[step : step + 1], freqs, position)
        if mode == "re-rotated every step":  # the engine treats its cache as raw and writes the rotation back
            cache = apply_rotary(cache, freqs, torch.arange(len(cache)))
        cache = torch.cat([cache, new_key])
        query = apply_rotary(q[step : step + 1], freqs, position)
        scores[step, : step + 1] = (query @ cache.T)[0]
    return scores


@dataclass(frozen=True)
class CacheView:
    max_difference: float  # max |incremental - full| over all visible (query, key) pairs
    first_wrong_step: int | None  # the first decode step whose scores differ by more than 1e-9
    difference: alt.Chart
    mode: str


def cache_view(seq_len: int, head_dim: int, mode: str, base: float = 10000.0, seed: int = 0) -> CacheView:
    q, k = _projections(seq_len, head_dim, seed)
    freqs = rope_inverse_frequencies(head_dim, base, dtype=torch.float64)
    difference = incremental_scores(q, k, freqs, mode) - full_pass_scores(q, k, freqs)  # (T, T), NaN above
    per_step = difference.abs().nan_to_num(0.0).amax(-1)
    wrong = (per_step > 1e-9).nonzero()
    chart = heatmap(
        difference,
        title=f"Decode with a KV cache ({mode}) minus the full pass: scores",
        x_title=axis_title("key j", "position"),
        y_title=axis_title("decode step = query i", "position"),
        value_title="score difference",
        diverging=True,
        value_format=".2e",
        domain=difference_domain(difference.numpy()),
    )
    chart = chart.properties(
        description=(
            f"Heatmap of the difference between the attention scores of incremental decoding with a KV cache "
            f"({CACHE_MODES[mode]}) and those of one full pass, for {seq_len} positions; zero everywhere when "
            f"the cache is used correctly (differences under {ROUNDING_NOISE:g}, float rounding, draw as zero)."
        )
    )
    return CacheView(float(per_step.max()), int(wrong[0]) if len(wrong) else None, chart, mode)


def document_ids(doc_lengths: tuple[int, ...]) -> torch.Tensor:
    return torch.cat([torch.full((n,), d) for d, n in enumerate(doc_lengths)])


def packed_positions(doc_lengths: tuple[int, ...], reset: bool) -> torch.Tensor:
    if not reset:
        return torch.arange(sum(doc_lengths))
    return torch.cat([torch.arange(n) for n in doc_lengths])


def mask_from_positions(positions: torch.Tensor) -> torch.Tensor:
    """``[T, T]`` additive causal mask, block-diagonal over documents, a document starting at each 0."""
    documents = (positions == 0).long().cumsum(0)
    same_document = documents[:, None] == documents[None, :]
    causal = torch.ones(len(positions), len(positions), dtype=torch.bool).tril()
    mask = torch.zeros(len(positions), len(positions), dtype=torch.float64)
    return mask.masked_fill(~(same_document & causal), float("-inf"))


@dataclass(frozen=True)
class PackedView:
    leaked_weight: float  # the largest attention mass any query puts on other documents' keys
    output_difference: float  # max |output in the pack - output of the document alone|
    weights: alt.Chart
    positions: tuple[int, ...]


def packed_view(
    doc_lengths: tuple[int, ...], reset: bool, head_dim: int = 16, base: float = 10000.0, seed: int = 0
) -> PackedView:
    """Pack the documents into one sequence and compare each with the document run alone."""
    if not doc_lengths or min(doc_lengths) < 1:
        raise ValueError(f"every document needs at least one token, got {doc_lengths}")
    total = sum(doc_lengths)
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(total, head_dim, generator=generator, dtype=torch.float64) for _ in range(3))
    freqs = rope_inverse_frequencies(head_dim, base, dtype=torch.float64)
    positions = packed_positions(doc_lengths, reset)
    mask = mask_from_positions(positions)
    out, weights = attention(apply_rotary(q, freqs, positions), apply_rotary(k, freqs, positions), v, mask)
    documents = document_ids(doc_lengths)
    other = documents[:, None] != documents[None, :]
    leaked = float((weights * other).sum(-1).max())
    alone, start = [], 0
    for n in doc_lengths:
        span = slice(start, start + n)
        local = torch.arange(n)
        alone.append(
            attention(
                apply_rotary(q[span], freqs, local),
                apply_rotary(k[span], freqs, local),
                v[span],
                mask_from_positions(local),
            )[0]
        )
        start += n
    difference = float((out - torch.cat(alone)).abs().max())
    chart = heatmap(
        weights,
        title=f"Attention weights of the packed row (positions {'reset' if reset else 'not reset'})",
        x_title=axis_title("key", "packed index"),
        y_title=axis_title("query", "packed index"),
        value_title="weight",
        diverging=False,
        value_format=".3f",
    )
    chart = chart.properties(
        description=(
            f"Heatmap of the attention weights of {len(doc_lengths)} documents of lengths {list(doc_lengths)} packed "
            f"into one sequence, with the mask derived from the positions: block-diagonal when positions restart at 0 "
            f"for each document, one causal triangle when they do not."
        )
    )
    return PackedView(leaked, difference, chart, tuple(positions.tolist()))


def partial_rotary(
    x: torch.Tensor,
    rotary_dims: int,
    positions: torch.Tensor | None = None,
    base: float = 10000.0,
    pairing: str = "interleaved",
) -> torch.Tensor:
    """Rotate the first ``rotary_dims`` features of x ``[..., T, D]`` and pass the rest through."""
    if not 0 <= rotary_dims <= x.shape[-1] or rotary_dims % 2:
        raise ValueError(f"rotary_dims must be even and in 0..{x.shape[-1]}, got {rotary_dims}")
    if rotary_dims == 0:
        return x
    freqs = rope_inverse_frequencies(rotary_dims, base, dtype=torch.float64)
    rotated = apply_rotary(x[..., :rotary_dims], freqs, positions, pairing)
    return torch.cat([rotated, x[..., rotary_dims:]], dim=-1)


PARTIAL_ROTARY_MODELS = {  # model -> (head dim, rotary dims, pairing), from each model's released config
    "GPT-J-6B": (256, 64, "interleaved"),  # rotary_dim = 64, n_embd 4096 / 16 heads
    "GPT-NeoX-20B": (96, 24, "half"),  # rotary_pct = 0.25, hidden 6144 / 64 heads
}


def partial_rotary_frame(
    head_dim: int, rotary_dims: int, max_distance: int, seed: int = 0, base: float = 10000.0
) -> pd.DataFrame:
    """``distance, score, part``: one q, k pair's score against distance, split into rotated and unrotated parts."""
    generator = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(1, head_dim, generator=generator, dtype=torch.float64) for _ in range(2))
    distance = torch.arange(max_distance + 1)
    key = partial_rotary(k.expand(len(distance), -1), rotary_dims, distance, base)  # (R, D), query at 0
    rotated_part = key[:, :rotary_dims] @ q[0, :rotary_dims]
    content_part = key[:, rotary_dims:] @ q[0, rotary_dims:]
    parts = {
        "rotated features": rotated_part,
        "unrotated features (content only)": content_part,
        "total score": rotated_part + content_part,
    }
    return pd.concat(
        [pd.DataFrame({"distance": distance.numpy(), "score": s.numpy(), "part": name}) for name, s in parts.items()],
        ignore_index=True,
    )


def partial_rotary_chart(head_dim: int, rotary_dims: int, max_distance: int, seed: int = 0) -> alt.Chart:
    frame = partial_rotary_frame(head_dim, rotary_dims, max_distance, seed)
    return (
        alt.Chart(frame)
        .mark_line()
        .encode(
            x=alt.X("distance:Q", title=axis_title("key position - query position", "tokens")),
            y=alt.Y("score:Q", title=axis_title("score q . k", "unitless")),
            # Below the chart, labels whole: at the right, the legend's default limit cut "(content only)".
            color=alt.Color("part:N", title="part of the score", legend=alt.Legend(orient="bottom", labelLimit=0)),
            tooltip=[alt.Tooltip("part:N"), alt.Tooltip("distance:Q"), alt.Tooltip("score:Q", format=".3f")],
        )
        .properties(
            title=f"Partial rotary: {rotary_dims} of {head_dim} features rotated",
            description=(
                f"Line chart of one random query-key pair's score against distance, split into the part from "
                f"the {rotary_dims} rotated features, which changes with distance, and the part from the "
                f"{head_dim - rotary_dims} unrotated ones, which is constant."
            ),
        )
    )
