# style: a match statement on rope_type, float64 torch with torch.lerp for the yarn and llama3 blends, dynamic by stretching the frequencies directly (k^(-2i/(D-2))), validation up front
from __future__ import annotations

import math

import torch


def _validated(head_dim: int, scaling: dict | None) -> str:
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    if scaling is None:
        return "default"
    rope_type = scaling["rope_type"]
    if rope_type not in {"default", "linear", "dynamic", "yarn", "llama3"}:
        raise ValueError(f"unknown rope_type {rope_type!r}")
    if rope_type != "default" and scaling["factor"] < 1:
        raise ValueError(f"factor {scaling['factor']} < 1")
    return rope_type


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    rope_type = _validated(head_dim, scaling)
    pair = torch.arange(head_dim // 2, dtype=torch.float64)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64), -2 * pair / head_dim)
    attention_factor = 1.0

    match rope_type:
        case "default":
            inv_freq = theta
        case "linear":
            inv_freq = theta / scaling["factor"]
        case "dynamic":
            s = scaling["factor"]
            trained = scaling["original_max_position_embeddings"]
            current = trained if seq_len is None else seq_len
            if current > trained:
                stretch = s * current / trained - (s - 1)
                inv_freq = theta * torch.pow(torch.tensor(stretch, dtype=torch.float64), -2 * pair / (head_dim - 2))
            else:
                inv_freq = theta
        case "yarn":
            s = scaling["factor"]
            trained = scaling["original_max_position_embeddings"]

            def pair_turning(n):  # d(n): the pair that turns n times in the trained length
                return head_dim * math.log(trained / (2 * math.pi * n)) / (2 * math.log(base))

            lo = max(math.floor(pair_turning(scaling.get("beta_fast", 32))), 0)
            hi = min(math.ceil(pair_turning(scaling.get("beta_slow", 1))), head_dim - 1)
            hi = hi if hi > lo else lo + 0.001
            ramp = ((pair - lo) / (hi - lo)).clamp(0.0, 1.0)
            inv_freq = torch.lerp(theta, theta / s, ramp)
            if "attention_factor" in scaling:
                attention_factor = float(scaling["attention_factor"])
            else:
                attention_factor = 0.1 * math.log(s) + 1.0
        case "llama3":
            s = scaling["factor"]
            trained = scaling["original_max_position_embeddings"]
            low = scaling.get("low_freq_factor", 1)
            high = scaling.get("high_freq_factor", 4)
            wavelength = 2 * math.pi / theta
            if low == high:
                weight = (wavelength <= trained / low).double()
            else:
                weight = torch.where(
                    wavelength < trained / high,
                    1.0,
                    torch.where(wavelength > trained / low, 0.0, (trained / wavelength - low) / (high - low)),
                )
            inv_freq = torch.lerp(theta / s, theta, weight)
    return inv_freq.float(), attention_factor
