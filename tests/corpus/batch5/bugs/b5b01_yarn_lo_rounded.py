# extend bug (base b5c04_pure_python_lists): yarn's lo is d(beta_fast) rounded to the nearest pair (round) instead of floored
from __future__ import annotations

import math

import torch


def _thetas(head_dim, base):
    return [base ** (-2 * i / head_dim) for i in range(head_dim // 2)]


def _correction_dim(turns, head_dim, base, trained_len):
    return head_dim * math.log(trained_len / (2 * math.pi * turns)) / (2 * math.log(base))


def _yarn(thetas, head_dim, base, cfg):
    s = cfg["factor"]
    trained_len = cfg["original_max_position_embeddings"]
    d_fast = _correction_dim(cfg.get("beta_fast", 32), head_dim, base, trained_len)
    d_slow = _correction_dim(cfg.get("beta_slow", 1), head_dim, base, trained_len)
    lo = max(round(d_fast), 0)
    hi = min(math.ceil(d_slow), head_dim - 1)
    if hi <= lo:
        hi = lo + 0.001
    out = []
    for i, theta in enumerate(thetas):
        r = min(1.0, max(0.0, (i - lo) / (hi - lo)))
        out.append(theta * (1 - r) + theta / s * r)
    return out


def _apply_scaling(freqs, cfg):
    scale_factor = cfg["factor"]
    low_freq_factor = cfg.get("low_freq_factor", 1)
    high_freq_factor = cfg.get("high_freq_factor", 4)
    old_context_len = cfg["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if low_freq_factor == high_freq_factor:
            new_freqs.append(freq if wavelen <= low_freq_wavelen else freq / scale_factor)
        elif wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return new_freqs


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    rope_type = "default" if scaling is None else scaling["rope_type"]
    if rope_type not in ("default", "linear", "dynamic", "yarn", "llama3"):
        raise ValueError(f"unknown rope_type {rope_type!r}")
    if rope_type != "default" and scaling["factor"] < 1:
        raise ValueError("factor must be >= 1")

    thetas = _thetas(head_dim, base)
    attention_factor = 1.0
    if rope_type == "linear":
        thetas = [t / scaling["factor"] for t in thetas]
    elif rope_type == "dynamic":
        trained_len = scaling["original_max_position_embeddings"]
        T = trained_len if seq_len is None else seq_len
        if T > trained_len:
            s = scaling["factor"]
            new_base = base * (s * T / trained_len - (s - 1)) ** (head_dim / (head_dim - 2))
            thetas = _thetas(head_dim, new_base)
    elif rope_type == "yarn":
        thetas = _yarn(thetas, head_dim, base, scaling)
        if "attention_factor" in scaling:
            attention_factor = float(scaling["attention_factor"])
        else:
            attention_factor = 0.1 * math.log(scaling["factor"]) + 1
    elif rope_type == "llama3":
        thetas = _apply_scaling(thetas, scaling)
    return torch.tensor(thetas, dtype=torch.float32), attention_factor
