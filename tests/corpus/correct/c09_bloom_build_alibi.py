# Styles: BLOOM build_alibi_tensor closed form (base 2^-(2^-(log2 c - 3)), odd extra powers) with torch.pow in float32; tril-based mask with masked_fill(-inf); SDPA for out with weights apart; sinusoidal float32 via division by base^(2i/d); interleaved RoPE with reshape(..., D/2, 2) + unbind.
import math

import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    attn_mask = None if bias is None else bias.to(q.dtype)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
    logits = q @ k.mT / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        logits = logits + attn_mask
    return out, logits.softmax(-1)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float32)[:, None]
    denom = torch.pow(torch.tensor(base, dtype=torch.float32), torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    ang = pos / denom
    return torch.stack([ang.sin(), ang.cos()], dim=2).view(seq_len, d_model)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.table = nn.Parameter(torch.randn(max_len, d_model).mul_(0.02))

    def forward(self, x):
        B, T, C = x.shape
        if T > self.max_len:
            raise ValueError(f"Cannot forward sequence of length {T}, block size is only {self.max_len}")
        pos = torch.arange(0, T, dtype=torch.long, device=x.device)
        return x + self.table[pos]


def apply_rope(x, positions=None, base=10000.0):
    *lead, T, D = x.shape
    if positions is None:
        positions = torch.arange(T, device=x.device)
    theta = 1.0 / base ** (torch.arange(0, D, 2, device=x.device, dtype=torch.float64) / D)
    m_theta = positions.to(device=x.device, dtype=torch.float64).unsqueeze(-1) * theta
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = m_theta.cos().to(work), m_theta.sin().to(work)
    x1, x2 = x.to(work).reshape(*lead, T, D // 2, 2).unbind(-1)
    return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1).reshape(x.shape).to(x.dtype)


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
    keep = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
    ij = torch.arange(seq_len)
    dist = (ij[:, None] - ij[None, :]).to(torch.float32)
    bias = alibi_slopes(n_heads)[:, None, None] * -dist
    return bias.masked_fill(~keep, float("-inf"))
