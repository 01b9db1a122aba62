# Styles: terse functional one-liners; torch.outer angles; ALiBi built as slopes * (j - i) plus a triu(-inf) mask tensor added; learned forward via narrow(); RoPE interleaved via x.view_as pair swap (rotate_every_two, GPT-J). T5 buckets as ln(n) - ln(E) in float32 with clamp, bias via F.embedding.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + (0.0 if bias is None else bias), dim=-1)
    return w @ v, w


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    a = torch.outer(torch.arange(seq_len, dtype=torch.float64),
                    base ** -(torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model))
    return torch.stack([a.sin(), a.cos()], -1).reshape(seq_len, -1).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.emb = nn.Parameter(torch.empty(max_len, d_model).normal_(std=0.02))

    def forward(self, x):
        if x.shape[1] > self.max_len:
            raise ValueError(f"length {x.shape[1]} > max_len {self.max_len}")
        return x + self.emb.narrow(0, 0, x.shape[1])


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, positions=None, base=10000.0):
    positions = torch.arange(x.shape[-2], device=x.device) if positions is None else positions
    inv = base ** -(torch.arange(0, x.shape[-1], 2, device=x.device, dtype=torch.float64) / x.shape[-1])
    ang = torch.outer(positions.double(), inv).repeat_interleave(2, dim=-1)
    wd = torch.float64 if x.dtype == torch.float64 else torch.float32
    xw = x.to(wd)
    return (xw * ang.cos().to(wd) + rotate_every_two(xw) * ang.sin().to(wd)).to(x.dtype)


def alibi_slopes(n_heads):
    c = 1 << int(math.log2(n_heads))
    pw = lambda n: [2 ** (-8 / n * (i + 1)) for i in range(n)]
    return torch.tensor(pw(c) + pw(2 * c)[::2][: n_heads - c], dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    r = torch.arange(seq_len, dtype=torch.float32)
    mask = torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
    return alibi_slopes(n_heads)[:, None, None] * (r[None, :] - r[:, None]).clamp(max=0) + mask


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    nb = num_buckets // 2 if bidirectional else num_buckets
    ex = nb // 2
    ret = (relative_position > 0).long() * nb if bidirectional else torch.zeros_like(relative_position)
    n = relative_position.abs() if bidirectional else (-relative_position).clamp(min=0)
    large = ex + ((torch.log(n.float().clamp(min=1)) - math.log(ex)) * (nb - ex) / math.log(max_distance / ex)).long()
    return ret + torch.where(n < ex, n, large.clamp(max=nb - 1))


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    rel = torch.arange(key_len).unsqueeze(0) - torch.arange(query_len).unsqueeze(1)
    buckets = t5_relative_bucket(rel, bidirectional, table.shape[0], max_distance)
    return nn.functional.embedding(buckets, table).permute(2, 0, 1)
