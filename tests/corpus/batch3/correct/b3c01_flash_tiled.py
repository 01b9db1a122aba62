# Style: FlashAttention-style tiled attention (online softmax over key blocks: running max, running denominator, rescaled accumulator); flash-attn's apply_rotary_emb(x, cos, sin, interleaved=False) interface on a [T, N, D] layout; torch.logspace frequencies; ALiBi as flash-attn's -slope*|i-j| plus a causal masked_fill; T5 buckets through a precomputed lookup table.
import math

import torch
from torch import nn

KEY_BLOCK = 64  # keys per tile


def attention(q, k, v, bias=None):
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d)
    t_k = k.shape[-2]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if bias is not None:
        lead = torch.broadcast_shapes(lead, bias.shape[:-2])
    row_max = q.new_full((*lead, q.shape[-2], 1), float("-inf"))
    row_sum = q.new_zeros((*lead, q.shape[-2], 1))
    acc = q.new_zeros((*lead, q.shape[-2], v.shape[-1]))
    logits = []
    for start in range(0, t_k, KEY_BLOCK):
        stop = min(start + KEY_BLOCK, t_k)
        s = torch.matmul(q, k[..., start:stop, :].transpose(-1, -2)) * scale
        if bias is not None:
            s = s + bias[..., start:stop].to(s.dtype)
        logits.append(s)
        new_max = torch.maximum(row_max, s.amax(dim=-1, keepdim=True))
        # a row that has seen only -inf so far keeps a finite reference point (0), so no -inf - -inf
        safe_max = torch.where(torch.isneginf(new_max), torch.zeros_like(new_max), new_max)
        correction = torch.exp(row_max - safe_max)
        p = torch.exp(s - safe_max)
        row_sum = row_sum * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + torch.matmul(p, v[..., start:stop, :].to(p.dtype))
        row_max = new_max
    safe_max = torch.where(torch.isneginf(row_max), torch.zeros_like(row_max), row_max)
    if t_k == 0:
        s_all = q.new_zeros((*lead, q.shape[-2], 0))
    else:
        s_all = torch.cat(logits, dim=-1)
    weights = torch.exp(s_all - safe_max) / row_sum  # a fully masked row: 0 / 0 = nan, as softmax gives
    out = acc / row_sum
    return out.to(q.dtype), weights.to(q.dtype)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    # w_i = base^(-2i/d): d/2 points evenly spaced in log space from base^0 to base^(-(d-2)/d)
    inv_freq = torch.logspace(0.0, -(d_model - 2) / d_model, d_model // 2, base=base, dtype=torch.float64)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inv_freq)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.normal_(self.weight, mean=0.0, std=0.01)

    def forward(self, x):
        seqlen = x.shape[1]
        if seqlen > self.max_len:
            raise ValueError(f"input has {seqlen} positions but max_len is {self.max_len}")
        return x + self.weight[:seqlen]


def _rotate_half(x, interleaved=False):
    if not interleaved:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def _apply_rotary_emb(x, cos, sin, interleaved=False):
    """x [T, N, D]; cos, sin [T, D/2]."""
    if interleaved:
        cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
    else:
        cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    return x * cos[:, None, :] + _rotate_half(x, interleaved) * sin[:, None, :]


def apply_rope(x, positions=None, base=10000.0):
    *lead, seqlen, dim = x.shape
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=x.device, dtype=compute) / dim))
    if positions is None:
        t = torch.arange(seqlen, device=x.device, dtype=compute)
    else:
        t = positions.to(device=x.device, dtype=compute)
    freqs = torch.outer(t, inv_freq)
    # flash-attn's layout: sequence first, every other axis folded into one
    x_tnd = x.reshape(math.prod(lead), seqlen, dim).transpose(0, 1).to(compute)
    out = _apply_rotary_emb(x_tnd, freqs.cos(), freqs.sin(), interleaved=False)
    return out.transpose(0, 1).reshape(x.shape).to(x.dtype)


def alibi_slopes(n_heads):
    closest = 2 ** math.floor(math.log2(n_heads))
    exponents = torch.arange(1, closest + 1, dtype=torch.float64) * (-8.0 / closest)
    if closest < n_heads:
        extra = torch.arange(1, 2 * (n_heads - closest), 2, dtype=torch.float64) * (-8.0 / (2 * closest))
        exponents = torch.cat((exponents, extra))
    return torch.exp2(exponents).float()


def alibi_bias(n_heads, seq_len):
    row = torch.arange(seq_len)[:, None]
    col = torch.arange(seq_len)[None, :]
    bias = -alibi_slopes(n_heads)[:, None, None] * (row - col).abs().float()
    return bias.masked_fill(col > row, float("-inf"))


def _bucket_table(exact, n_buckets, max_distance):
    """Bucket of every distance n = 0 .. max(max_distance, exact), by the log rule in float64."""
    n = torch.arange(max(max_distance, exact) + 1, dtype=torch.float64)
    log_ratio = torch.log(n.clamp(min=exact) / exact) / math.log(max_distance / exact)
    large = exact + (log_ratio * (n_buckets - exact)).floor().long()
    return torch.where(n < exact, n.long(), large.clamp(max=n_buckets - 1))


def t5_relative_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        n_buckets = num_buckets // 2
        offset = (relative_position > 0).long() * n_buckets
        n = relative_position.abs()
    else:
        n_buckets = num_buckets
        offset = torch.zeros_like(relative_position)
        n = (-relative_position).clamp(min=0)
    table = _bucket_table(n_buckets // 2, n_buckets, max_distance).to(relative_position.device)
    return offset + table[n.clamp(max=table.numel() - 1)]


def t5_relative_bias(table, query_len, key_len, bidirectional=True, max_distance=128):
    q_pos = torch.arange(query_len, device=table.device)
    k_pos = torch.arange(key_len, device=table.device)
    buckets = t5_relative_bucket(k_pos[None, :] - q_pos[:, None], bidirectional, table.shape[0], max_distance)
    return table[buckets].permute(2, 0, 1)  # [Tq, Tk, H] -> [H, Tq, Tk]
