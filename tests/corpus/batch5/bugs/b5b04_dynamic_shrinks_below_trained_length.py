# extend bug (base b5c03_vllm_subclasses): dynamic uses T itself instead of max(T, L), so T < L shrinks the base (frequencies grow)
from __future__ import annotations

import math

import torch


class RotaryEmbedding:
    def __init__(self, rotary_dim: int, base: float) -> None:
        self.rotary_dim = rotary_dim
        self.base = base

    def _compute_inv_freq(self, base: float) -> torch.Tensor:
        return 1.0 / (base ** (torch.arange(0, self.rotary_dim, 2, dtype=torch.float64) / self.rotary_dim))

    def inv_freq_and_mscale(self, seq_len: int | None) -> tuple[torch.Tensor, float]:
        return self._compute_inv_freq(self.base), 1.0


class LinearScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, rotary_dim, base, scaling_factor):
        super().__init__(rotary_dim, base)
        self.scaling_factor = scaling_factor

    def inv_freq_and_mscale(self, seq_len):
        return self._compute_inv_freq(self.base) / self.scaling_factor, 1.0


class DynamicNTKScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, rotary_dim, base, scaling_factor, original_max_position):
        super().__init__(rotary_dim, base)
        self.scaling_factor = scaling_factor
        self.original_max_position = original_max_position

    def inv_freq_and_mscale(self, seq_len):
        max_len = self.original_max_position if seq_len is None else seq_len
        ratio = self.scaling_factor * max_len / self.original_max_position - (self.scaling_factor - 1)
        base = self.base * ratio ** (self.rotary_dim / (self.rotary_dim - 2))
        return self._compute_inv_freq(base), 1.0


def _yarn_find_correction_dim(num_rotations, dim, base, max_position):
    return (dim * math.log(max_position / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot, high_rot, dim, base, max_position):
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base, max_position))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base, max_position))
    return max(low, 0), min(high, dim - 1)


def _yarn_linear_ramp_mask(low, high, dim):
    if high <= low:
        high = low + 0.001
    linear = (torch.arange(dim, dtype=torch.float64) - low) / (high - low)
    return torch.clamp(linear, 0, 1)


class YaRNScalingRotaryEmbedding(RotaryEmbedding):
    def __init__(self, rotary_dim, base, scaling_factor, original_max_position, *, beta_fast=32, beta_slow=1,
                 attn_factor=None):
        super().__init__(rotary_dim, base)
        self.scaling_factor = scaling_factor
        self.original_max_position = original_max_position
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.mscale = float(attn_factor) if attn_factor is not None else 0.1 * math.log(scaling_factor) + 1.0

    def inv_freq_and_mscale(self, seq_len):
        pos_freqs = self.base ** (torch.arange(0, self.rotary_dim, 2, dtype=torch.float64) / self.rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (self.scaling_factor * pos_freqs)
        low, high = _yarn_find_correction_range(
            self.beta_fast, self.beta_slow, self.rotary_dim, self.base, self.original_max_position
        )
        extrapolation_mask = 1 - _yarn_linear_ramp_mask(low, high, self.rotary_dim // 2)
        inv_freq = inv_freq_interpolation * (1 - extrapolation_mask) + inv_freq_extrapolation * extrapolation_mask
        return inv_freq, self.mscale


class Llama3RotaryEmbedding(RotaryEmbedding):
    def __init__(self, rotary_dim, base, scaling_factor, low_freq_factor, high_freq_factor, original_max_position):
        super().__init__(rotary_dim, base)
        self.scaling_factor = scaling_factor
        self.low_freq_factor = low_freq_factor
        self.high_freq_factor = high_freq_factor
        self.original_max_position = original_max_position

    def inv_freq_and_mscale(self, seq_len):
        inv_freqs = self._compute_inv_freq(self.base)
        wave_len = 2 * math.pi / inv_freqs
        ratio = self.original_max_position / wave_len  # turns in the trained length
        if self.low_freq_factor == self.high_freq_factor:
            smooth = (wave_len <= self.original_max_position / self.low_freq_factor).to(torch.float64)  # a step
        else:
            smooth = (ratio - self.low_freq_factor) / (self.high_freq_factor - self.low_freq_factor)
            smooth = smooth.clamp(0, 1)  # > 1: short wavelengths kept, < 0: long ones divided
        new_freqs = (1 - smooth) * inv_freqs / self.scaling_factor + smooth * inv_freqs
        return new_freqs, 1.0


def get_rope(head_size: int, base: float, rope_scaling: dict | None) -> RotaryEmbedding:
    if head_size % 2:
        raise ValueError(f"head_size {head_size} is odd")
    if rope_scaling is None:
        return RotaryEmbedding(head_size, base)
    scaling_type = rope_scaling["rope_type"]
    if scaling_type == "default":
        return RotaryEmbedding(head_size, base)
    if scaling_type not in ("linear", "dynamic", "yarn", "llama3"):
        raise ValueError(f"Unknown RoPE scaling type {scaling_type}")
    scaling_factor = rope_scaling["factor"]
    if scaling_factor < 1:
        raise ValueError(f"RoPE scaling factor {scaling_factor} < 1")
    original_max_position = rope_scaling["original_max_position_embeddings"]
    if scaling_type == "linear":
        return LinearScalingRotaryEmbedding(head_size, base, scaling_factor)
    if scaling_type == "dynamic":
        return DynamicNTKScalingRotaryEmbedding(head_size, base, scaling_factor, original_max_position)
    if scaling_type == "yarn":
        extra_kwargs = {
            k: v for k, v in rope_scaling.items() if k in ("beta_fast", "beta_slow")
        }
        if "attention_factor" in rope_scaling:
            extra_kwargs["attn_factor"] = rope_scaling["attention_factor"]
        return YaRNScalingRotaryEmbedding(head_size, base, scaling_factor, original_max_position, **extra_kwargs)
    return Llama3RotaryEmbedding(
        head_size,
        base,
        scaling_factor,
        rope_scaling.get("low_freq_factor", 1.0),
        rope_scaling.get("high_freq_factor", 4.0),
        original_max_position,
    )


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    rope = get_rope(head_dim, base, scaling)
    inv_freq, mscale = rope.inv_freq_and_mscale(seq_len)
    return inv_freq.to(torch.float32), float(mscale)
