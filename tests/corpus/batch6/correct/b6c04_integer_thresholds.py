# t5 style: integer-only on tensors: the first distance of each log-spaced bucket found in Python (bisection on the formula), then counted by comparisons; bias by a flat gather
from __future__ import annotations

import math

import torch


def _log_bucket(n: int, per_direction: int, max_distance: int) -> int:
    exact = per_direction // 2
    if n < exact:
        return n
    scaled = math.log(n / exact) / math.log(max_distance / exact) * (per_direction - exact)
    return min(exact + math.floor(scaled), per_direction - 1)


def _thresholds(per_direction: int, max_distance: int) -> list[int]:
    """for k = E+1 .. N-1, the smallest distance whose bucket is at least k (the bucket never decreases)."""
    exact = per_direction // 2
    firsts = []
    for k in range(exact + 1, per_direction):  # a loop over buckets, not positions
        lo, hi = exact, max(max_distance, exact)
        while lo < hi:
            mid = (lo + hi) // 2
            if _log_bucket(mid, per_direction, max_distance) >= k:
                hi = mid
            else:
                lo = mid + 1
        firsts.append(lo)
    return firsts


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    rp = relative_position.long()
    if bidirectional:
        per_direction = num_buckets // 2
        n = rp.abs()
        base = torch.where(rp > 0, per_direction, 0)
    else:
        per_direction = num_buckets
        n = torch.relu(-rp)
        base = torch.zeros_like(rp)
    exact = per_direction // 2
    bucket = torch.minimum(n, torch.tensor(exact, dtype=torch.int64, device=rp.device))
    for first in _thresholds(per_direction, max_distance):
        bucket = bucket + (n >= first).long()
    return base + bucket


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    num_buckets, n_heads = table.shape
    q = torch.arange(query_len, device=table.device)
    k = torch.arange(key_len, device=table.device)
    bucket = t5_relative_bucket(k[None, :] - q[:, None], bidirectional, num_buckets, max_distance)
    flat = table.reshape(-1)  # row-major: table[b, h] is flat[b * n_heads + h]
    h = torch.arange(n_heads, device=table.device).view(-1, 1, 1)
    return flat[bucket.unsqueeze(0) * n_heads + h]
