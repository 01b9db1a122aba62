# Styles: PyTorch-tutorial sinusoidal (float32 exp/log div_term, pe[:, 0::2] assignment); unflatten-to-pairs RoPE with float32 angles; learned table zero-init + trunc_normal; ALiBi with finfo(dtype).min and masked_fill (HF practice).
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    d = q.shape[-1]
    scores = torch.matmul(q / math.sqrt(d), k.transpose(-2, -1))
    if bias is not None:
        scores = scores + bias
    weights = nn.functional.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = torch.arange(seq_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(base) / d_model))
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.pe = nn.Parameter(torch.zeros(max_len, d_model))
        nn.init.trunc_normal_(self.pe, std=0.02)

    def forward(self, x):
        if x.size(1) > self.max_len:
            raise ValueError(f"Sequence length {x.size(1)} > max_len {self.max_len}")
        return x + self.pe[None, : x.size(1), :]


def apply_rope(x, positions=None, base=10000.0):
    T, D = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, D, 2, device=x.device).float() / D))
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = angles.cos(), angles.sin()
    wd = torch.float64 if x.dtype == torch.float64 else torch.float32
    pairs = x.to(wd).unflatten(-1, (D // 2, 2))
    a, b = pairs[..., 0], pairs[..., 1]
    cos, sin = cos.to(wd), sin.to(wd)
    out = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    n = 2 ** math.floor(math.log2(n_heads))
    m0 = 2.0 ** (-8.0 / n)
    slopes = torch.pow(m0, torch.arange(1, n + 1, dtype=torch.float64))
    if n < n_heads:
        m1 = 2.0 ** (-4.0 / n)
        extra = torch.pow(m1, torch.arange(1, 2 * (n_heads - n), 2, dtype=torch.float64))
        slopes = torch.cat([slopes, extra])
    return slopes.float()


def alibi_bias(n_heads, seq_len):
    dtype = torch.float32
    pos = torch.arange(seq_len)
    distance = (pos.view(-1, 1) - pos.view(1, -1)).to(dtype)
    bias = -alibi_slopes(n_heads).view(n_heads, 1, 1) * distance
    return bias.masked_fill(distance < 0, torch.finfo(dtype).min)
