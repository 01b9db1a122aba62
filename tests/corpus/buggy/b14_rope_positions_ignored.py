# Bug: the positions argument is ignored (always 0..T-1). Base: correct/c12_fairseq_embedding_subclass.py. Should fail: rope: position zero is identity (explicit zeros), scores depend only on offset, values explicit positions.
import math

import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    attn_weights = torch.matmul(q, k.transpose(-1, -2)) * (q.size(-1) ** -0.5)
    if bias is not None:
        attn_weights = attn_weights + bias
    softmax_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=softmax_dtype).to(q.dtype)
    return torch.matmul(attn_weights, v), attn_weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    half_dim = d_model // 2
    emb = math.log(base) * 2.0 / d_model
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float64) * -emb)
    emb = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1) * emb.unsqueeze(0)
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).float()


class LearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, max_len, d_model):
        super().__init__(max_len, d_model)
        nn.init.normal_(self.weight, mean=0, std=0.02)
        self.max_len = max_len

    def forward(self, x):
        seq_len = x.size(1)
        if seq_len > self.max_len:
            raise ValueError(f"sequence length {seq_len} is longer than max_len ({self.max_len})")
        positions = torch.arange(seq_len, device=x.device)
        return x + super().forward(positions)


def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    positions = torch.arange(x.shape[-2], device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device).double() / dim))
    freqs = positions.double()[:, None] * inv_freq
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = freqs.cos().to(compute), freqs.sin().to(compute)
    x1, x2 = x.to(compute).chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).type(x.dtype)


def alibi_slopes(n_heads):
    start = lambda n: 2 ** (-(2 ** -(math.log2(n) - 3)))
    c = 2 ** math.floor(math.log2(n_heads))
    s = [start(c) ** (i + 1) for i in range(c)]
    s += [start(2 * c) ** (i + 1) for i in range(0, 2 * (n_heads - c), 2)]
    return torch.as_tensor(s, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    context_position = torch.arange(seq_len)[:, None]
    memory_position = torch.arange(seq_len)[None, :]
    relative_position = memory_position - context_position  # j - i
    bias = alibi_slopes(n_heads)[:, None, None] * relative_position.float()
    future = relative_position > 0
    return bias.masked_fill(future, float("-inf"))
