# extend bug: llama3 hard-codes low_freq_factor = 1 and high_freq_factor = 4 (as Meta's apply_scaling), ignoring the dict; base b7ec02_torch_float32_hf.py (line 69 changed)
from __future__ import annotations

import math

import torch


def _default_inv_freq(dim: int, base: float) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float32) / dim))


def _find_correction_dim(num_rotations: float, dim: int, base: float, max_position_embeddings: int) -> float:
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _linear_ramp_factor(lo: float, hi: float, n: int) -> torch.Tensor:
    if hi <= lo:
        hi = lo + 0.001
    ramp = (torch.arange(n, dtype=torch.float32) - lo) / (hi - lo)
    return torch.clamp(ramp, 0, 1)


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    rope_type = "default" if scaling is None else scaling.get("rope_type", "default")
    if rope_type not in {"default", "linear", "dynamic", "yarn", "llama3"}:
        raise ValueError(f"unknown rope_type: {rope_type}")
    factor = 1.0 if scaling is None else scaling.get("factor", 1.0)
    if factor < 1:
        raise ValueError("factor must be at least 1")

    if rope_type == "default":
        return _default_inv_freq(head_dim, base), 1.0

    original = scaling.get("original_max_position_embeddings")

    if rope_type == "linear":
        return _default_inv_freq(head_dim, base) / factor, 1.0

    if rope_type == "dynamic":
        T = max(seq_len if seq_len is not None else original, original)
        new_base = base * ((factor * T / original) - (factor - 1)) ** (head_dim / (head_dim - 2))
        return _default_inv_freq(head_dim, new_base), 1.0

    inv_freq = _default_inv_freq(head_dim, base)

    if rope_type == "yarn":
        beta_fast = scaling.get("beta_fast") or 32
        beta_slow = scaling.get("beta_slow") or 1
        attention_factor = scaling.get("attention_factor")
        if attention_factor is None:
            attention_factor = 0.1 * math.log(factor) + 1.0
        low = max(math.floor(_find_correction_dim(beta_fast, head_dim, base, original)), 0)
        high = min(math.ceil(_find_correction_dim(beta_slow, head_dim, base, original)), head_dim - 1)
        inv_freq_extrapolation_factor = 1 - _linear_ramp_factor(low, high, head_dim // 2)
        inv_freq_interpolation = inv_freq / factor
        inv_freq = (
            inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
            + inv_freq * inv_freq_extrapolation_factor
        )
        return inv_freq, float(attention_factor)

    # llama3
    low_freq_factor, high_freq_factor = 1.0, 4.0
    low_freq_wavelen = original / low_freq_factor
    high_freq_wavelen = original / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    if low_freq_factor == high_freq_factor:
        return torch.where(wavelen <= low_freq_wavelen, inv_freq, inv_freq / factor), 1.0
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, 1.0
