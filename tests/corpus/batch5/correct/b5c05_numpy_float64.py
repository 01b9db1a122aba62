# style: numpy float64 arrays then cast to a float32 tensor; dynamic by scaling the frequencies directly (theta_i * k^(-2i/(D-2))), yarn ramp with np.clip, llama3 with np.select
from __future__ import annotations

import math

import numpy as np
import torch

_TYPES = {"default", "linear", "dynamic", "yarn", "llama3"}


def _check(head_dim, scaling):
    if head_dim % 2 != 0:
        raise ValueError("head_dim must be even")
    kind = "default" if scaling is None else scaling.get("rope_type", "default")
    if kind not in _TYPES:
        raise ValueError(f"unsupported rope_type: {kind}")
    if kind != "default" and not scaling["factor"] >= 1:
        raise ValueError("the factor must be >= 1")
    return kind


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    kind = _check(head_dim, scaling)
    i = np.arange(head_dim // 2, dtype=np.float64)
    theta = np.power(float(base), -2.0 * i / head_dim)
    attention = 1.0

    if kind == "linear":
        theta = theta / scaling["factor"]

    elif kind == "dynamic":
        s, L = scaling["factor"], scaling["original_max_position_embeddings"]
        T = L if seq_len is None else seq_len
        if T > L:
            # b' = b k^(D/(D-2)), so b'^(-2i/D) = b^(-2i/D) k^(-2i/(D-2))
            k = s * T / L - (s - 1)
            theta = theta * np.power(k, -2.0 * i / (head_dim - 2))

    elif kind == "yarn":
        s, L = scaling["factor"], scaling["original_max_position_embeddings"]

        def dim_of(turns):
            return head_dim * math.log(L / (2 * math.pi * turns)) / (2 * math.log(base))

        lo = max(math.floor(dim_of(scaling.get("beta_fast", 32))), 0)
        hi = min(math.ceil(dim_of(scaling.get("beta_slow", 1))), head_dim - 1)
        if hi <= lo:
            hi = lo + 0.001
        r = np.clip((i - lo) / (hi - lo), 0.0, 1.0)
        theta = theta * (1.0 - r) + theta / s * r
        given = scaling.get("attention_factor")
        attention = float(given) if given is not None else 0.1 * math.log(s) + 1.0

    elif kind == "llama3":
        s, L = scaling["factor"], scaling["original_max_position_embeddings"]
        low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
        lam = 2 * np.pi / theta
        if low == high:
            theta = np.where(lam <= L / low, theta, theta / s)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                u = (L / lam - low) / (high - low)
            theta = np.select(
                [lam < L / high, lam > L / low],
                [theta, theta / s],
                default=(1 - u) * theta / s + u * theta,
            )

    return torch.from_numpy(theta.astype(np.float32)), float(attention)
