# Styles: einsum throughout (attention, angles, ALiBi outer product), interleaved RoPE via stack/flatten, nn.Parameter table, -inf mask via torch.where. T5 buckets in float64 via torch.where, bias heads-first via einsum.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.to(scores.dtype)
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)
    inv = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    ang = torch.einsum("p,f->pf", pos, inv)
    return torch.stack((ang.sin(), ang.cos()), dim=-1).flatten(-2).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x):
        t = x.shape[1]
        if t > self.max_len:
            raise ValueError(f"sequence length {t} exceeds max_len {self.max_len}")
        return x + self.table[:t]


def apply_rope(x, positions=None, base=10000.0):
    t, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(t, device=x.device)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)
    ang = torch.einsum("t,f->tf", positions.to(torch.float64), inv)
    cos, sin = ang.cos().to(work), ang.sin().to(work)
    xw = x.to(work)
    a, b = xw[..., 0::2], xw[..., 1::2]
    out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    def geo(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    c = 2 ** int(math.floor(math.log2(n_heads)))
    s = geo(c) + geo(2 * c)[0::2][: n_heads - c]
    return torch.tensor(s, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    pos = torch.arange(seq_len, dtype=torch.float32)
    dist = pos[:, None] - pos[None, :]  # i - j
    bias = -torch.einsum("h,ij->hij", alibi_slopes(n_heads), dist)
    return torch.where(dist < 0, torch.tensor(float("-inf")), bias)


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    r = relative_position
    per_side = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        start = torch.where(r > 0, per_side, 0)
        n = r.abs()
    else:
        start = torch.zeros_like(r)
        n = torch.where(r < 0, -r, 0)
    exact = per_side // 2
    ratio = torch.log(n.double().clamp(min=1) / exact) / math.log(max_distance / exact)
    far = exact + (ratio * (per_side - exact)).floor().long()
    far = torch.where(far > per_side - 1, per_side - 1, far)
    return start + torch.where(n < exact, n, far)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    rel = torch.arange(key_len)[None, :] - torch.arange(query_len)[:, None]  # j - i
    buckets = t5_relative_bucket(rel, bidirectional, table.shape[0], max_distance)
    return torch.einsum("qkh->hqk", table[buckets])
