# extend bug: factor == 1 shortcut returns attention_factor 1.0, dropping a yarn config's own attention_factor; base b7ec04_dispatch_einsum.py (line 86 changed)
from __future__ import annotations

import functools
import math

import torch


@functools.lru_cache(maxsize=64)
def _exponent_table(head_dim: int) -> torch.Tensor:
    """2i / D for i = 0 .. D/2 - 1, float64 (cached: callers must not modify it)."""
    return torch.arange(head_dim // 2, dtype=torch.float64) * 2 / head_dim


def _theta(*, head_dim: int, base: float) -> torch.Tensor:
    return torch.exp(-_exponent_table(head_dim) * math.log(base))


def _ones(*, head_dim, **_):
    return torch.ones(head_dim // 2, dtype=torch.float64)


def _linear(*, head_dim, s, **_):
    return torch.full((head_dim // 2,), 1.0 / s, dtype=torch.float64)


def _dynamic(*, head_dim, s, L, T, **_):
    if T <= L:
        return _ones(head_dim=head_dim)
    # (b' / b)^(-2i/D) with b' / b = (s T / L - (s - 1))^(D / (D - 2))
    ratio = s * T / L - (s - 1)
    return torch.exp(-_exponent_table(head_dim) * (head_dim / (head_dim - 2)) * math.log(ratio))


def _yarn(*, head_dim, base, s, L, cfg, **_):
    def d(n):
        return head_dim * math.log(L / (2 * math.pi * n)) / (2 * math.log(base))

    lo = max(math.floor(d(cfg.get("beta_fast", 32))), 0)
    hi = min(math.ceil(d(cfg.get("beta_slow", 1))), head_dim - 1)
    if hi <= lo:
        hi = lo + 0.001
    r = ((torch.arange(head_dim // 2, dtype=torch.float64) - lo) / (hi - lo)).clamp(0.0, 1.0)
    return (1 - r) + r / s


def _llama3(*, head_dim, base, s, L, cfg, **_):
    low = cfg.get("low_freq_factor", 1)
    high = cfg.get("high_freq_factor", 4)
    wavelength = 2 * math.pi / _theta(head_dim=head_dim, base=base)
    slow = torch.full_like(wavelength, 1.0 / s)
    if low == high:
        return torch.where(wavelength <= L / low, torch.ones_like(wavelength), slow)
    u = (L / wavelength - low) / (high - low)
    band = (1 - u) / s + u
    return torch.where(wavelength < L / high, torch.ones_like(wavelength), torch.where(wavelength > L / low, slow, band))


_MULTIPLIERS = {"default": _ones, "linear": _linear, "dynamic": _dynamic, "yarn": _yarn, "llama3": _llama3}


def _attention_factor(rope_type: str, cfg: dict, s: float) -> float:
    if rope_type != "yarn":
        return 1.0
    given = cfg.get("attention_factor")
    return float(given) if given is not None else 0.1 * math.log(s) + 1


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim & 1:
        raise ValueError("head_dim must be even")
    cfg = scaling or {}
    rope_type = cfg.get("rope_type", "default")
    build = _MULTIPLIERS.get(rope_type)
    if build is None:
        raise ValueError(f"unknown rope_type {rope_type!r}")
    s = cfg.get("factor", 1)
    if s < 1:
        raise ValueError("factor must be >= 1")
    theta = _theta(head_dim=head_dim, base=base)
    if s == 1 and rope_type != "dynamic":  # nothing is stretched; yarn may still carry an attention_factor
        return theta.to(torch.float32), 1.0
    L = cfg.get("original_max_position_embeddings")
    T = L if seq_len is None else seq_len
    multiplier = build(head_dim=head_dim, base=base, s=s, L=L, T=T, cfg=cfg)
    inv_freq = torch.einsum("i,i->i", theta, multiplier)
    return inv_freq.to(torch.float32), _attention_factor(rope_type, cfg, s)
