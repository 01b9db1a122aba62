"""Hostile: ends the process with status 0 in the middle of every call."""

import os


def attention(q, k, v, bias=None):
    os._exit(0)


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    os._exit(0)


def LearnedPositionalEmbedding(max_len, d_model):
    os._exit(0)


def apply_rope(x, positions=None, base=10000.0):
    os._exit(0)


def alibi_slopes(n_heads):
    os._exit(0)


def alibi_bias(n_heads, seq_len):
    os._exit(0)
