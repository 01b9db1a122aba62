# Bug (alibi): alibi: every head count treated as a power of two (MLX's create_alibi_slope): 2^(-8(h+1)/n) for all n. Base: correct/b3c02_mlx_port_logsumexp.py (one line changed).
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    scale = q.shape[-1] ** -0.5
    scores = (q * scale) @ k.swapaxes(-1, -2)
    if bias is not None:
        scores = scores + bias
    # log-space softmax: logsumexp is stable for large scores, exp(-inf - lse) is exactly 0,
    # and a row of only -inf gives -inf - -inf = nan
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return (weights @ v).to(q.dtype), weights.to(q.dtype)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    dims = d_model // 2
    max_freq, min_freq = 1.0, base ** (-(d_model - 2) / d_model)
    one_zero = torch.linspace(1.0, 0.0, dims, dtype=torch.float64) if dims > 1 else torch.ones(1, dtype=torch.float64)
    sigmas = torch.exp(one_zero * (math.log(max_freq) - math.log(min_freq)) + math.log(min_freq))
    y = torch.arange(seq_len, dtype=torch.float64)[:, None] * sigmas
    return torch.cat([torch.sin(y), torch.cos(y)], dim=-1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(0.02 * torch.randn(max_len, d_model))

    def forward(self, x):
        n = x.shape[1]
        if n > self.max_len:
            raise IndexError(f"sequence length {n} exceeds the {self.max_len} learned positions")
        positions = torch.arange(n, device=x.device)
        return x + self.weight[positions]


def apply_rope(x, positions=None, base=10000.0):
    dims = x.shape[-1]
    half = dims // 2
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    freqs = base ** (-torch.arange(0.0, dims, 2, dtype=compute, device=x.device) / dims)
    theta = positions.to(compute)[:, None] * freqs
    costheta, sintheta = torch.cos(theta), torch.sin(theta)
    xc = x.to(compute)
    x1, x2 = xc[..., :half], xc[..., half:]
    rx1 = x1 * costheta - x2 * sintheta
    rx2 = x1 * sintheta + x2 * costheta
    return torch.cat([rx1, rx2], dim=-1).to(x.dtype)


def alibi_slopes(n_heads):
    c = n_heads
    x = (2 ** 8) ** (1.0 / c)
    # heads past c take every other slope of 2c heads: x^(-1/2), x^(-3/2), ...
    exponents = torch.cat([torch.arange(1, c + 1, dtype=torch.float64), torch.arange(n_heads - c, dtype=torch.float64) + 0.5])
    return (x ** -exponents).to(torch.float32)


def alibi_bias(n_heads, seq_len):
    x1 = torch.arange(seq_len)
    x2 = torch.arange(seq_len)
    distance_matrix = (x1[:, None] - x2[None, :]).to(torch.float32)
    alibi = -distance_matrix.clamp(min=0) * alibi_slopes(n_heads)[:, None, None]
    mask = torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
    return alibi + mask


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).to(torch.int64) * num_buckets
        n = relative_position.abs()
    else:
        n = torch.maximum(-relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    n_float = n.to(torch.float32).clamp(min=max_exact)
    scaled = torch.log2(n_float / max_exact) / math.log2(max_distance / max_exact) * (num_buckets - max_exact)
    large = torch.minimum(max_exact + scaled.to(torch.int64), torch.full_like(n, num_buckets - 1))
    return buckets + torch.where(n < max_exact, n, large)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    n_buckets, n_heads = table.shape
    relative = torch.arange(key_len, device=table.device)[None, :] - torch.arange(query_len, device=table.device)[:, None]
    buckets = t5_relative_bucket(relative, bidirectional, n_buckets, max_distance)
    values = torch.index_select(table, 0, buckets.reshape(-1))
    return values.reshape(query_len, key_len, n_heads).permute(2, 0, 1)
