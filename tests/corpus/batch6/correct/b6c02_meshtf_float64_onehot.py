# t5 style: Mesh TensorFlow-like _relative_position_bucket (ret accumulated, n = -relative_position), float64 log and floor; bias by a one-hot einsum
from __future__ import annotations

import torch
import torch.nn.functional as F


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    total = num_buckets
    ret = torch.zeros(relative_position.shape, dtype=torch.int64, device=relative_position.device)
    n = -relative_position.to(torch.int64)
    if bidirectional:
        num_buckets = total // 2
        ret = ret + (n < 0).to(torch.int64) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.clamp(n, min=0)
    # now n is in the range [0, inf)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    ratio = torch.tensor(max_distance / max_exact, dtype=torch.float64)
    scaled = torch.log(n.to(torch.float64).clamp(min=1.0) / max_exact) / torch.log(ratio)
    val_if_large = max_exact + torch.floor(scaled * (num_buckets - max_exact)).to(torch.int64)
    val_if_large = torch.clamp(val_if_large, max=num_buckets - 1)
    ret = ret + torch.where(is_small, n, val_if_large)
    return ret


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    num_buckets = table.shape[0]
    memory = torch.arange(key_len, device=table.device)
    context = torch.arange(query_len, device=table.device)
    rp = memory.unsqueeze(0) - context.unsqueeze(1)
    bucket = t5_relative_bucket(rp, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    one_hot = F.one_hot(bucket, num_buckets).to(table.dtype)  # [Tq, Tk, B]
    return torch.einsum("qkb,bh->hqk", one_hot, table)
