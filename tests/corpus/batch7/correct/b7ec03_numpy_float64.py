# style: numpy float64 arrays (np.power, np.clip, np.select), validated up front, converted to float32 torch only at the end
from __future__ import annotations

import math

import numpy as np
import torch

KNOWN = frozenset({"default", "linear", "dynamic", "yarn", "llama3"})


def _theta(head_dim: int, base: float) -> np.ndarray:
    i = np.arange(head_dim // 2, dtype=np.float64)
    return np.power(np.float64(base), -2.0 * i / head_dim)


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim % 2 == 1:
        raise ValueError("odd head_dim")
    cfg = {} if scaling is None else scaling
    kind = cfg.get("rope_type", "default")
    if kind not in KNOWN:
        raise ValueError(f"unknown rope_type {kind!r}")
    s = float(cfg.get("factor", 1.0))
    if s < 1.0:
        raise ValueError("factor below 1")

    theta = _theta(head_dim, base)
    attention_factor = 1.0
    L = cfg.get("original_max_position_embeddings")

    if kind == "default":
        inv = theta
    elif kind == "linear":
        inv = theta / s
    elif kind == "dynamic":
        T = L if seq_len is None else seq_len
        if T > L:
            inv = _theta(head_dim, base * (s * T / L - (s - 1.0)) ** (head_dim / (head_dim - 2)))
        else:
            inv = theta
    elif kind == "yarn":
        def d(n: float) -> float:
            return head_dim * np.log(L / (2.0 * np.pi * n)) / (2.0 * np.log(base))

        lo = max(math.floor(d(cfg.get("beta_fast", 32.0))), 0)
        hi = min(math.ceil(d(cfg.get("beta_slow", 1.0))), head_dim - 1)
        if hi <= lo:
            hi = lo + 0.001
        r = np.clip((np.arange(head_dim // 2, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)
        inv = theta * (1.0 - r) + (theta / s) * r
        if cfg.get("attention_factor") is not None:
            attention_factor = float(cfg["attention_factor"])
        else:
            attention_factor = 0.1 * math.log(s) + 1.0
    else:  # llama3
        low = float(cfg.get("low_freq_factor", 1.0))
        high = float(cfg.get("high_freq_factor", 4.0))
        lam = 2.0 * np.pi / theta
        if low == high:
            inv = np.where(lam <= L / low, theta, theta / s)
        else:
            u = (L / lam - low) / (high - low)
            inv = np.select(
                [lam < L / high, lam > L / low],
                [theta, theta / s],
                default=(1.0 - u) * theta / s + u * theta,
            )

    return torch.from_numpy(np.ascontiguousarray(inv, dtype=np.float32)), attention_factor
