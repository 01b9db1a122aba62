# style: MLX-like: works with periods base^(2i/D) (MLX's `freqs`), yarn as the harmonic blend of freq_inter and freq_extra with a freq_mask, llama3 by dividing the periods; float64 torch; the config is copied ({**scaling}) and its attention_factor popped from the copy
from __future__ import annotations

import math

import torch


def _periods(dims: int, base: float) -> torch.Tensor:
    return base ** (torch.arange(0, dims, 2, dtype=torch.float64) / dims)


def _yarn_find_correction_dim(dims, base, original_max_position_embeddings, num_rotations):
    return dims * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi)) / (2 * math.log(base))


def _yarn_linear_ramp_mask(min_val, max_val, dim):
    if max_val <= min_val:
        max_val = min_val + 0.001
    linear_func = (torch.arange(dim, dtype=torch.float64) - min_val) / (max_val - min_val)
    return torch.clip(linear_func, 0, 1)


def _yarn_periods(dims, base, cfg):
    scaling_factor = cfg["factor"]
    original = cfg["original_max_position_embeddings"]
    beta_fast = cfg.get("beta_fast", 32)
    beta_slow = cfg.get("beta_slow", 1)
    low = max(math.floor(_yarn_find_correction_dim(dims, base, original, beta_fast)), 0)
    high = min(math.ceil(_yarn_find_correction_dim(dims, base, original, beta_slow)), dims - 1)
    freq_extra = _periods(dims, base)
    freq_inter = scaling_factor * freq_extra
    freq_mask = 1.0 - _yarn_linear_ramp_mask(low, high, dims // 2)  # 1: extrapolate (keep), 0: interpolate
    freqs = (freq_inter * freq_extra) / (freq_inter * freq_mask + freq_extra * (1 - freq_mask))
    mscale = cfg.pop("attention_factor", None)
    if mscale is None:
        mscale = 0.1 * math.log(scaling_factor) + 1.0
    return freqs, float(mscale)


def _llama3_periods(dims, base, cfg):
    factor = cfg["factor"]
    low_freq_factor = cfg.get("low_freq_factor", 1.0)
    high_freq_factor = cfg.get("high_freq_factor", 4.0)
    old_context_len = cfg["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor

    freqs = _periods(dims, base)
    wavelens = 2 * math.pi * freqs
    freqs = torch.where(wavelens > low_freq_wavelen, freqs * factor, freqs)
    if high_freq_factor != low_freq_factor:  # else a step: kept up to L / low, divided beyond
        is_medium_freq = (wavelens >= high_freq_wavelen) & (wavelens <= low_freq_wavelen)
        smooth_factors = (old_context_len / wavelens - low_freq_factor) / (high_freq_factor - low_freq_factor)
        freqs = torch.where(is_medium_freq, freqs / ((1 - smooth_factors) / factor + smooth_factors), freqs)
    return freqs


def _dynamic_periods(dims, base, cfg, seq_len):
    factor = cfg["factor"]
    original = cfg["original_max_position_embeddings"]
    if seq_len is None or seq_len <= original:
        return _periods(dims, base)
    base = base * ((factor * seq_len / original) - (factor - 1)) ** (dims / (dims - 2))
    return _periods(dims, base)


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    if head_dim % 2 == 1:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    cfg = {**scaling} if scaling else {"rope_type": "default"}
    rope_type = cfg.get("rope_type", "default")
    if rope_type not in ("default", "linear", "dynamic", "yarn", "llama3"):
        raise ValueError(f"Unsupported rope_type {rope_type}")
    if rope_type != "default" and cfg["factor"] < 1:
        raise ValueError(f"factor must be >= 1, got {cfg['factor']}")

    mscale = 1.0
    if rope_type == "default":
        periods = _periods(head_dim, base)
    elif rope_type == "linear":
        periods = _periods(head_dim, base) * cfg["factor"]
    elif rope_type == "dynamic":
        periods = _dynamic_periods(head_dim, base, cfg, seq_len)
    elif rope_type == "yarn":
        periods, mscale = _yarn_periods(head_dim, base, cfg)
    else:
        periods = _llama3_periods(head_dim, base, cfg)
    return (1.0 / periods).to(torch.float32), mscale
