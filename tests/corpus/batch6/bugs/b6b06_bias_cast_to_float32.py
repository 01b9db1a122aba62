# t5 bug (base b6c05_bucketize): the gathered bias is cast with .float(), so a float64/bfloat16/float16 table gives a float32 bias
from __future__ import annotations

import math

import torch


def _formula(n: int, per_direction: int, max_distance: int) -> int:
    exact = per_direction // 2
    if n < exact:
        return n
    value = exact + math.floor(math.log(n / exact) / math.log(max_distance / exact) * (per_direction - exact))
    return min(value, per_direction - 1)


def _edges(per_direction: int, max_distance: int) -> torch.Tensor:
    """edges[k - 1] is the first distance in bucket k or above, k = 1 .. N - 1."""
    exact = per_direction // 2
    edges = list(range(1, exact + 1))
    for k in range(exact + 1, per_direction):
        guess = math.ceil(exact * (max_distance / exact) ** ((k - exact) / (per_direction - exact)))
        edge = max(guess, exact)
        while edge > exact and _formula(edge - 1, per_direction, max_distance) >= k:
            edge -= 1
        while _formula(edge, per_direction, max_distance) < k:
            edge += 1
        edges.append(edge)
    return torch.tensor(edges, dtype=torch.int64)


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    n = relative_position.clone()
    if bidirectional:
        per_direction = num_buckets // 2
        upper = (n > 0).to(torch.int64) * per_direction
        n.abs_()
    else:
        per_direction = num_buckets
        upper = 0
        n.neg_().clamp_(min=0)
    edges = _edges(per_direction, max_distance).to(n.device)
    return torch.bucketize(n.to(torch.int64), edges, right=True) + upper


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    rows = torch.arange(query_len, device=table.device)
    cols = torch.arange(key_len, device=table.device)
    rel = cols.view(1, -1) - rows.view(-1, 1)
    bucket = t5_relative_bucket(rel, bidirectional, table.shape[0], max_distance)
    values = table[bucket].float()  # [Tq, Tk, n_heads]
    return values.permute(2, 0, 1)
