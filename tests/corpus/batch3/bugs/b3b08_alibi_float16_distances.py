# Bug (alibi): alibi: distances built in float16 and multiplied by the slopes in place there, so the bias values carry float16 rounding (and distances past 2048 are rounded) though the result is float32. Base: correct/b3c05_vllm_cos_sin_cache.py (one line changed).
import functools
import math

import numpy as np
import torch
from torch import nn


def attention(q, k, v, bias=None):
    scale = 1.0 / math.sqrt(q.shape[-1])
    upcast = torch.promote_types(q.dtype, torch.float32)
    attn_weights = scale * torch.einsum("...qd,...kd->...qk", q, k).to(upcast)
    if bias is not None:
        attn_weights = attn_weights + bias.to(upcast)
    attn_weights = torch.softmax(attn_weights, dim=-1).to(q.dtype)
    out = torch.einsum("...qk,...kd->...qd", attn_weights, v.to(q.dtype))
    return out, attn_weights


class RotaryEmbedding(nn.Module):
    def __init__(self, head_size, max_position_embeddings, base, is_neox_style):
        super().__init__()
        self.head_size = head_size
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.is_neox_style = is_neox_style
        self.register_buffer("cos_sin_cache", self._compute_cos_sin_cache(), persistent=False)

    def _compute_inv_freq(self):
        return 1.0 / (self.base ** (torch.arange(0, self.head_size, 2, dtype=torch.float64) / self.head_size))

    def _compute_cos_sin_cache(self):
        t = torch.arange(self.max_position_embeddings, dtype=torch.float64)
        freqs = torch.einsum("i,j -> ij", t, self._compute_inv_freq())
        return torch.cat((freqs.cos(), freqs.sin()), dim=-1).float()  # angles in float64, stored as float32

    def forward(self, positions, query):
        compute = torch.float64 if query.dtype == torch.float64 else torch.float32
        cache = self.cos_sin_cache.to(device=query.device, dtype=compute)
        cos, sin = cache.index_select(0, positions.to(query.device).long()).chunk(2, dim=-1)
        x = query.to(compute)
        if self.is_neox_style:
            x1, x2 = torch.chunk(x, 2, dim=-1)
        else:
            x1, x2 = x[..., ::2], x[..., 1::2]
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
        if self.is_neox_style:
            out = torch.cat((o1, o2), dim=-1)
        else:
            out = torch.stack((o1, o2), dim=-1).flatten(-2)
        return out.to(query.dtype)


@functools.lru_cache(maxsize=4)
def get_rope(head_size, max_position, base, is_neox_style=False):
    return RotaryEmbedding(head_size, max_position, base, is_neox_style)


def _max_position(n):
    return max(4096, 1 << max(n - 1, 0).bit_length())  # one cache per power of two of length


def apply_rope(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    longest = int(positions.max()) + 1 if positions.numel() else 1
    rope = get_rope(x.shape[-1], _max_position(longest), float(base))
    return rope(positions, x)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    cache = get_rope(d_model, _max_position(seq_len), float(base)).cos_sin_cache
    cos, sin = cache[:seq_len].chunk(2, dim=-1)
    return torch.cat((sin, cos), dim=-1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.num_embeddings = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        num_tokens = x.shape[-2]
        if num_tokens > self.num_embeddings:
            raise ValueError(f"{num_tokens} tokens do not fit in {self.num_embeddings} position embeddings (max_len)")
        positions = torch.arange(num_tokens, device=x.device)
        return x + nn.functional.embedding(positions, self.weight)


def alibi_slopes(n_heads):
    closest_power_of_2 = 2 ** math.floor(math.log2(n_heads))
    base = 2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3)))
    powers = np.arange(1, 1 + closest_power_of_2)
    slopes = np.power(base, powers)
    if closest_power_of_2 != n_heads:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3)))
        num_remaining_heads = min(closest_power_of_2, n_heads - closest_power_of_2)
        extra_powers = np.arange(1, 1 + 2 * num_remaining_heads, 2)
        slopes = np.concatenate([slopes, np.power(extra_base, extra_powers)])
    return torch.from_numpy(slopes).to(torch.float32)


def alibi_bias(n_heads, seq_len):
    bias = torch.arange(seq_len, dtype=torch.float16)
    bias = bias[None, :] - bias[:, None]  # j - i: negative for keys in the past
    bias = bias[None].repeat(n_heads, 1, 1)
    bias.mul_(alibi_slopes(n_heads)[:, None, None])
    mask = torch.empty(1, seq_len, seq_len, dtype=torch.float32).fill_(float("-inf")).triu_(diagonal=1)
    return bias + mask


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    rel = relative_position.detach().cpu().numpy().astype(np.int64)
    buckets = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        n = np.abs(rel)
    else:
        n = np.maximum(-rel, 0)
    max_exact = num_buckets // 2
    with np.errstate(divide="ignore"):
        ratio = np.log(n.astype(np.float32) / np.float32(max_exact)) / np.float32(math.log(max_distance / max_exact))
    large = max_exact + np.floor(np.maximum(ratio, 0) * np.float32(num_buckets - max_exact)).astype(np.int64)
    buckets += np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))
    return torch.from_numpy(buckets).to(relative_position.device)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    q_pos = torch.arange(query_len, device=table.device)
    k_pos = torch.arange(key_len, device=table.device)
    buckets = t5_relative_bucket(k_pos[None, :] - q_pos[:, None], bidirectional, table.shape[0], max_distance)
    n_heads = table.shape[1]
    index = buckets.reshape(1, -1).expand(n_heads, -1)
    return torch.gather(table.t(), 1, index).reshape(n_heads, query_len, key_len)
