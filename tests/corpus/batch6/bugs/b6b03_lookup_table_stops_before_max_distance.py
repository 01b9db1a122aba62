# t5 bug (base b6c03_lookup_table): the lookup table covers distances 0 .. max_distance - 1 only, so every farther distance gets the bucket of max_distance - 1
from __future__ import annotations

import math

import torch


def _distance_table(per_direction: int, max_distance: int) -> torch.Tensor:
    """bucket of each distance d = 0 .. max_distance within one direction; every farther d shares the last."""
    exact = per_direction // 2
    d = torch.arange(max_distance, dtype=torch.float64)
    denom = torch.log(torch.tensor(max_distance / exact, dtype=torch.float64))
    large = exact + torch.floor(torch.log(d.clamp(min=1.0) / exact) / denom * (per_direction - exact))
    buckets = torch.where(d < exact, d, large.clamp(max=per_direction - 1))
    return buckets.to(torch.int64)


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    rp = relative_position.to(torch.int64)
    if bidirectional:
        per_direction = num_buckets // 2
        distance = rp.abs()
        offset = (rp > 0).to(torch.int64) * per_direction
    else:
        per_direction = num_buckets
        distance = (-rp).clamp(min=0)
        offset = torch.zeros_like(rp)
    lut = _distance_table(per_direction, max_distance).to(rp.device)
    return lut[distance.clamp(max=lut.numel() - 1)] + offset


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    i = torch.arange(query_len, device=table.device).view(-1, 1)
    j = torch.arange(key_len, device=table.device).view(1, -1)
    bucket = t5_relative_bucket(j - i, bidirectional, table.shape[0], max_distance)  # [Tq, Tk]
    # gather per head: table.T is [n_heads, num_buckets]
    heads = table.t()
    return heads[:, bucket]
