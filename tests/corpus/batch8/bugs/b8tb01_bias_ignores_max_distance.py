# t5 bug: (t5_relative_bias does not pass max_distance on, so the bucket default 128 is always used); base: b8tc01_hf_where_f64.py
from __future__ import annotations

import math

import torch


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position."""
    # every distance >= max_distance lands in the last bucket anyway; clamping first also keeps abs / negation
    # away from int64 overflow at the extremes
    relative_position = relative_position.clamp(-max_distance, max_distance)
    relative_buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        relative_buckets = relative_buckets + (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    safe = relative_position.clamp(min=max_exact).to(torch.float64)  # no log(0) in the unused branch
    relative_position_if_large = max_exact + (
        torch.log(safe / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).floor().to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    return relative_buckets + torch.where(is_small, relative_position, relative_position_if_large)


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    context = torch.arange(query_len, dtype=torch.long, device=table.device)[:, None]
    memory = torch.arange(key_len, dtype=torch.long, device=table.device)[None, :]
    buckets = t5_relative_bucket(memory - context, bidirectional=bidirectional, num_buckets=table.shape[0])
    values = table[buckets]  # [Tq, Tk, n_heads]
    return values.permute(2, 0, 1)
