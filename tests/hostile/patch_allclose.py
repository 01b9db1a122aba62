"""Hostile: makes every comparison succeed, then returns zeros."""

import torch
import torch.testing

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.allclose = lambda self, *args, **kwargs: True
torch.Tensor.equal = lambda self, *args, **kwargs: True


def attention(q, k, v, bias=None):
    return torch.zeros(q.shape[:-1] + v.shape[-1:]), torch.zeros(q.shape[:-1] + k.shape[-2:-1])


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return torch.zeros(seq_len, d_model)


class LearnedPositionalEmbedding(torch.nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.table = torch.nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, x):
        return torch.zeros_like(x)


def apply_rope(x, positions=None, base=10000.0):
    return torch.zeros_like(x)


def alibi_slopes(n_heads):
    return torch.zeros(n_heads)


def alibi_bias(n_heads, seq_len):
    return torch.zeros(n_heads, seq_len, seq_len)
