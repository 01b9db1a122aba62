# sinusoidal bug: cache regrowth forgets seq_len (grows to max(1024, 2*old) only): too few rows for a large first request (base: b8sc05_cached_table_where_mask.py)
from __future__ import annotations

import torch

_MIN_ROWS = 1024
_CACHE: dict[tuple[int, float], torch.Tensor] = {}


def _build(rows: int, d_model: int, base: float) -> torch.Tensor:
    cols = torch.arange(d_model)
    pair = torch.div(cols, 2, rounding_mode="floor").to(torch.float64)  # i for columns 2i and 2i+1
    freqs = torch.full((d_model,), base, dtype=torch.float64) ** (-2.0 * pair / d_model)
    angles = torch.arange(rows, dtype=torch.float64).unsqueeze(-1) * freqs  # [rows, d_model]
    even = (cols % 2 == 0).expand(rows, d_model)
    return torch.where(even, torch.sin(angles), torch.cos(angles)).to(torch.float32)


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    key = (int(d_model), float(base))
    table = _CACHE.get(key)
    if table is None or table.shape[0] < seq_len:
        rows = max(_MIN_ROWS, 0 if table is None else 2 * table.shape[0])
        table = _CACHE[key] = _build(rows, key[0], key[1])
    return table[:seq_len].clone()
