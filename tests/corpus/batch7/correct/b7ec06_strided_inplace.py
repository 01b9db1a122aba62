# style: copy of the dict with setdefault for the type's defaults, b^(-j/D) over all j then a non-contiguous [::2] view edited in place
from __future__ import annotations

import math

import torch

_DEFAULTS = {
    "default": {},
    "linear": {},
    "dynamic": {},
    "yarn": {"beta_fast": 32.0, "beta_slow": 1.0, "attention_factor": None},
    "llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
}


def _every_other(head_dim: int, base: float) -> torch.Tensor:
    """A float32 [D/2] view with stride 2 into b^(-j/D), j = 0 .. D-1 (so element i is b^(-2i/D))."""
    j = torch.arange(head_dim, dtype=torch.float64)
    full = torch.pow(float(base), -j / head_dim).to(torch.float32)
    return full[::2]


def scaled_inv_freq(
    head_dim: int, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[torch.Tensor, float]:
    """(inv_freq float32 [head_dim / 2], attention_factor) of RoPE under ``scaling``."""
    if head_dim % 2 == 1:
        raise ValueError("head_dim must be even")
    cfg = dict(scaling) if scaling is not None else {}  # a private copy: the caller's dict is never touched
    cfg.setdefault("rope_type", "default")
    if cfg["rope_type"] not in _DEFAULTS:
        raise ValueError(f"unknown rope_type {cfg['rope_type']!r}")
    for key, value in _DEFAULTS[cfg["rope_type"]].items():
        cfg.setdefault(key, value)
    s = cfg.setdefault("factor", 1.0)
    if s < 1:
        raise ValueError("factor must be >= 1")
    kind = cfg["rope_type"]

    if kind == "dynamic":
        L = cfg["original_max_position_embeddings"]
        T = L if seq_len is None else seq_len
        if T > L:
            base = base * (s * T / L - (s - 1)) ** (head_dim / (head_dim - 2))
        return _every_other(head_dim, base), 1.0

    inv = _every_other(head_dim, base)  # non-contiguous; the writes below go through to its private storage

    if kind == "linear":
        inv.div_(s)
    elif kind == "yarn":
        L = cfg["original_max_position_embeddings"]
        d_fast = head_dim * math.log(L / (2 * math.pi * cfg["beta_fast"])) / (2 * math.log(base))
        d_slow = head_dim * math.log(L / (2 * math.pi * cfg["beta_slow"])) / (2 * math.log(base))
        lo = max(math.floor(d_fast), 0)
        hi = min(math.ceil(d_slow), head_dim - 1)
        if hi <= lo:
            hi = lo + 0.001
        r = torch.arange(head_dim // 2, dtype=torch.float64).sub_(lo).div_(hi - lo).clamp_(0.0, 1.0)
        inv.mul_(r.neg().add_(1.0).add_(r / s))  # theta (1 - r) + (theta / s) r = theta (1 - r + r / s)
    elif kind == "llama3":
        L = cfg["original_max_position_embeddings"]
        low, high = cfg["low_freq_factor"], cfg["high_freq_factor"]
        wavelength = 2 * math.pi / inv.double()
        if low == high:
            inv[wavelength > L / low] /= s
        else:
            band = (wavelength >= L / high) & (wavelength <= L / low)
            u = (L / wavelength[band] - low) / (high - low)
            inv[band] = (inv[band].double() * ((1 - u) / s + u)).float()
            inv[wavelength > L / low] /= s

    attention_factor = 1.0
    if kind == "yarn":
        given = cfg["attention_factor"]
        attention_factor = 0.1 * math.log(s) + 1 if given is None else float(given)
    return inv, attention_factor
