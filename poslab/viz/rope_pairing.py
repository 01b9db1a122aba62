"""The RoPE lesson's two pairings, interleaved and half: the same rotation on reordered features.

A model trained with one pairing runs with the other once its q and k projections' rows are
reordered (``interleaved_to_half_order``); ``pairing_view`` checks it on random weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from poslab.encodings.rope import apply_rotary, rope_inverse_frequencies
from poslab.viz.rope import random_query_key, rope_score


def interleaved_to_half_order(head_dim: int) -> tuple[int, ...]:
    """Row order turning an interleaved-pairing projection into a half-pairing one: W_half = W[order].

    Half-pairing feature j < D/2 is pair j's first coordinate (interleaved 2j); feature D/2 + j is its
    second coordinate (interleaved 2j + 1).
    """
    return tuple(range(0, head_dim, 2)) + tuple(range(1, head_dim, 2))


def pairing_table(head_dim: int, pairs: int = 4) -> pd.DataFrame:
    """Which two features form pair i under each convention (the first ``pairs`` pairs)."""
    half = head_dim // 2
    return pd.DataFrame(
        [
            {
                "pair i": i,
                "interleaved (RoFormer, Meta LLaMA)": f"({2 * i}, {2 * i + 1})",
                "half (GPT-NeoX, HF LLaMA)": f"({i}, {i + half})",
            }
            for i in range(min(pairs, half))
        ]
    )


@dataclass(frozen=True)
class PairingView:
    vector_difference: float  # max |rope_interleaved(q) - rope_half(q)| for the same q
    shift_error_interleaved: float  # |score(m, n) - score(m + s, n + s)|
    shift_error_half: float
    swapped_score_error: float  # max |score| change when weights trained one way run the other way
    permuted_score_error: float  # the same after permuting the q/k projection rows
    pairs: pd.DataFrame


def pairing_view(head_dim: int, d_model: int, seq_len: int, seed: int = 0, base: float = 10000.0) -> PairingView:
    """Two conventions on the same weights: different vectors, same relative property, swapped
    weights give wrong scores until the projection rows are permuted."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(seq_len, d_model, generator=generator, dtype=torch.float64)  # (T, d_model)
    w_q, w_k = (
        torch.randn(head_dim, d_model, generator=generator, dtype=torch.float64) / d_model**0.5 for _ in range(2)
    )  # (D, d_model): one head's projections
    freqs = rope_inverse_frequencies(head_dim, base)

    def scores(wq: torch.Tensor, wk: torch.Tensor, pairing: str) -> torch.Tensor:  # (T, T)
        return apply_rotary(x @ wq.T, freqs, pairing=pairing) @ apply_rotary(x @ wk.T, freqs, pairing=pairing).T

    q = (x @ w_q.T)[:1]  # (1, D): one query vector
    position = torch.tensor([seq_len - 1])
    vector_difference = (
        (apply_rotary(q, freqs, position, "interleaved") - apply_rotary(q, freqs, position, "half")).abs().max()
    )
    q_vec, k_vec = random_query_key(head_dim, seed)
    shift = 3 * seq_len
    errors = {
        p: abs(rope_score(q_vec, k_vec, 2, 7, base, p) - rope_score(q_vec, k_vec, 2 + shift, 7 + shift, base, p))
        for p in ("interleaved", "half")
    }
    reference = scores(w_q, w_k, "interleaved")  # the checkpoint was trained interleaved
    order = list(interleaved_to_half_order(head_dim))
    return PairingView(
        vector_difference=float(vector_difference),
        shift_error_interleaved=errors["interleaved"],
        shift_error_half=errors["half"],
        swapped_score_error=float((scores(w_q, w_k, "half") - reference).abs().max()),
        permuted_score_error=float((scores(w_q[order], w_k[order], "half") - reference).abs().max()),
        pairs=pairing_table(head_dim),
    )
