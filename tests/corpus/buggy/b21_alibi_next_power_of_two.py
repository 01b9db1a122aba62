# Bug: non-power-of-two heads take the first n slopes of the next power of two. Base: correct/c04_block_rotation_matrix.py. Should fail: alibi: slopes for other head counts, bias values other heads.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    scale = q.shape[-1] ** -0.5
    attn = q.mul(scale) @ k.transpose(-2, -1)
    if bias is not None:
        attn = attn + bias
    attn = torch.softmax(attn, dim=-1)
    return attn @ v, attn


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    half = d_model // 2
    freqs = torch.exp(-math.log(base) * torch.arange(half, dtype=torch.float64) * 2.0 / d_model)
    args = torch.arange(seq_len, dtype=torch.float64)[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        self.pos_embedding = nn.Parameter(torch.zeros(max_len, d_model))
        nn.init.normal_(self.pos_embedding, mean=0.0, std=0.02)

    def forward(self, x):
        n = x.size(1)
        if n > self.max_len:
            raise ValueError(f"input of length {n} is longer than max_len={self.max_len}")
        return x + self.pos_embedding[:n].unsqueeze(0)


def _rotation_matrices(positions, dim, base, dtype):
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=positions.device) / dim)
    ang = positions.to(torch.float64)[:, None] * theta[None, :]  # (T, D/2)
    c, s = ang.cos().to(dtype), ang.sin().to(dtype)
    R = torch.zeros(positions.shape[0], dim, dim, dtype=dtype, device=positions.device)
    idx = torch.arange(0, dim, 2, device=positions.device)
    R[:, idx, idx] = c
    R[:, idx, idx + 1] = -s
    R[:, idx + 1, idx] = s
    R[:, idx + 1, idx + 1] = c
    return R  # (T, D, D): out = R @ x


def apply_rope(x, positions=None, base=10000.0):
    T, D = x.shape[-2:]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    R = _rotation_matrices(positions.to(x.device), D, base, work)
    out = (R @ x.to(work).unsqueeze(-1)).squeeze(-1)
    return out.to(x.dtype)


def alibi_slopes(n_heads):
    def pow2(n):
        return [2 ** (-8 * (i + 1) / n) for i in range(n)]
    upper = 1 << (n_heads - 1).bit_length()
    out = pow2(upper)[:n_heads]
    return torch.tensor(out, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    i = torch.arange(seq_len).view(-1, 1)
    j = torch.arange(seq_len).view(1, -1)
    causal = torch.tril(torch.ones(seq_len, seq_len)).bool()
    bias = -alibi_slopes(n_heads).view(-1, 1, 1) * (i - j).float()
    return torch.where(causal, bias, torch.full_like(bias, float("-inf")))
