# style: class-based rotary embedding (copies its config; a method per rope type; frequencies(seq_len) returns the pair), float64 torch then .float(), yarn ramp with torch.clamp
from __future__ import annotations

import math

import torch


class ScaledRotaryEmbedding:
    """RoPE inverse frequencies of one head under a rope_scaling config."""

    KNOWN = ("default", "linear", "dynamic", "yarn", "llama3")

    def __init__(self, head_dim: int, base: float = 10000.0, rope_scaling: dict | None = None):
        if head_dim % 2 == 1:
            raise ValueError("head_dim must be even")
        self.dim = head_dim
        self.base = float(base)
        self.config = dict(rope_scaling) if rope_scaling is not None else {"rope_type": "default"}
        self.rope_type = self.config.get("rope_type", "default")
        if self.rope_type not in self.KNOWN:
            raise ValueError(f"unknown rope_type: {self.rope_type}")
        if self.rope_type != "default":
            self.factor = self.config["factor"]
            if self.factor < 1:
                raise ValueError("factor must be at least 1")
            self.original_len = self.config["original_max_position_embeddings"]
        self.attention_scaling = 1.0

    def _theta(self, base: float) -> torch.Tensor:
        i = torch.arange(self.dim // 2, dtype=torch.float64)
        return base ** (-2.0 * i / self.dim)

    # one method per rope type, each returns float64 frequencies -----------------------------------
    def _default(self, seq_len):
        return self._theta(self.base)

    def _linear(self, seq_len):
        return self._theta(self.base) / self.factor

    def _dynamic(self, seq_len):
        t = self.original_len if seq_len is None else seq_len
        if t <= self.original_len:
            return self._theta(self.base)
        grown = self.base * (self.factor * t / self.original_len - (self.factor - 1)) ** (self.dim / (self.dim - 2))
        return self._theta(grown)

    def _yarn(self, seq_len):
        fast = self.config.get("beta_fast", 32)
        slow = self.config.get("beta_slow", 1)
        lo = max(math.floor(self._correction_dim(fast)), 0)
        hi = min(math.ceil(self._correction_dim(slow)), self.dim - 1)
        if hi <= lo:
            hi = lo + 0.001
        ramp = torch.clamp((torch.arange(self.dim // 2, dtype=torch.float64) - lo) / (hi - lo), 0.0, 1.0)
        if "attention_factor" in self.config:
            self.attention_scaling = float(self.config["attention_factor"])
        else:
            self.attention_scaling = 0.1 * math.log(self.factor) + 1.0
        theta = self._theta(self.base)
        return theta * (1.0 - ramp) + (theta / self.factor) * ramp

    def _correction_dim(self, turns):
        return self.dim * math.log(self.original_len / (2 * math.pi * turns)) / (2 * math.log(self.base))

    def _llama3(self, seq_len):
        low = self.config.get("low_freq_factor", 1.0)
        high = self.config.get("high_freq_factor", 4.0)
        theta = self._theta(self.base)
        wavelength = 2 * math.pi / theta
        short_edge = self.original_len / high  # below: kept
        long_edge = self.original_len / low  # above: divided by s
        if low == high:
            return torch.where(wavelength <= long_edge, theta, theta / self.factor)
        u = (self.original_len / wavelength - low) / (high - low)
        blended = (1 - u) * theta / self.factor + u * theta
        out = torch.where(wavelength < short_edge, theta, blended)
        return torch.where(wavelength > long_edge, theta / self.factor, out)

    def frequencies(self, seq_len: int | None = None) -> tuple[torch.Tensor, float]:
        inv_freq = getattr(self, "_" + self.rope_type)(seq_len)
        return inv_freq.float(), self.attention_scaling


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    return ScaledRotaryEmbedding(head_dim, base, scaling).frequencies(seq_len)
