# Style: JAX/Flax code ported to PyTorch: Flax's dot_product_attention_weights (query divided by sqrt(depth) first, einsum, softmax with a stop-gradient max); Gemma's apply_rope (timescale = base^(2i/D), division, split halves); Flax lm1b sinusoidal_init (zeros, sin/cos assigned to column halves, float32); AddPositionEmbs; make_causal_mask + where(mask, bias, big_neg); T5X's bucket rule (int32, + float32 eps inside the log); T5X one-hot einsum for the bias.
import math

import torch
from torch import nn


def _softmax(x, axis=-1):
    # jax.nn.softmax: the shift is a constant for autodiff
    unnormalized = torch.exp(x - x.amax(dim=axis, keepdim=True).detach())
    return unnormalized / unnormalized.sum(dim=axis, keepdim=True)


def attention(q, k, v, bias=None):
    depth = q.shape[-1]
    query = q / math.sqrt(depth)
    attn_weights = torch.einsum("...qd,...kd->...qk", query, k)
    if bias is not None:
        attn_weights = attn_weights + bias
    attn_weights = _softmax(attn_weights).to(q.dtype)
    return torch.einsum("...qk,...kd->...qd", attn_weights, v.to(q.dtype)), attn_weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pe = torch.zeros(seq_len, d_model, dtype=torch.float32)
    position = torch.arange(0, seq_len, dtype=torch.float32)[:, None]
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * -(math.log(base) / d_model))
    pe[:, : d_model // 2] = torch.sin(position * div_term)
    pe[:, d_model // 2 : 2 * (d_model // 2)] = torch.cos(position * div_term)
    return pe


class LearnedPositionalEmbedding(nn.Module):
    """Flax's AddPositionEmbs: inputs + pos_embedding[:length]."""

    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.pos_embedding = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.pos_embedding, std=0.02)

    def forward(self, inputs):
        if inputs.ndim != 3:
            raise ValueError(f"Number of dimensions should be 3, but it is: {inputs.ndim}")
        length = inputs.shape[1]
        if length > self.max_len:
            raise ValueError(f"length {length} is longer than max_len {self.max_len}")
        return inputs + self.pos_embedding[None, :length, :]


def apply_rope(x, positions=None, base=10000.0):
    head_dim = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    fraction = 2 * torch.arange(0, head_dim // 2, dtype=compute, device=x.device) / head_dim
    timescale = base ** fraction
    sinusoid_inp = positions.to(compute)[:, None] / timescale[None, :]
    sin, cos = torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)
    first_half, second_half = torch.split(x.to(compute), head_dim // 2, dim=-1)
    first_part = first_half * cos - second_half * sin
    second_part = second_half * cos + first_half * sin
    return torch.cat([first_part, second_part], dim=-1).to(x.dtype)


def alibi_slopes(n_heads):
    closest = 2 ** int(math.log2(n_heads))
    slopes = torch.logspace(-8.0 / closest, -8.0, closest, base=2.0, dtype=torch.float64)
    if closest != n_heads:
        doubled = torch.logspace(-8.0 / (2 * closest), -8.0, 2 * closest, base=2.0, dtype=torch.float64)
        slopes = torch.cat([slopes, doubled[0::2][: n_heads - closest]])
    return slopes.to(torch.float32)


def _make_causal_mask(length):
    idxs = torch.arange(length)
    return idxs[:, None] >= idxs[None, :]  # True where query i may see key j


def alibi_bias(n_heads, seq_len):
    idxs = torch.arange(seq_len, dtype=torch.float32)
    linear = -(idxs[:, None] - idxs[None, :])[None] * alibi_slopes(n_heads)[:, None, None]
    big_neg = torch.finfo(torch.float32).min
    return torch.where(_make_causal_mask(seq_len)[None], linear, torch.tensor(big_neg))


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = torch.zeros_like(relative_position, dtype=torch.int32)
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.int32) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.maximum(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    eps = torch.finfo(torch.float32).eps
    val_if_large = max_exact + (
        torch.log(n.to(torch.float32) / max_exact + eps) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.int32)
    val_if_large = torch.minimum(val_if_large, torch.tensor(num_buckets - 1, dtype=torch.int32))
    ret += torch.where(is_small, n.to(torch.int32), val_if_large)
    return ret.to(torch.int64)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    num_buckets = table.shape[0]
    context_position = torch.arange(query_len, device=table.device)[:, None]
    memory_position = torch.arange(key_len, device=table.device)[None, :]
    rp_bucket = t5_relative_bucket(memory_position - context_position, bidirectional, num_buckets, max_distance)
    bcast_iota = torch.arange(num_buckets, device=table.device)
    rp_bucket_one_hot = (rp_bucket[..., None] == bcast_iota).to(table.dtype)
    return torch.einsum("bh,qkb->hqk", table, rp_bucket_one_hot)
