# style: pure-Python loop over the pairs with math (float64 scalars), if/elif dispatch, one float32 tensor at the end
from __future__ import annotations

import math

import torch

_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    config = scaling if scaling is not None else {"rope_type": "default"}
    rope_type = config.get("rope_type", "default")
    if rope_type not in _ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}")
    s = config.get("factor", 1.0)
    if s < 1:
        raise ValueError(f"factor must be >= 1, got {s}")

    half = head_dim // 2
    theta = [base ** (-2 * i / head_dim) for i in range(half)]
    attention_factor = 1.0

    if rope_type == "default":
        freqs = theta
    elif rope_type == "linear":
        freqs = [t / s for t in theta]
    elif rope_type == "dynamic":
        L = config["original_max_position_embeddings"]
        T = L if seq_len is None else seq_len
        if T <= L:
            freqs = theta
        else:
            grown = base * (s * T / L - (s - 1)) ** (head_dim / (head_dim - 2))
            freqs = [grown ** (-2 * i / head_dim) for i in range(half)]
    elif rope_type == "yarn":
        L = config["original_max_position_embeddings"]
        beta_fast = config.get("beta_fast", 32.0)
        beta_slow = config.get("beta_slow", 1.0)

        def d(n):
            return head_dim * math.log(L / (2 * math.pi * n)) / (2 * math.log(base))

        lo = max(math.floor(d(beta_fast)), 0)
        hi = min(math.ceil(d(beta_slow)), head_dim - 1)
        if hi <= lo:
            hi = lo + 0.001
        freqs = []
        for i, t in enumerate(theta):
            r = min(max((i - lo) / (hi - lo), 0.0), 1.0)
            freqs.append(t * (1 - r) + (t / s) * r)
        given = config.get("attention_factor")
        attention_factor = float(given) if given is not None else 0.1 * math.log(s) + 1
    else:  # llama3
        L = config["original_max_position_embeddings"]
        low = config.get("low_freq_factor", 1.0)
        high = config.get("high_freq_factor", 4.0)
        freqs = []
        for t in theta:
            wavelength = 2 * math.pi / t
            if low == high:
                freqs.append(t if wavelength <= L / low else t / s)
            elif wavelength < L / high:
                freqs.append(t)
            elif wavelength > L / low:
                freqs.append(t / s)
            else:
                u = (L / wavelength - low) / (high - low)
                freqs.append((1 - u) * t / s + u * t)

    return torch.tensor(freqs, dtype=torch.float32), float(attention_factor)
