# Bug: logits divided by D instead of sqrt(D). Base: correct/c03_meta_llama_complex.py. Should fail: attention: values match the formula, values for several shapes.
import math

import numpy as np
import torch
import torch.nn as nn


def attention(q, k, v, bias=None):
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / d_k
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
