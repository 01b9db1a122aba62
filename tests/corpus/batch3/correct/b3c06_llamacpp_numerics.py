# Style: llama.cpp / ggml numerics in PyTorch: soft_max_ext (scale, add mask, subtract row max, exp in float32, sum accumulated in float64, multiply by 1/sum); ggml_rope "normal" mode (adjacent pairs) with theta built by repeated multiplication by theta_scale = base^(-2/D) (cumprod, float32); ggml ALiBi slopes m0^(h+1) / m1^(2(h-c)+1) with max_bias = 8; timestep-embedding style [sin | cos] table with freqs = exp(-ln(base) * i / half); llama_relative_position_bucket's order of operations (multiply by (N - E) before dividing by ln(max_distance / E), max_exact added before the floor); ggml_get_rows for the learned table and the T5 bias.
import math

import torch
from torch import nn


def _soft_max_ext(kq, mask, scale):
    x = kq * scale
    if mask is not None:
        x = x + mask
    row_max = x.amax(dim=-1, keepdim=True)
    e = torch.exp(x - row_max)
    row_sum = e.sum(dim=-1, keepdim=True, dtype=torch.float64)  # ggml_float accumulator
    return e * (1.0 / row_sum).to(e.dtype)


def attention(q, k, v, bias=None):
    kq = torch.matmul(q, k.transpose(-1, -2))
    kq_scale = 1.0 / math.sqrt(float(q.shape[-1]))
    kq_soft = _soft_max_ext(kq, bias, kq_scale).to(q.dtype)
    kqv = torch.matmul(kq_soft, v.to(q.dtype))
    return kqv, kq_soft


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    half = d_model // 2
    freqs = torch.exp(-math.log(base) * torch.arange(half, dtype=torch.float32) / half)
    args = torch.arange(seq_len, dtype=torch.float32)[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.n_ctx_train = max_len
        self.pos_embd = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x):
        n_tokens = x.shape[1]
        if n_tokens > self.n_ctx_train:
            raise ValueError(f"n_tokens = {n_tokens} exceeds n_ctx_train = {self.n_ctx_train}")
        inp_pos = torch.arange(n_tokens, dtype=torch.int32, device=x.device)
        return x + self.pos_embd[inp_pos.long()]  # ggml_get_rows


def apply_rope(x, positions=None, base=10000.0):
    n_dims = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    theta_scale = base ** (-2.0 / n_dims)
    # theta_i = p * theta_scale^i, accumulated pair by pair as ggml's loop does
    steps = torch.full((n_dims // 2,), theta_scale, dtype=compute, device=x.device)
    steps[0] = 1.0
    theta = positions.to(compute)[:, None] * torch.cumprod(steps, dim=0)[None, :]
    cos_theta, sin_theta = torch.cos(theta), torch.sin(theta)
    src = x.to(compute).unflatten(-1, (n_dims // 2, 2))
    x0, x1 = src[..., 0], src[..., 1]
    dst = torch.stack((x0 * cos_theta - x1 * sin_theta, x0 * sin_theta + x1 * cos_theta), dim=-1)
    return dst.flatten(-2).to(x.dtype)


def alibi_slopes(n_heads):
    max_bias = 8.0
    n_head_log2 = 1 << math.floor(math.log2(n_heads))
    m0 = 2.0 ** (-max_bias / n_head_log2)
    m1 = 2.0 ** (-(max_bias / 2.0) / n_head_log2)
    slopes = [m0 ** (h + 1) if h < n_head_log2 else m1 ** (2 * (h - n_head_log2) + 1) for h in range(n_heads)]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    pos = torch.arange(seq_len, dtype=torch.float32)
    kq_mask = torch.zeros(seq_len, seq_len, dtype=torch.float32)
    kq_mask[pos[None, :] > pos[:, None]] = -math.inf
    slope = alibi_slopes(n_heads)[:, None, None]
    return kq_mask + slope * (pos[None, :] - pos[:, None])


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n_buckets = num_buckets
    relative_bucket = torch.zeros_like(relative_position)
    if bidirectional:
        n_buckets >>= 1
        relative_bucket = relative_bucket + (relative_position > 0).long() * n_buckets
        relative_position = relative_position.abs()
    else:
        relative_position = -torch.minimum(relative_position, torch.zeros_like(relative_position))
    max_exact = n_buckets >> 1
    rp = relative_position.to(torch.float32)
    if_large = torch.floor(max_exact + torch.log(rp / max_exact) * (n_buckets - max_exact) / math.log(max_distance / max_exact))
    if_large = torch.clamp(torch.nan_to_num(if_large, neginf=0.0), max=n_buckets - 1).long()
    return relative_bucket + torch.where(relative_position < max_exact, relative_position, if_large)


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    n_buckets, n_head = table.shape
    pos_q = torch.arange(query_len, device=table.device)
    pos_k = torch.arange(key_len, device=table.device)
    pos_bucket = t5_relative_bucket(pos_k[None, :] - pos_q[:, None], bidirectional, n_buckets, max_distance)
    rows = table.index_select(0, pos_bucket.flatten())  # ggml_get_rows: [Tq * Tk, H]
    return rows.view(query_len, key_len, n_head).permute(2, 0, 1).contiguous()
