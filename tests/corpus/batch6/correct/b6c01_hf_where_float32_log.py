# t5 style: Hugging Face-like (T5Attention._relative_position_bucket / compute_bias): torch.where, float32 log, .to(long), embedding lookup
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    relative_buckets = torch.zeros_like(relative_position, dtype=torch.long)
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    # half of the buckets are for exact increments in positions
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    # the other half are log-spaced up to max_distance (computed in float32, as Mesh TensorFlow does)
    ratio = torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
    relative_position_if_large = max_exact + (ratio * (num_buckets - max_exact)).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position.to(torch.long), relative_position_if_large)
    return relative_buckets


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    context_position = torch.arange(query_len, dtype=torch.long, device=table.device)[:, None]
    memory_position = torch.arange(key_len, dtype=torch.long, device=table.device)[None, :]
    relative_position = memory_position - context_position  # [Tq, Tk]
    buckets = t5_relative_bucket(
        relative_position, bidirectional=bidirectional, num_buckets=table.shape[0], max_distance=max_distance
    )
    values = F.embedding(buckets, table)  # [Tq, Tk, n_heads]
    return values.permute([2, 0, 1]).contiguous()
