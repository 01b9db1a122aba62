# style: float64 throughout, a small private KV-cache object (append / evict / read), explicit 2x2 rotation matrices applied with einsum to gathered pairs, positions counted in a Python loop, logsumexp softmax, keyword-only helper calls
from __future__ import annotations

import math
from typing import Literal

import torch


def _pair_index(dim: int, pairing: str) -> torch.Tensor:
    """[D/2, 2]: the feature indices (x, y) of each rotated pair."""
    j = torch.arange(dim // 2)
    if pairing == "interleaved":
        return torch.stack((2 * j, 2 * j + 1), dim=1)
    if pairing == "half":
        return torch.stack((j, j + dim // 2), dim=1)
    raise ValueError(f"unknown pairing {pairing!r}")


def _rotations(*, positions: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """positions [B, n] -> R [B, n, D/2, 2, 2] float64, R = [[cos, -sin], [sin, cos]] (counter-clockwise)."""
    j = torch.arange(dim // 2, dtype=torch.float64)
    theta = float(base) ** (-2.0 * j / dim)
    angle = positions.to(torch.float64)[..., None] * theta
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack((torch.stack((c, -s), dim=-1), torch.stack((s, c), dim=-1)), dim=-2)


def _apply(*, x: torch.Tensor, rot: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x [B, H, n, D] float64, rot [B, n, D/2, 2, 2] -> every pair (x[index[j, 0]], x[index[j, 1]]) turned."""
    pairs = x[..., index]  # [B, H, n, D/2, 2] (a gather: a copy)
    turned = torch.einsum("bnjxy,bhnjy->bhnjx", rot, pairs)
    y = torch.empty_like(x)
    y[..., index] = turned
    return y


class _KVCache:
    """At most `capacity` entries, oldest first; each entry is one token's key (as cached), value, rotation, validity."""

    def __init__(self, *, capacity: int | None, rotated: bool, index: torch.Tensor) -> None:
        self.capacity, self.rotated, self.index = capacity, rotated, index
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.rots: list[torch.Tensor] = []
        self.valid: list[torch.Tensor] = []

    def append(self, *, key: torch.Tensor, value: torch.Tensor, rot: torch.Tensor, valid: torch.Tensor) -> None:
        """key, value [B, H, 1, D]; rot [B, 1, D/2, 2, 2]; valid [B]."""
        self.keys.append(_apply(x=key, rot=rot, index=self.index) if self.rotated else key)
        self.values.append(value)
        self.rots.append(rot)
        self.valid.append(valid)
        if self.capacity is not None and len(self.keys) > self.capacity:
            for store in (self.keys, self.values, self.rots, self.valid):
                del store[0]

    def read(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(rotated keys [B, H, n, D], values [B, H, n, D], valid [B, n])."""
        keys = torch.cat(self.keys, dim=2)
        if not self.rotated:
            keys = _apply(x=keys, rot=torch.cat(self.rots, dim=1), index=self.index)
        return keys, torch.cat(self.values, dim=2), torch.stack(self.valid, dim=1)

    def stored_keys(self) -> torch.Tensor:
        return torch.cat(self.keys, dim=2)


def _attend(*, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """query [B, H, m, D] rotated, keys/values [B, H, n, D], valid [B, m, n] -> [B, H, m, D]."""
    scores = torch.einsum("bhmd,bhnd->bhmn", query, keys) / math.sqrt(query.shape[-1])
    scores = scores.masked_fill(~valid[:, None], -math.inf)
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.einsum("bhmn,bhnd->bhmd", weights, values)


def decode(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    prompt_len: int,
    *,
    cache: Literal["rotated", "raw"] = "rotated",
    window: int | None = None,
    attention_mask: torch.Tensor | None = None,
    position_ids: torch.Tensor | None = None,
    pairing: Literal["interleaved", "half"] = "half",
    base: float = 10000.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The prefill of prompt_len tokens, then one token at a time: (out, cached_keys). See the module docstring."""
    if cache not in ("rotated", "raw"):
        raise ValueError(f"unknown cache mode {cache!r}")
    B, H, T, D = q.shape
    P = int(prompt_len)
    q64, k64, v64 = q.double().cpu(), k.double().cpu(), v.double().cpu()

    valid = [[True] * T for _ in range(B)]
    if attention_mask is not None:
        flags = attention_mask.cpu().tolist()
        for b in range(B):
            for t in range(P):
                valid[b][t] = bool(flags[b][t])
    if position_ids is not None:
        positions = position_ids.cpu().to(torch.int64)
    else:
        rows = []
        for b in range(B):
            seen, row = 0, []
            for t in range(T):
                row.append(seen)  # a token after `seen` real tokens is at position `seen`
                seen += valid[b][t]
            rows.append(row)
        positions = torch.tensor(rows, dtype=torch.int64)
    valid_t = torch.tensor(valid, dtype=torch.bool)

    index = _pair_index(D, pairing)
    rot = _rotations(positions=positions, dim=D, base=base)  # [B, T, D/2, 2, 2]
    q_rot = _apply(x=q64, rot=rot, index=index)

    out = torch.zeros(B, H, T, D, dtype=torch.float64)
    kv = _KVCache(capacity=window, rotated=(cache == "rotated"), index=index)
    # prefill: all P tokens at once, each query limited to its causal window of real keys
    for s in range(P):
        kv.append(key=k64[:, :, s : s + 1], value=v64[:, :, s : s + 1], rot=rot[:, s : s + 1], valid=valid_t[:, s])
    prompt_keys = _apply(x=k64[:, :, :P], rot=rot[:, :P], index=index)
    tt = torch.arange(P)
    causal = (tt[None, :] <= tt[:, None]) & ((tt[None, :] > tt[:, None] - window) if window is not None else True)
    see = (causal[None] & valid_t[:, None, :P]) | torch.eye(P, dtype=torch.bool)[None]
    out[:, :, :P] = _attend(query=q_rot[:, :, :P], keys=prompt_keys, values=v64[:, :, :P], valid=see)
    # decode: one token at a time against the cache
    for t in range(P, T):
        kv.append(key=k64[:, :, t : t + 1], value=v64[:, :, t : t + 1], rot=rot[:, t : t + 1], valid=valid_t[:, t])
        keys, values, ok = kv.read()
        out[:, :, t : t + 1] = _attend(query=q_rot[:, :, t : t + 1], keys=keys, values=values, valid=ok[:, None, :])
    return out.to(dtype=q.dtype, device=q.device), kv.stored_keys().to(dtype=q.dtype, device=q.device)
