# style: numpy float64, one batch row at a time on its unpadded sequence (left padding stripped), every token pushed through a collections.deque(maxlen=W) cache, per-pair rotation on a strided numpy view
from __future__ import annotations

import math
from collections import deque
from typing import Literal

import numpy as np
import torch


def _pairs(dim: int, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices (first, second) of every rotated pair."""
    if pairing == "interleaved":
        return np.arange(0, dim, 2), np.arange(1, dim, 2)
    if pairing == "half":
        return np.arange(dim // 2), np.arange(dim // 2, dim)
    raise ValueError(f"unknown pairing {pairing!r}")


def _turn(x: np.ndarray, p, theta: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """x [H, D] of one token at position p (a float), or x [H, n, D] of n tokens at positions p [n] -> a rotated copy."""
    ang = np.asarray(p, dtype=np.float64)[..., None] * theta
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., first], x[..., second]
    y = np.empty_like(x)
    y[..., first] = a * c - b * s
    y[..., second] = a * s + b * c
    return y


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
    qn, kn, vn = (x.detach().cpu().to(torch.float64).numpy().copy() for x in (q, k, v))
    mask = None if attention_mask is None else (attention_mask.detach().cpu().numpy() != 0)
    pos_ids = None if position_ids is None else position_ids.detach().cpu().numpy().astype(np.int64)
    first, second = _pairs(D, pairing)
    theta = np.array([float(base) ** (-2.0 * i / D) for i in range(D // 2)], dtype=np.float64)
    S = T if window is None else min(int(window), T)

    out = np.zeros((B, H, T, D))
    cached = np.zeros((B, H, S, D))
    for b in range(B):
        n_pad = 0 if mask is None else int(P - mask[b].sum())  # padding is all on the left
        L = T - n_pad
        keys: deque = deque(maxlen=window)  # (raw key, rotated key, value, position) of the last W real tokens
        for j in range(L):  # j: index in the unpadded sequence
            t = n_pad + j
            p = float(pos_ids[b, t]) if pos_ids is not None else float(j)
            rk = _turn(kn[b, :, t], p, theta, first, second)
            keys.append((kn[b, :, t], rk, vn[b, :, t], p))
            rq = _turn(qn[b, :, t], p, theta, first, second)
            if cache == "rotated":
                K = np.stack([entry[1] for entry in keys], axis=1)  # [H, n, D]
            else:  # raw keys, turned as they are read
                raw = np.stack([entry[0] for entry in keys], axis=1)
                K = _turn(raw, np.array([entry[3] for entry in keys]), theta, first, second)
            V = np.stack([entry[2] for entry in keys], axis=1)
            scores = np.einsum("hd,hnd->hn", rq, K) / math.sqrt(D)
            scores -= scores.max(axis=1, keepdims=True)
            w = np.exp(scores)
            w /= w.sum(axis=1, keepdims=True)
            out[b, :, t] = np.einsum("hn,hnd->hd", w, V)
        held = list(keys)[-S:]  # the real tokens in the cache, oldest first; padding slots stay 0
        for slot, entry in enumerate(held):
            cached[b, :, S - len(held) + slot] = entry[1] if cache == "rotated" else entry[0]
    return torch.from_numpy(out).to(q.dtype), torch.from_numpy(cached).to(q.dtype)
