# Styles: Hugging Face T5 (_relative_position_bucket verbatim, F.embedding of the buckets), softmax in float32 then type_as, DistilBERT's j // 2 sinusoid in numpy (vectorised), nn.Embedding + position_ids buffer, rotate_half, Press's recursive get_slopes, triu + masked_fill mask.
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    scores = torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5
    if bias is not None:
        scores = scores + bias
    weights = F.softmax(scores.float(), dim=-1).type_as(scores)
    return torch.matmul(weights, v), weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = np.arange(seq_len, dtype=np.float64)[:, None]
    angle = position / np.power(base, 2 * (np.arange(d_model) // 2) / d_model)
    table = np.zeros((seq_len, d_model))
    table[:, 0::2] = np.sin(angle[:, 0::2])
    table[:, 1::2] = np.cos(angle[:, 1::2])
    return torch.from_numpy(table).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.register_buffer("position_ids", torch.arange(max_len).expand((1, -1)), persistent=False)

    def forward(self, x):
        seq_length = x.size(1)
        if seq_length > self.max_len:
            raise ValueError(f"Sequence length {seq_length} exceeds max_len {self.max_len}")
        return x + self.position_embeddings(self.position_ids[:, :seq_length])


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=x.device).double() / dim))
    freqs = torch.outer(positions.double(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = emb.cos().to(work), emb.sin().to(work)
    xw = x.to(work)
    return (xw * cos + rotate_half(xw) * sin).to(x.dtype)


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


def alibi_slopes(n_heads):
    return torch.tensor(get_slopes(n_heads), dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    context = torch.arange(seq_len)[:, None]
    memory = torch.arange(seq_len)[None, :]
    bias = alibi_slopes(n_heads)[:, None, None] * (memory - context).float()
    future = torch.triu(torch.ones(seq_len, seq_len), diagonal=1).bool()
    return bias.masked_fill(future, float("-inf"))


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    context_position = torch.arange(query_len, dtype=torch.long, device=table.device)[:, None]
    memory_position = torch.arange(key_len, dtype=torch.long, device=table.device)[None, :]
    relative_position = memory_position - context_position
    buckets = t5_relative_bucket(relative_position, bidirectional, table.shape[0], max_distance)
    values = F.embedding(buckets, table)  # (query_len, key_len, n_heads)
    return values.permute([2, 0, 1])
