# Styles: Meta LLaMA precompute_freqs_cis with torch.polar/view_as_complex (adjacent pairing); sinusoidal in numpy; bare nn.Parameter + index_select; Press et al.'s recursive get_slopes; -inf via torch.triu.
import math

import numpy as np
import torch
import torch.nn as nn


def attention(q, k, v, bias=None):
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if bias is not None:
        scores = scores + bias
    p_attn = scores.softmax(dim=-1)
    return p_attn @ v, p_attn


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pos = np.arange(seq_len)[:, np.newaxis]
    i = np.arange(d_model // 2)[np.newaxis, :]
    angle = pos / np.power(base, 2 * i / d_model)
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return torch.from_numpy(pe).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.trunc_normal_(self.weight, std=0.02)

    def forward(self, x):
        T = x.shape[1]
        if T > self.max_len:
            raise ValueError(f"got T={T} but max_len={self.max_len}")
        idx = torch.arange(T, device=x.device)
        return x + self.weight.index_select(0, idx)


def precompute_freqs_cis(dim, positions, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=positions.device)[: dim // 2].double() / dim))
    freqs = torch.outer(positions.double(), freqs)
    return torch.polar(torch.ones_like(freqs), freqs).to(torch.complex64)


def apply_rope(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    freqs_cis = precompute_freqs_cis(x.shape[-1], positions, base)
    cdtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
    x_ = torch.view_as_complex(x.to(torch.float64 if x.dtype == torch.float64 else torch.float32)
                               .reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(x_ * freqs_cis.to(cdtype)).flatten(-2)
    return out.type_as(x)


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


def alibi_slopes(n_heads):
    return torch.tensor(get_slopes(n_heads), dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    m = alibi_slopes(n_heads)
    ctx = torch.arange(seq_len)[:, None]
    mem = torch.arange(seq_len)[None, :]
    distance = (ctx - mem).float()
    bias = -m.view(-1, 1, 1) * distance
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    return bias.masked_fill(future, float("-inf"))


# ---- decode: complex-number RoPE for both pairings (Meta's freqs_cis), a cache grown with torch.cat, scores plus
# a -inf mask and a float32 softmax as in Meta's Attention.forward.


def _as_complex(x, pairing):
    if pairing == "interleaved":
        return torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    half = x.shape[-1] // 2
    return torch.complex(x[..., :half].contiguous(), x[..., half:].contiguous())


def _from_complex(z, pairing):
    if pairing == "interleaved":
        return torch.view_as_real(z).flatten(-2)
    return torch.cat([z.real, z.imag], dim=-1)


def _rope_complex(x, positions, base, pairing):
    """x [B, H, N, D] times e^(i p theta), positions [B, N]."""
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    freqs = 1.0 / (base ** (torch.arange(0, x.shape[-1], 2, device=x.device).double() / x.shape[-1]))
    angles = positions.double()[..., None] * freqs
    freqs_cis = torch.polar(torch.ones_like(angles), angles)[:, None]
    z = _as_complex(x.to(work), pairing)
    return _from_complex(z * freqs_cis.to(z.dtype), pairing).type_as(x)


def decode(q, k, v, prompt_len, *, cache="rotated", window=None, attention_mask=None,
           position_ids=None, pairing="half", base=10000.0):
    bsz, _, seqlen, head_dim = q.shape
    pad = torch.zeros(bsz, seqlen, dtype=torch.bool, device=q.device)
    if attention_mask is not None:
        pad[:, :prompt_len] = attention_mask == 0
    if position_ids is None:
        position_ids = (~pad).long().cumsum(-1) - 1
    cache_k = cache_v = cache_pos = cache_pad = None
    outputs, start = [], 0
    for end in [prompt_len] + list(range(prompt_len + 1, seqlen + 1)):
        pos = position_ids[:, start:end]
        xk = k[:, :, start:end]
        if cache == "rotated":
            xk = _rope_complex(xk, pos, base, pairing)
        if cache_k is None:
            cache_k, cache_v, cache_pos, cache_pad = xk, v[:, :, start:end], pos, pad[:, start:end]
        else:
            cache_k = torch.cat([cache_k, xk], dim=2)
            cache_v = torch.cat([cache_v, v[:, :, start:end]], dim=2)
            cache_pos = torch.cat([cache_pos, pos], dim=1)
            cache_pad = torch.cat([cache_pad, pad[:, start:end]], dim=1)
        keys = cache_k if cache == "rotated" else _rope_complex(cache_k, cache_pos, base, pairing)
        xq = _rope_complex(q[:, :, start:end], pos, base, pairing)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)
        q_idx = torch.arange(start, end, device=q.device)[:, None]
        k_idx = torch.arange(end - cache_k.shape[2], end, device=q.device)[None, :]
        hidden = (k_idx > q_idx) | cache_pad[:, None, None, :]
        if window is not None:
            hidden = hidden | (k_idx <= q_idx - window)
        mask = torch.zeros_like(scores).masked_fill(hidden, float("-inf"))
        scores = torch.softmax((scores + mask).float(), dim=-1).type_as(xq)
        outputs.append(torch.matmul(scores, cache_v))
        if window is not None:
            cache_k, cache_v = cache_k[:, :, -window:], cache_v[:, :, -window:]
            cache_pos, cache_pad = cache_pos[:, -window:], cache_pad[:, -window:]
        start = end
    return torch.cat(outputs, dim=2), cache_k
