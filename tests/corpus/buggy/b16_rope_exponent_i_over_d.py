# Bug: theta exponent i/D instead of 2i/D. Base: correct/c14_torchtune_cache.py. Should fail: rope: values small positions, values explicit positions and base.
import math

import torch
from torch import nn


def attention(q, k, v, bias=None):
    logits = torch.matmul(q, k.swapaxes(-1, -2)).div(math.sqrt(q.shape[-1]))
    if bias is not None:
        logits = logits.add(bias)
    probs = logits.softmax(dim=-1)
    return probs.matmul(v), probs


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    theta = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
    idx_theta = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta[None, :]
    cis = torch.view_as_real(torch.polar(torch.ones_like(idx_theta), idx_theta))  # (T, D/2, [cos, sin])
    return torch.stack([cis[..., 1], cis[..., 0]], dim=-1).flatten(1).to(torch.float32)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_seq_len = max_len
        self.pos_embedding = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x):
        bsz, seq_len, _ = x.shape
        if seq_len > self.max_seq_len:
            raise ValueError(f"seq_len ({seq_len}) of input tensor should be smaller than max_seq_len ({self.max_seq_len})")
        return x + self.pos_embedding[:seq_len, :]


def _build_rope_cache(max_seq_len, dim, base, device):
    theta = 1.0 / (base ** (torch.arange(0, dim // 2, device=device).double() / dim))
    seq_idx = torch.arange(max_seq_len, dtype=torch.float64, device=device)
    idx_theta = torch.einsum("i, j -> ij", seq_idx, theta)
    return torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)  # (L, D/2, 2)


def apply_rope(x, positions=None, base=10000.0):
    *lead, seq_len, dim = x.shape
    if positions is None:
        rope_cache = _build_rope_cache(seq_len, dim, base, x.device)
    else:
        rope_cache = _build_rope_cache(int(positions.max()) + 1, dim, base, x.device)[positions]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xshaped = x.to(work).reshape(*lead, seq_len, dim // 2, 2)
    rope_cache = rope_cache.to(work)
    x_out = torch.stack(
        [
            xshaped[..., 0] * rope_cache[..., 0] - xshaped[..., 1] * rope_cache[..., 1],
            xshaped[..., 1] * rope_cache[..., 0] + xshaped[..., 0] * rope_cache[..., 1],
        ],
        -1,
    )
    return x_out.flatten(-2).type_as(x)


def alibi_slopes(n_heads):
    c = 2 ** math.floor(math.log2(n_heads))
    ratio = 2.0 ** (-8.0 / c)
    slopes = [ratio ** (h + 1) for h in range(c)]
    if c < n_heads:
        ratio2 = 2.0 ** (-8.0 / (2 * c))
        slopes += [ratio2 ** (h + 1) for h in range(2 * c)][::2][: n_heads - c]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads, seq_len):
    pos = torch.arange(seq_len, dtype=torch.float32)
    distance = (pos[:, None] - pos[None, :]).abs()
    causal = torch.full((seq_len, seq_len), float("-inf")).triu(1)
    return -alibi_slopes(n_heads)[:, None, None] * distance + causal
