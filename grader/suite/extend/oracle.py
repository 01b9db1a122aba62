"""The extend exercise's oracle: every rope_type's frequencies in float64, written from the spec.

Written apart from the reference (``poslab/encodings/rope_scaling.py``), so that each checks the
other; ``pairs`` says which pairs a schedule keeps and which it divides by s, for the band tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Answer:
    frequencies: torch.Tensor  # float64 [D/2]
    attention_factor: float
    kept: torch.Tensor  # bool [D/2]: the pair's frequency is theta_i, untouched
    divided: torch.Tensor  # bool [D/2]: the pair's frequency is theta_i / s


def default_frequencies(head_dim: int, base: float) -> torch.Tensor:
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def yarn_bounds(head_dim: int, base: float, original_len: int, beta_fast: float, beta_slow: float):
    """(lo, hi) of the ramp: the pairs turning beta_fast and beta_slow times in L positions."""

    def pair_of(turns: float) -> float:
        return head_dim * math.log(original_len / (2 * math.pi * turns)) / (2 * math.log(base))

    low = max(math.floor(pair_of(beta_fast)), 0)
    high = min(math.ceil(pair_of(beta_slow)), head_dim - 1)
    return low, (high if high > low else low + 0.001)


def yarn_ramp(head_dim: int, base: float, original_len: int, beta_fast: float, beta_slow: float) -> torch.Tensor:
    low, high = yarn_bounds(head_dim, base, original_len, beta_fast, beta_slow)
    index = torch.arange(head_dim // 2, dtype=torch.float64)
    return ((index - low) / (high - low)).clamp(0, 1)


def llama3_keep(head_dim: int, base: float, original_len: int, low: float, high: float) -> torch.Tensor:
    """How much of theta_i each pair keeps: 1 (short wavelengths) to 0 (long ones, theta_i / s)."""
    wavelength = 2 * math.pi / default_frequencies(head_dim, base)
    if low == high:
        return (wavelength <= original_len / low).double()
    return ((original_len / wavelength - low) / (high - low)).clamp(0, 1)


def dynamic_base(head_dim: int, base: float, factor: float, original_len: int, seq_len: int | None) -> float:
    length = original_len if seq_len is None else seq_len
    if length <= original_len:
        return base
    return base * (factor * length / original_len - (factor - 1)) ** (head_dim / (head_dim - 2))


def oracle_extend(head_dim: int, base: float, scaling: dict | None, seq_len: int | None = None) -> Answer:
    theta = default_frequencies(head_dim, base)
    config = scaling or {"rope_type": "default"}
    kind, factor = config["rope_type"], float(config.get("factor", 1.0))
    original_len = config.get("original_max_position_embeddings", 4096)
    if kind == "linear":
        keep = torch.zeros_like(theta) if factor > 1 else torch.ones_like(theta)
    elif kind == "yarn":
        keep = 1 - yarn_ramp(head_dim, base, original_len, config.get("beta_fast", 32.0), config.get("beta_slow", 1.0))
    elif kind == "llama3":
        low, high = config.get("low_freq_factor", 1.0), config.get("high_freq_factor", 4.0)
        keep = llama3_keep(head_dim, base, original_len, low, high)
    else:
        keep = torch.ones_like(theta)
    frequencies = theta * keep + theta / factor * (1 - keep)
    if kind == "dynamic":
        frequencies = default_frequencies(head_dim, dynamic_base(head_dim, base, factor, original_len, seq_len))
    attention = 1.0
    if kind == "yarn":
        given = config.get("attention_factor")
        attention = float(given) if given is not None else (0.1 * math.log(factor) + 1 if factor > 1 else 1.0)
    return Answer(frequencies, attention, (keep == 1) | (factor == 1), (keep == 0) & (kind != "dynamic"))
