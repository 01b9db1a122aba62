# style: in-place ops on a clone, the logarithm computed only on the boolean-selected far subset, masked add for later keys; bias written into a preallocated output with index_select + copy_
from __future__ import annotations

import math

import torch


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position."""
    n = relative_position.clone()
    n.clamp_(-max_distance, max_distance)
    if bidirectional:
        N = num_buckets // 2
        later = n > 0
        n.abs_()
    else:
        N = num_buckets
        later = None
        n.neg_().clamp_(min=0)
    E = N // 2
    out = n.clone()  # the exact buckets (n < E) are already right
    far = n >= E
    nf = n[far].to(torch.float64)
    out[far] = (E + torch.floor(torch.log(nf / E) / math.log(max_distance / E) * (N - E))).long().clamp_(max=N - 1)
    if later is not None:
        out[later] += N
    return out


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    num_buckets, n_heads = table.shape
    rel = torch.arange(key_len, device=table.device).unsqueeze(0) - torch.arange(query_len, device=table.device).unsqueeze(1)
    b = t5_relative_bucket(rel, bidirectional, num_buckets, max_distance)
    out = torch.empty((n_heads, query_len, key_len), dtype=table.dtype, device=table.device)
    out.copy_(table.index_select(0, b.reshape(-1)).t().reshape(n_heads, query_len, key_len))
    return out
