# style: Hugging Face-like dispatch table of rope init functions (config, head_dim, base, seq_len) -> (inv_freq, attention_factor), frequencies computed in float32 as HF does, llama3 with torch.where masks
from __future__ import annotations

import math

import torch


def _base_inv_freq(base: float, dim: int) -> torch.Tensor:
    # float32 all the way, as a model's rotary embedding builds it
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim
    return 1.0 / (base ** exponents)


def _compute_default_rope_parameters(config, head_dim, base, seq_len):
    return _base_inv_freq(base, head_dim), 1.0


def _compute_linear_scaling_rope_parameters(config, head_dim, base, seq_len):
    factor = config["factor"]
    inv_freq = _base_inv_freq(base, head_dim)
    return inv_freq / factor, 1.0


def _compute_dynamic_ntk_parameters(config, head_dim, base, seq_len):
    factor = config["factor"]
    max_position_embeddings = config["original_max_position_embeddings"]
    if seq_len is None:
        seq_len = max_position_embeddings
    seq_len = max(seq_len, max_position_embeddings)  # never shrink below the trained base
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (head_dim / (head_dim - 2))
    return _base_inv_freq(base, head_dim), 1.0


def _find_correction_dim(num_rotations, dim, base, max_position_embeddings):
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings):
    low = math.floor(_find_correction_dim(low_rot, dim, base, max_position_embeddings))
    high = math.ceil(_find_correction_dim(high_rot, dim, base, max_position_embeddings))
    return max(low, 0), min(high, dim - 1)


def _linear_ramp_factor(low, high, dim):
    if high <= low:
        high = low + 0.001  # avoid a zero (or negative) width
    linear_func = (torch.arange(dim, dtype=torch.float32) - low) / (high - low)
    return torch.clamp(linear_func, 0, 1)


def _compute_yarn_parameters(config, head_dim, base, seq_len):
    factor = config["factor"]
    original_max_position_embeddings = config["original_max_position_embeddings"]
    beta_fast = config.get("beta_fast") or 32
    beta_slow = config.get("beta_slow") or 1

    attention_factor = config.get("attention_factor")
    if attention_factor is None:
        attention_factor = 0.1 * math.log(factor) + 1.0

    pos_freqs = base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(dtype=torch.float) / head_dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)

    low, high = _find_correction_range(beta_fast, beta_slow, head_dim, base, original_max_position_embeddings)
    # 1 where the pair keeps its own frequency, 0 where it is interpolated
    inv_freq_extrapolation_factor = 1 - _linear_ramp_factor(low, high, head_dim // 2)
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, float(attention_factor)


def _compute_llama3_parameters(config, head_dim, base, seq_len):
    inv_freq = _base_inv_freq(base, head_dim)

    factor = config["factor"]
    low_freq_factor = config.get("low_freq_factor", 1.0)
    high_freq_factor = config.get("high_freq_factor", 4.0)
    old_context_len = config["original_max_position_embeddings"]

    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor

    wavelen = 2 * math.pi / inv_freq
    # long wavelengths are interpolated, short ones kept
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    if high_freq_factor != low_freq_factor:
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
        is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, 1.0


ROPE_INIT_FUNCTIONS = {
    "default": _compute_default_rope_parameters,
    "linear": _compute_linear_scaling_rope_parameters,
    "dynamic": _compute_dynamic_ntk_parameters,
    "yarn": _compute_yarn_parameters,
    "llama3": _compute_llama3_parameters,
}


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    config = scaling if scaling is not None else {"rope_type": "default"}
    rope_type = config.get("rope_type", "default")
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"Unrecognized rope_type {rope_type!r}; expected one of {sorted(ROPE_INIT_FUNCTIONS)}")
    if rope_type != "default" and config["factor"] < 1:
        raise ValueError(f"rope_scaling factor must be >= 1, got {config['factor']}")
    rope_init_fn = ROPE_INIT_FUNCTIONS[rope_type]
    return rope_init_fn(config, head_dim, base, seq_len)
