"""T5's relative position bias: one learned scalar per head per log-spaced distance bucket.

    score_h(i, j) = q_i . k_j  +  table[bucket(j - i), h]

    bucket(r), r = key position - query position, N buckets, max distance M:
      bidirectional: the sign takes half the buckets (N' = N / 2; r > 0 adds N'), n = |r|
      causal:        n = max(-r, 0)   (keys after the query all share bucket 0), N' = N
      e = N' / 2 exact buckets:  bucket = n                                      for n < e
      log-spaced beyond:         bucket = min(e + floor(ln(n / e) / ln(M / e) (N' - e)), N' - 1)

Raffel et al., "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
Transformer" (T5), JMLR 2020, section 2.1; the bucket scheme is Mesh TensorFlow's
``_relative_position_bucket`` (transformer_layers.py), which Hugging Face's T5 copies with the same
sign convention. T5 shares one ``[num_buckets, n_heads]`` table across all layers. Every distance
from M on lands in the last bucket: past M, T5 cannot tell distances apart.
"""

from __future__ import annotations

import math

import torch

from poslab.encodings._checks import require, require_positive_int


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (dtype long, same shape) of each ``key position - query position``."""
    require_positive_int(num_buckets, "num_buckets")
    require_positive_int(max_distance, "max_distance")
    relative_position = torch.as_tensor(relative_position).long()
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    require(
        max_exact >= 1, f"num_buckets={num_buckets} leaves no exact bucket; use at least {4 if bidirectional else 2}"
    )
    require(max_distance > max_exact, f"max_distance ({max_distance}) must exceed the {max_exact} exact buckets")
    if bidirectional:
        offset = (relative_position > 0).long() * per_direction  # later keys use the upper half
        distance = relative_position.abs()
    else:
        offset = torch.zeros_like(relative_position)
        distance = (-relative_position).clamp(min=0)
    # float32 like Mesh TensorFlow and Hugging Face, so values on a bucket edge round the same way;
    # clamp(min=1) only keeps log(0) out of the entries the exact branch takes anyway.
    log_ratio = torch.log(distance.clamp(min=1).float() / max_exact) / math.log(max_distance / max_exact)
    log_spaced = (max_exact + (log_ratio * (per_direction - max_exact)).long()).clamp(max=per_direction - 1)
    return offset + torch.where(distance < max_exact, distance, log_spaced)


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """``[n_heads, Tq, Tk]`` with ``bias[h, i, j] = table[bucket(j - i), h]``; table is ``[num_buckets, n_heads]``."""
    require(table.dim() == 2, f"table must be [num_buckets, n_heads], got shape {tuple(table.shape)}")
    require_positive_int(query_len, "query_len")
    require_positive_int(key_len, "key_len")
    queries = torch.arange(query_len, device=table.device)
    keys = torch.arange(key_len, device=table.device)
    relative_position = keys[None, :] - queries[:, None]  # (Tq, Tk): key - query
    buckets = t5_relative_bucket(relative_position, bidirectional, table.shape[0], max_distance)
    return table[buckets].permute(2, 0, 1)  # (Tq, Tk, H) -> (H, Tq, Tk)
