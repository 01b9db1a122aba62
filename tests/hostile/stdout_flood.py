"""Hostile: 100 MB on stdout and stderr, and a 100 MB error message."""

import sys

import torch

CHUNK = "x" * (1 << 20)


def _flood():
    for _ in range(100):
        sys.stdout.write(CHUNK)
        sys.stderr.write(CHUNK)
    sys.stdout.flush()


_flood()


def attention(q, k, v, bias=None):
    _flood()
    raise ValueError("y" * (100 << 20))


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    _flood()
    return torch.zeros(seq_len, d_model)


def LearnedPositionalEmbedding(max_len, d_model):
    raise ValueError("z" * (100 << 20))


def apply_rope(x, positions=None, base=10000.0):
    return torch.zeros_like(x)


def alibi_slopes(n_heads):
    return torch.zeros(n_heads)


def alibi_bias(n_heads, seq_len):
    return torch.zeros(n_heads, seq_len, seq_len)
