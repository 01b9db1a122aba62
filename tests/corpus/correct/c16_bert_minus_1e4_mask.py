# Styles: BERT/nanoGPT-era code: future mask as the finite constant -10000.0 (BERT's extended attention mask) via masked_fill; nn.Embedding table with a registered position_ids buffer; sinusoidal via np.outer in float64 with np.dstack interleaving; RoPE half pairing with index_select-gathered cos/sin tables.
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    if bias is not None:
        att = att + bias
    att = F.softmax(att, dim=-1)
    return att @ v, att


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv = np.power(float(base), -np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    ang = np.outer(np.arange(seq_len, dtype=np.float64), inv)
    table = np.dstack([np.sin(ang), np.cos(ang)]).reshape(seq_len, d_model)
    return torch.as_tensor(table, dtype=torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.block_size = max_len
        self.wpe = nn.Embedding(max_len, d_model)
        torch.nn.init.normal_(self.wpe.weight, mean=0.0, std=0.02)
        self.register_buffer("position_ids", torch.arange(max_len))

    def forward(self, x):
        b, t, _ = x.size()
        if t > self.block_size:
            raise ValueError(f"Cannot forward sequence of length {t}, block size is only {self.block_size}")
        return x + self.wpe(self.position_ids[:t])


def apply_rope(x, positions=None, base=10000.0):
    T, D = x.shape[-2:]
    half = D // 2
    pos = torch.arange(T, device=x.device) if positions is None else positions.to(x.device)
    table_len = T if positions is None or x.device.type == "meta" else max(int(pos.max()) + 1, T)
    inv = base ** (-torch.arange(0, D, 2, dtype=torch.float64, device=x.device) / D)
    angles = torch.arange(table_len, dtype=torch.float64, device=x.device)[:, None] * inv
    cos = angles.cos().index_select(0, pos)
    sin = angles.sin().index_select(0, pos)
    wd = torch.float64 if x.dtype == torch.float64 else torch.float32
    x1, x2 = x[..., :half].to(wd), x[..., half:].to(wd)
    cos, sin = cos.to(wd), sin.to(wd)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def alibi_slopes(n_heads):
    c = 2 ** math.floor(math.log2(n_heads))
    slopes = [2.0 ** (-8.0 * (h + 1) / c) for h in range(c)]
    slopes += [2.0 ** (-8.0 * (h + 1) / (2 * c)) for h in range(0, 2 * (n_heads - c), 2)]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    r = torch.arange(seq_len)
    dist = (r[:, None] - r[None, :]).float()
    causal = torch.tril(torch.ones(seq_len, seq_len)).view(1, seq_len, seq_len)
    bias = -alibi_slopes(n_heads).view(-1, 1, 1) * dist
    return bias.masked_fill(causal == 0, -10000.0)
