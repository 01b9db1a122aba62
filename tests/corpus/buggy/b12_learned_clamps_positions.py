# Bug: too-long input: positions clamped to the last row instead of raising. Base: correct/c07_flatten_leading_dims.py. Should fail: learned: too long raises, message names both numbers.
import math

import torch
import torch.nn.functional as F
from torch import nn


def attention(q, k, v, bias=None):
    *lead, tq, d = q.shape
    tk, dv = k.shape[-2], v.shape[-1]
    q3, k3, v3 = q.reshape(-1, tq, d), k.reshape(-1, tk, d), v.reshape(-1, tk, dv)
    logits = torch.bmm(q3, k3.transpose(1, 2)).reshape(*lead, tq, tk) / math.sqrt(d)
    if bias is not None:
        logits = logits + bias
    weights = torch.softmax(logits, dim=-1)
    out = torch.bmm(weights.reshape(-1, tq, tk), v3).reshape(*lead, tq, dv)
    return out, weights


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    w = torch.pow(torch.tensor(base, dtype=torch.float64), -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = torch.arange(seq_len, dtype=torch.float64).outer(w)
    cos_sin = torch.view_as_real(torch.polar(torch.ones_like(angles), angles))  # (..., [cos, sin])
    return cos_sin.flip(-1).reshape(seq_len, d_model).float()


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Parameter(torch.normal(0.0, 0.02, size=(max_len, d_model)))

    def forward(self, x):
        seq = x.shape[1]
        ids = torch.arange(seq, device=x.device).clamp(max=self.max_len - 1)
        return x + F.embedding(ids, self.position_embeddings)


def apply_rope(x, positions=None, base=10000.0):
    *lead, t, d = x.shape
    if positions is None:
        positions = torch.arange(t, device=x.device)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    rot = torch.polar(torch.ones(t, d // 2, dtype=torch.float64, device=x.device),
                      positions.to(torch.float64)[:, None] * theta)
    xc = torch.view_as_complex(x.to(torch.float64).reshape(*lead, t, d // 2, 2).contiguous())
    return torch.view_as_real(xc * rot).reshape(*lead, t, d).to(x.dtype)


def alibi_slopes(n_heads):
    c = 2 ** math.floor(math.log2(n_heads))
    slopes = [2 ** (-8 * h / c) for h in range(1, c + 1)]
    slopes += [2 ** (-8 * h / (2 * c)) for h in range(1, 2 * c + 1, 2)][: n_heads - c]
    return torch.tensor(slopes).float()


def alibi_bias(n_heads, seq_len):
    ar = torch.arange(seq_len)
    d = (ar[:, None] - ar[None, :]).float()
    b = d.unsqueeze(0) * -alibi_slopes(n_heads)[:, None, None]
    b[:, d < 0] = float("-inf")
    return b
