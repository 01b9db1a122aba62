# style: branch-free arithmetic blend (mask * exact + (1 - mask) * log) with log2 in float64 and clamp instead of min; bias gathers from the flattened table at bucket * n_heads + head; keyword-only internal calls
from __future__ import annotations

import math

import torch


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position."""
    rp = relative_position.clamp(min=-max_distance, max=max_distance)
    if bidirectional:
        half = num_buckets // 2
        upper = rp.gt(0).long() * half
        n = rp.abs()
    else:
        half = num_buckets
        upper = torch.zeros_like(rp)
        n = rp.neg().clamp(min=0)
    exact = half // 2
    small = n.lt(exact).long()
    # ln(n/E) / ln(M/E) == log2(n/E) / log2(M/E)
    x = torch.log2(n.clamp(min=exact).double() / exact) / math.log2(max_distance / exact) * (half - exact)
    large = (exact + x.floor().long()).clamp(max=half - 1)
    return upper + small * n + (1 - small) * large


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    num_buckets, n_heads = table.shape
    i = torch.arange(query_len, device=table.device).view(-1, 1)
    j = torch.arange(key_len, device=table.device).view(1, -1)
    b = t5_relative_bucket(j - i, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    flat = table.reshape(-1)  # row-major [num_buckets * n_heads]; copies a non-contiguous table
    idx = b.unsqueeze(0) * n_heads + torch.arange(n_heads, device=table.device).view(-1, 1, 1)
    return flat[idx]
