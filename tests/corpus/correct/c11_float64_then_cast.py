# Styles: compute everything in float64 and cast back at the end; attention upcasts q, k, v; explicit IndexError check then index_select on an nn.Parameter; ALiBi slopes via log2 geometric sequence in float64; torch.finfo(float32).min future mask.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    q64, k64, v64 = q.double(), k.double(), v.double()
    logits = q64 @ k64.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias.double()
    weights = torch.softmax(logits, dim=-1)
    return (weights @ v64).to(q.dtype), weights.to(q.dtype)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    p = torch.arange(seq_len, dtype=torch.float64).unsqueeze(-1)
    i = torch.arange(d_model // 2, dtype=torch.float64)
    angle = p * torch.exp(-2.0 * i / d_model * math.log(base))
    table = torch.empty(seq_len, d_model, dtype=torch.float64)
    table[:, ::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table.float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        T = x.size(-2)
        if T > self.max_len:
            raise IndexError(f"sequence length {T} exceeds the {self.max_len} positions of the table (max_len)")
        return x + torch.index_select(self.weight, 0, torch.arange(T, device=self.weight.device))


def apply_rope(x, positions=None, base=10000.0):
    T, D = x.shape[-2:]
    pos = torch.arange(T, device=x.device) if positions is None else positions
    freq = torch.exp(-math.log(base) * torch.arange(0, D, 2, dtype=torch.float64, device=x.device) / D)
    ang = pos.to(torch.float64)[:, None] * freq[None, :]
    x64 = x.double()
    even, odd = x64[..., 0::2], x64[..., 1::2]
    out = torch.empty_like(x64)
    out[..., 0::2] = even * ang.cos() - odd * ang.sin()
    out[..., 1::2] = even * ang.sin() + odd * ang.cos()
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    def geometric(n):
        return 2.0 ** (-8.0 / n * torch.arange(1, n + 1, dtype=torch.float64))
    c = 2 ** int(math.log2(n_heads))
    slopes = geometric(c)
    if c < n_heads:
        slopes = torch.cat([slopes, geometric(2 * c)[0::2][: n_heads - c]])
    return slopes.to(torch.float32)


def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len, dtype=torch.float64)[:, None]
    j = torch.arange(seq_len, dtype=torch.float64)[None, :]
    bias = -alibi_slopes(n_heads).double()[:, None, None] * (i - j)
    bias = bias.float()
    return bias.masked_fill(j > i, torch.finfo(torch.float32).min)
