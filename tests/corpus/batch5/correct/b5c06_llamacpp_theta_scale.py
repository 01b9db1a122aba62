# style: llama.cpp/ggml-like: theta walked by a running product of theta_scale = base^(-2/D) in float64, yarn corr dims and rope_yarn_ramp with max(0.001, high - low), llama3 as per-pair freq factors (as convert_hf_to_gguf writes rope_freqs)
from __future__ import annotations

import math

import torch


def _rope_yarn_corr_dim(n_dims, n_ctx_orig, n_rot, base):
    return n_dims * math.log(n_ctx_orig / (n_rot * 2 * math.pi)) / (2 * math.log(base))


def _rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow):
    start = math.floor(_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base))
    end = math.ceil(_rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base))
    return max(0, start), min(n_dims - 1, end)


def _rope_yarn_ramp(low, high, i):
    # 1 for the pairs that keep their own frequency, 0 for the interpolated ones
    y = (i - low) / max(0.001, high - low)
    return 1.0 - min(1.0, max(0.0, y))


def _llama3_freq_factors(n_dims, freq_base, factor, low_freq_factor, high_freq_factor, n_ctx_orig):
    low_freq_wavelen = n_ctx_orig / low_freq_factor
    high_freq_wavelen = n_ctx_orig / high_freq_factor
    factors = []
    theta_scale = freq_base ** (-2.0 / n_dims)
    theta = 1.0
    for _ in range(n_dims // 2):
        wavelen = 2 * math.pi / theta
        if wavelen < high_freq_wavelen:
            factors.append(1.0)
        elif wavelen > low_freq_wavelen:
            factors.append(factor)
        elif low_freq_factor == high_freq_factor:  # the step: wavelen == L / low exactly, kept
            factors.append(1.0)
        else:
            smooth = (n_ctx_orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1 / ((1 - smooth) / factor + smooth))
        theta *= theta_scale
    return factors


def _thetas(n_dims, freq_base):
    theta_scale = freq_base ** (-2.0 / n_dims)
    out, theta = [], 1.0
    for _ in range(n_dims // 2):
        out.append(theta)
        theta *= theta_scale
    return out


def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):
    n_dims = head_dim
    if n_dims % 2:
        raise ValueError("n_dims must be even")
    params = scaling or {"rope_type": "default"}
    rope_type = params.get("rope_type")
    if rope_type not in ("default", "linear", "dynamic", "yarn", "llama3"):
        raise ValueError(f"unknown rope scaling type {rope_type!r}")

    attn_factor = 1.0
    if rope_type == "default":
        return torch.tensor(_thetas(n_dims, base), dtype=torch.float32), attn_factor

    factor = params["factor"]
    if factor < 1:
        raise ValueError("rope scaling factor must be >= 1")
    n_ctx_orig = params["original_max_position_embeddings"]
    freq_scale = 1.0 / factor

    if rope_type == "linear":
        theta = [t * freq_scale for t in _thetas(n_dims, base)]
    elif rope_type == "dynamic":
        n_ctx = n_ctx_orig if seq_len is None else seq_len
        freq_base = base
        if n_ctx > n_ctx_orig:
            freq_base = base * (factor * n_ctx / n_ctx_orig - (factor - 1)) ** (n_dims / (n_dims - 2))
        theta = _thetas(n_dims, freq_base)
    elif rope_type == "yarn":
        low, high = _rope_yarn_corr_dims(
            n_dims, n_ctx_orig, base, params.get("beta_fast", 32.0), params.get("beta_slow", 1.0)
        )
        theta = []
        for i0, theta_extrap in enumerate(_thetas(n_dims, base)):
            theta_interp = freq_scale * theta_extrap
            ramp_mix = _rope_yarn_ramp(low, high, i0)
            theta.append(theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix)
        attn_factor = float(params["attention_factor"]) if "attention_factor" in params else 1.0 + 0.1 * math.log(factor)
    else:
        freq_factors = _llama3_freq_factors(
            n_dims,
            base,
            factor,
            params.get("low_freq_factor", 1.0),
            params.get("high_freq_factor", 4.0),
            n_ctx_orig,
        )
        theta = [t / ff for t, ff in zip(_thetas(n_dims, base), freq_factors)]
    return torch.tensor(theta, dtype=torch.float32), attn_factor
