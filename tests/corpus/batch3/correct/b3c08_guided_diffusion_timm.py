# Style: OpenAI guided-diffusion QKVAttention (the 1/sqrt(D) split as D^-1/4 on q and on k, "more stable than dividing afterwards"; softmax in float32 then type back); timm: RotaryEmbeddingCat-style emb = cat(sin, cos) with each frequency repeated per pair, tensor_split, rot() via stack([-x[..., 1::2], x[..., ::2]]); freq_bands(num_bands, temperature, step=2) and a concatenated [sin | cos] table; trunc_normal_(std=.02) pos_embed; ALiBi as a Toeplitz matrix cut from one per-distance vector with unfold (Transformer-XL's relative-shift idea); T5 buckets via searchsorted on integer bucket boundaries; bias via torch.take.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    ch = q.shape[-1]
    scale = 1 / math.sqrt(math.sqrt(ch))
    weight = torch.einsum("...td,...sd->...ts", q * scale, k * scale)
    if bias is not None:
        weight = weight + bias
    acc = torch.float64 if q.dtype == torch.float64 else torch.float32
    weight = torch.softmax(weight.to(acc), dim=-1).type(q.dtype)
    a = torch.einsum("...ts,...sd->...td", weight, v.type(q.dtype))
    return a, weight


def freq_bands(num_bands, temperature=10000.0, step=2):
    exp = torch.arange(0, num_bands, step, dtype=torch.int64).to(torch.float64) / num_bands
    return 1.0 / (temperature ** exp)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    bands = freq_bands(d_model, temperature=base, step=2)
    pos = torch.arange(seq_len, dtype=torch.float64)
    pos_emb = pos[:, None] * bands[None, :]
    return torch.cat([pos_emb.sin(), pos_emb.cos()], dim=1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.num_prefix_tokens = 0
        self.pos_embed = nn.Parameter(torch.zeros(max_len, d_model))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)

    def forward(self, x):
        n = x.shape[1]
        max_len = self.pos_embed.shape[0]
        if n > max_len:
            raise ValueError(f"Input length ({n}) exceeds the position embedding length max_len ({max_len}).")
        return x + self.pos_embed[:n]


def rot(x):
    return torch.stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape)


def apply_rot_embed_cat(x, emb):
    sin_emb, cos_emb = emb.tensor_split(2, -1)
    return x * cos_emb + rot(x) * sin_emb


def build_rotary_pos_embed(positions, dim, temperature, dtype):
    bands = freq_bands(dim, temperature=temperature, step=2).to(device=positions.device)
    angles = positions.to(torch.float64)[:, None] * bands[None, :]
    sin_emb = angles.sin().repeat_interleave(2, -1)
    cos_emb = angles.cos().repeat_interleave(2, -1)
    return torch.cat([sin_emb, cos_emb], -1).to(dtype)


def apply_rope(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    emb = build_rotary_pos_embed(positions, x.shape[-1], base, work)
    return apply_rot_embed_cat(x.to(work), emb).to(x.dtype)


def alibi_slopes(n_heads):
    def geometric(n):
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    base = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = geometric(base)
    if base < n_heads:
        slopes.extend(geometric(2 * base)[0::2][: n_heads - base])
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    if seq_len == 0:
        return torch.zeros(n_heads, 0, 0)
    # f(d) for d = i - j = T-1, T-2, ..., 0, -1, ..., -(T-1): -m d in the past, -inf in the future
    d = torch.arange(seq_len - 1, -seq_len, -1, dtype=torch.float32)
    per_distance = torch.where(d >= 0, -alibi_slopes(n_heads)[:, None] * d, torch.tensor(float("-inf")))
    # window s of the [H, 2T-1] vector covers d = T-1-s .. -s; query i is window T-1-i
    return per_distance.unfold(-1, seq_len, 1).flip(-2).contiguous()


def _log_bucket_boundaries(max_exact, num_buckets, max_distance):
    """Smallest distance n of each log-spaced bucket E+1 .. N-1 (the rule evaluated on integers, float64)."""
    n = torch.arange(max_exact, max(max_distance, max_exact) + 1, dtype=torch.float64)
    bucket = max_exact + (torch.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).floor()
    targets = torch.arange(max_exact + 1, num_buckets, dtype=torch.float64)
    first = torch.searchsorted(bucket, targets)  # bucket is non-decreasing in n
    return n.to(torch.int64)[first.clamp(max=n.numel() - 1)].masked_fill(first >= n.numel(), max(max_distance, max_exact) + 1)


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        num_buckets //= 2
        side = (relative_position > 0).to(torch.int64) * num_buckets
        n = relative_position.abs()
    else:
        side = torch.zeros_like(relative_position, dtype=torch.int64)
        n = (-relative_position).clamp(min=0)
    max_exact = num_buckets // 2
    boundaries = _log_bucket_boundaries(max_exact, num_buckets, max_distance).to(n.device)
    large = max_exact + torch.searchsorted(boundaries, n.contiguous(), right=True)
    return side + torch.where(n < max_exact, n, large.clamp(max=num_buckets - 1)).to(torch.int64)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    num_buckets, n_heads = table.shape
    rel = torch.arange(key_len, device=table.device)[None, :] - torch.arange(query_len, device=table.device)[:, None]
    buckets = t5_relative_bucket(rel, bidirectional, num_buckets, max_distance)
    # flat index of table.t()[h, bucket] is h * num_buckets + bucket
    index = torch.arange(n_heads, device=table.device)[:, None, None] * num_buckets + buckets[None]
    return torch.take(table.t(), index)
