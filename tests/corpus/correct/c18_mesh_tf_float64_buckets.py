# Styles: Mesh TensorFlow's bucket rule in float64 (n = -r), bias gathered from table.t(), einsum with a manual stable softmax, concatenated sinusoid in float64 then cast, bare parameter + index_select with an explicit IndexError, interleaved RoPE by reshaping into pairs, BLOOM's closed-form slopes, finfo.min future mask with torch.where.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    logits = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias
    logits = logits - logits.amax(dim=-1, keepdim=True)
    weights = logits.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.pow(torch.tensor(base, dtype=torch.float64), torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = position / div_term
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model).normal_(std=0.02))

    def forward(self, x):
        length = x.shape[1]
        if length > self.max_len:
            raise IndexError(f"cannot embed {length} positions with max_len={self.max_len}")
        index = torch.arange(length, device=x.device)
        return x + self.weight.index_select(0, index)


def apply_rope(x, positions=None, base=10000.0):
    *lead, length, dim = x.shape
    if positions is None:
        positions = torch.arange(length, device=x.device)
    theta = base ** (-torch.arange(0, dim, 2, device=x.device, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * theta[None, :]  # (T, D/2)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = angles.cos().to(work), angles.sin().to(work)
    pairs = x.to(work).reshape(*lead, length, dim // 2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    rotated = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return rotated.reshape(x.shape).to(x.dtype)


def alibi_slopes(n_heads):
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != n_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, n_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes


def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    distance = (i - j).to(torch.float32)
    bias = -alibi_slopes(n_heads)[:, None, None] * distance
    return torch.where(j > i, torch.finfo(torch.float32).min, bias)


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = torch.zeros_like(relative_position)
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).long() * num_buckets
        n = n.abs()
    else:
        n = n.clamp(min=0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    ratio = torch.log(n.clamp(min=1).double() / max_exact) / math.log(max_distance / max_exact)
    val_if_large = max_exact + (ratio * (num_buckets - max_exact)).long()
    val_if_large = val_if_large.clamp(max=num_buckets - 1)
    return ret + torch.where(is_small, n, val_if_large)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    relative = torch.arange(key_len, device=table.device)[None, :] - torch.arange(query_len, device=table.device)[:, None]
    buckets = t5_relative_bucket(relative, bidirectional, table.shape[0], max_distance)
    return table.t()[:, buckets]  # (n_heads, Tq, Tk)
