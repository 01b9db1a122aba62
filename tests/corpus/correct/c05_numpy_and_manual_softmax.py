# Styles: manual stable softmax (subtract max, exp, normalise); Jay Alammar-style numpy sinusoidal with 2*(i//2) exponent; half RoPE pairing with torch.cat; numpy ALiBi slopes; learned table with IndexError from explicit check (Python indexing practice).
import math

import numpy as np
import torch
import torch.nn as nn


def attention(q, k, v, bias=None):
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if bias is not None:
        s = s + bias
    s = s - s.amax(dim=-1, keepdim=True)
    e = torch.exp(s)
    w = e / e.sum(dim=-1, keepdim=True)
    return torch.matmul(w, v), w


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    def get_angles(pos, i, d_model):
        angle_rates = 1 / np.power(base, (2 * (i // 2)) / np.float64(d_model))
        return pos * angle_rates

    angle_rads = get_angles(np.arange(seq_len)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model)
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    return torch.tensor(angle_rads, dtype=torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Parameter(0.02 * torch.randn(max_len, d_model))

    def forward(self, x):
        length = x.shape[1]
        if length > self.max_len:
            raise IndexError(f"position {length - 1} out of range for a table of {self.max_len} rows "
                             f"(sequence length {length}, max_len {self.max_len})")
        return x + self.embedding[:length]


def apply_rope(x, positions=None, base=10000.0):
    half = x.shape[-1] // 2
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    freqs = base ** (-torch.arange(half, dtype=torch.float64, device=x.device) * 2 / x.shape[-1])
    angles = positions.double()[:, None] * freqs
    dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = angles.cos().to(dt), angles.sin().to(dt)
    x1, x2 = x[..., :half].to(dt), x[..., half:].to(dt)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).to(x.dtype)


def alibi_slopes(n_heads):
    c = 2 ** int(np.floor(np.log2(n_heads)))
    first = 2.0 ** (-8.0 * np.arange(1, c + 1) / c)
    rest = 2.0 ** (-8.0 * np.arange(1, 2 * c + 1) / (2 * c))[::2][: n_heads - c]
    return torch.from_numpy(np.concatenate([first, rest])).float()


def alibi_bias(n_heads, seq_len):
    slopes = alibi_slopes(n_heads)
    r = torch.arange(seq_len, dtype=torch.float32)
    rel = r.view(1, -1) - r.view(-1, 1)  # j - i, <= 0 for the past
    bias = slopes.view(-1, 1, 1) * rel.unsqueeze(0)
    bias = bias.masked_fill(rel.unsqueeze(0) > 0, -math.inf)
    return bias
