# Style: Hugging Face-like plumbing (a frozen config dataclass, an ATTENTION_FUNCTIONS registry chosen by name, ROPE_INIT_FUNCTIONS returning inv_freq, lru_cache'd tables keyed by plain values); 'eager' attention on 3-D bmm views (leading axes folded, .mul(scaling), F.softmax); RoPE as complex multiplication over the HALF pairing (torch.complex(x[..., :h], x[..., h:]) * polar(1, p theta)); the sinusoid as ONE sin with a pi/2 phase on the cosine columns (float64); the learned table read through a non-persistent positions buffer and F.embedding; ALiBi slopes as 2^(-8 h / c) tensors, clamp(min=0) distances and a bool triu mask; T5 buckets with the log taken of distance clamped to max_exact, bias as a per-head unbind/stack.
import functools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class PositionConfig:
    rope_theta: float = 10000.0
    attn_implementation: str = "eager"
    alibi_max_bias: float = 8.0


DEFAULT_CONFIG = PositionConfig()


def eager_attention_forward(query, key, value, bias, scaling):
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    t_q, t_k, batch = query.shape[-2], key.shape[-2], math.prod(lead)
    q3 = query.expand(*lead, t_q, query.shape[-1]).reshape(batch, t_q, query.shape[-1])
    k3 = key.expand(*lead, t_k, key.shape[-1]).reshape(batch, t_k, key.shape[-1])
    v3 = value.expand(*lead, t_k, value.shape[-1]).reshape(batch, t_k, value.shape[-1])
    scores = torch.bmm(q3, k3.transpose(1, 2)).mul(scaling).view(*lead, t_q, t_k)
    if bias is not None:
        scores = scores + bias
    weights = F.softmax(scores, dim=-1).to(query.dtype)
    out = torch.bmm(weights.reshape(batch, t_q, t_k), v3.to(query.dtype))
    return out.view(*lead, t_q, value.shape[-1]), weights


ATTENTION_FUNCTIONS = {"eager": eager_attention_forward}


def attention(q, k, v, bias=None, config=DEFAULT_CONFIG):
    attention_interface = ATTENTION_FUNCTIONS[config.attn_implementation]
    return attention_interface(q, k, v, bias, scaling=q.shape[-1] ** -0.5)


def _compute_default_rope_parameters(dim, base, device=None):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64, device=device).to(torch.float64) / dim))


ROPE_INIT_FUNCTIONS = {"default": _compute_default_rope_parameters}


@functools.lru_cache(maxsize=8)
def _sinusoid_table(seq_len, d_model, base):
    inv_freq = ROPE_INIT_FUNCTIONS["default"](d_model, base).repeat_interleave(2)  # one per column
    phase = torch.tensor([0.0, math.pi / 2], dtype=torch.float64).repeat(d_model // 2)  # cos x = sin(x + pi/2)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return torch.sin(angles + phase).to(torch.float32)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return _sinusoid_table(seq_len, d_model, float(base)).clone()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_position_embeddings = max_len
        self.weight = nn.Parameter(torch.normal(0.0, 0.02, size=(max_len, d_model)))
        self.register_buffer("positions", torch.arange(max_len), persistent=False)

    def forward(self, x):
        seq_length = x.shape[1]
        if seq_length > self.max_position_embeddings:
            raise ValueError(
                f"Sequence length {seq_length} exceeds max_position_embeddings (max_len) {self.max_position_embeddings}"
            )
        return x + F.embedding(self.positions[:seq_length], self.weight)


def apply_rope(x, positions=None, base=10000.0, config=DEFAULT_CONFIG):
    base = base if base is not None else config.rope_theta
    dim = x.shape[-1]
    half = dim // 2
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    inv_freq = ROPE_INIT_FUNCTIONS["default"](dim, base, device=x.device)
    real, cplx = (torch.float64, torch.complex128) if x.dtype == torch.float64 else (torch.float32, torch.complex64)
    freqs = (positions.to(torch.float64)[:, None] * inv_freq[None, :]).to(real)
    rotation = torch.polar(torch.ones_like(freqs), freqs).to(cplx)  # e^{i p theta}, [T, D/2]
    xr = x.to(real)
    z = torch.complex(xr[..., :half], xr[..., half:]) * rotation
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)


def alibi_slopes(n_heads, config=DEFAULT_CONFIG):
    c = 2 ** math.floor(math.log2(n_heads))
    head = torch.arange(1, c + 1, dtype=torch.float64)
    slopes = torch.pow(2.0, -config.alibi_max_bias * head / c)
    if c < n_heads:
        odd = torch.arange(1, 2 * c + 1, 2, dtype=torch.float64)[: n_heads - c]
        slopes = torch.cat([slopes, torch.pow(2.0, -config.alibi_max_bias * odd / (2 * c))])
    return slopes.to(torch.float32)


def alibi_bias(n_heads, seq_len):
    rows = torch.arange(seq_len).unsqueeze(1)
    cols = torch.arange(seq_len).unsqueeze(0)
    distance = (rows - cols).clamp(min=0).to(torch.float32)
    bias = -alibi_slopes(n_heads).view(n_heads, 1, 1) * distance
    future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
    return bias.masked_fill(future, float("-inf"))


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        num_buckets //= 2
        relative_buckets = torch.where(relative_position > 0, num_buckets, 0)
        distance = relative_position.abs()
    else:
        relative_buckets = torch.zeros_like(relative_position)
        distance = torch.where(relative_position < 0, -relative_position, 0)
    max_exact = num_buckets // 2
    log_ratio = torch.log(distance.clamp(min=max_exact).to(torch.float32) / max_exact)
    if_large = max_exact + (log_ratio / math.log(max_distance / max_exact) * (num_buckets - max_exact)).long()
    bucket = torch.where(distance < max_exact, distance, if_large.clamp(max=num_buckets - 1))
    return (relative_buckets + bucket).to(torch.int64)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    query_position = torch.arange(query_len, device=table.device).view(-1, 1)
    key_position = torch.arange(key_len, device=table.device).view(1, -1)
    buckets = t5_relative_bucket(key_position - query_position, bidirectional, table.shape[0], max_distance)
    return torch.stack([head_column[buckets] for head_column in table.unbind(dim=1)])
