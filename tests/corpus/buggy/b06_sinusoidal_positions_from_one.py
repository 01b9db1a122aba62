# Bug: positions start at 1 instead of 0. Base: correct/c08_neox_rotary_mpt_alibi.py. Should fail: sinusoidal: first rows, values at many positions.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    norm_factor = math.sqrt(q.shape[-1])
    attn_scores = torch.einsum("...id,...jd->...ij", q, k) / norm_factor
    if bias is not None:
        attn_scores = attn_scores + bias
    attn_probs = torch.nn.functional.softmax(attn_scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", attn_probs, v), attn_probs


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0.0, d_model, 2.0, dtype=torch.float64) / d_model))
    sinusoid_inp = torch.einsum("i,j->ij", torch.arange(1, seq_len + 1, dtype=torch.float64), inv_freq)
    out = torch.empty(seq_len, d_model, dtype=torch.float32)
    out[:, 0::2] = sinusoid_inp.sin()
    out[:, 1::2] = sinusoid_inp.cos()
    return out


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.register_buffer("position_ids", torch.arange(max_len), persistent=False)

    def forward(self, x):
        seq_length = x.shape[1]
        if seq_length > self.max_len:
            raise ValueError(f"seq_length {seq_length} > max_position_embeddings {self.max_len}")
        return x + self.position_embeddings(self.position_ids[:seq_length])


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.seq_len_cached = 0
        self.cos_cached = self.sin_cached = None

    def forward(self, seq_len):
        if seq_len > self.seq_len_cached:
            self.seq_len_cached = seq_len
            t = torch.arange(seq_len, dtype=torch.float64, device=self.inv_freq.device)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.cos_cached, self.sin_cached = emb.cos(), emb.sin()
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


_ROTARY = {}


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    key = (x.shape[-1], float(base), x.device.type)
    if key not in _ROTARY:
        _ROTARY[key] = RotaryEmbedding(x.shape[-1], base).to(x.device)
    rotary = _ROTARY[key]
    if positions is None:
        cos, sin = rotary(x.shape[-2])
    else:
        cos, sin = rotary(int(positions.max()) + 1)
        cos, sin = cos[positions], sin[positions]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin, xw = cos.to(work), sin.to(work), x.to(work)
    return (xw * cos + rotate_half(xw) * sin).to(x.dtype)


def gen_slopes(n_heads, alibi_bias_max=8):
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes


def alibi_slopes(n_heads):
    return gen_slopes(n_heads)


def alibi_bias(n_heads, seq_len):
    rel = torch.arange(seq_len).view(-1, 1) - torch.arange(seq_len).view(1, -1)  # i - j
    bias = -gen_slopes(n_heads).view(-1, 1, 1) * rel.float()
    return bias.masked_fill(rel < 0, float("-inf"))
