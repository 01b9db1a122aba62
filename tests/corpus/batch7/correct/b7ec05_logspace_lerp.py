# style: log-space float64 (log theta = -(2i/D) ln b), torch.lerp blends, llama3 as one clamped smooth factor, match/case dispatch
from __future__ import annotations

import math

import torch


def _log_theta(head_dim: int, log_base: float) -> torch.Tensor:
    return torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim * -log_base


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim // 2 * 2 != head_dim:
        raise ValueError(f"head_dim {head_dim} is odd")
    rope_type = "default" if scaling is None else scaling.get("rope_type", "default")
    s = 1.0 if scaling is None else scaling.get("factor", 1.0)

    match rope_type:
        case "default" | "linear" | "dynamic" | "yarn" | "llama3":
            pass
        case _:
            raise ValueError(f"unknown rope_type {rope_type!r}")
    if s < 1:
        raise ValueError(f"factor {s} is below 1")

    log_b = math.log(base)
    theta = torch.exp(_log_theta(head_dim, log_b))
    attention_factor = 1.0

    match rope_type:
        case "default":
            out = theta
        case "linear":
            out = torch.exp(_log_theta(head_dim, log_b) - math.log(s))
        case "dynamic":
            L = scaling["original_max_position_embeddings"]
            T = L if seq_len is None else seq_len
            if T > L:
                log_b += head_dim / (head_dim - 2) * math.log(s * T / L - (s - 1))
            out = torch.exp(_log_theta(head_dim, log_b))
        case "yarn":
            L = scaling["original_max_position_embeddings"]
            d_fast = head_dim * math.log(L / (2 * math.pi * scaling.get("beta_fast", 32))) / (2 * log_b)
            d_slow = head_dim * math.log(L / (2 * math.pi * scaling.get("beta_slow", 1))) / (2 * log_b)
            lo = max(math.floor(d_fast), 0)
            hi = min(math.ceil(d_slow), head_dim - 1)
            if hi <= lo:
                hi = lo + 0.001
            i = torch.arange(head_dim // 2, dtype=torch.float64)
            r = torch.clamp((i - lo) / (hi - lo), min=0.0, max=1.0)
            out = torch.lerp(theta, theta / s, r)  # theta (1 - r) + (theta / s) r
            attention_factor = scaling.get("attention_factor")
            attention_factor = 0.1 * math.log(s) + 1 if attention_factor is None else float(attention_factor)
        case "llama3":
            L = scaling["original_max_position_embeddings"]
            low = scaling.get("low_freq_factor", 1.0)
            high = scaling.get("high_freq_factor", 4.0)
            turns = L * theta / (2 * math.pi)  # L / lambda_i: how often pair i turns in L positions
            if low == high:  # step: keep theta while lambda_i <= L / low, i.e. L / lambda_i >= low
                out = torch.where(turns >= low, theta, theta / s)
            else:
                # u > 1 exactly where lambda_i < L / high, u < 0 where lambda_i > L / low: clamping gives the ends
                u = ((turns - low) / (high - low)).clamp(0.0, 1.0)
                out = torch.lerp(theta / s, theta, u)

    return out.float(), attention_factor
