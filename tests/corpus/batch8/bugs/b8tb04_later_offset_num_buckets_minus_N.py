# t5 bug: (later keys offset by num_buckets - N (the 'upper half') instead of N; differs for odd num_buckets); base: b8tc02_exact_thresholds_searchsorted.py
from __future__ import annotations

import functools
import math

import torch


@functools.lru_cache(maxsize=None)
def _thresholds(N: int, E: int, M: int) -> tuple[int, ...]:
    """Smallest distance n whose log offset reaches k, for k = 1 .. N - E - 1 (offsets >= N - E - 1 all clamp to N - 1).

    floor(ln(n/E) / ln(M/E) * (N - E)) >= k  <=>  (n/E)^(N-E) >= (M/E)^k  <=>  n^(N-E) * E^k >= M^k * E^(N-E):
    integers only, so exact (a distance exactly on an edge gets the upper bucket, as the real-valued formula says).
    """
    D = N - E
    out = []
    for k in range(1, D):
        rhs = M**k * E**D
        ek = E**k

        def reaches(n: int) -> bool:
            return n**D * ek >= rhs

        c = min(M, max(E, math.ceil(E * (M / E) ** (k / D))))  # float guess, corrected exactly below
        while c > E and reaches(c - 1):
            c -= 1
        while not reaches(c):
            c += 1
        out.append(c)
    return tuple(out)


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position."""
    rp = relative_position
    if bidirectional:
        N = num_buckets // 2
        base = (rp > 0).to(torch.int64) * (num_buckets - N)
        n = rp.clamp(-max_distance, max_distance).abs()
    else:
        N = num_buckets
        base = torch.zeros_like(rp)
        n = rp.clamp(-max_distance, 0).neg()
    E = N // 2
    thr = torch.tensor(_thresholds(N, E, max_distance), dtype=torch.int64, device=rp.device)
    log_bucket = E + torch.searchsorted(thr, n.contiguous(), right=True)
    return base + torch.where(n < E, n, log_bucket)


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    num_buckets = table.shape[0]
    rel = torch.arange(key_len, device=table.device)[None, :] - torch.arange(query_len, device=table.device)[:, None]
    buckets = t5_relative_bucket(rel, bidirectional, num_buckets, max_distance)
    return table.T[:, buckets]
