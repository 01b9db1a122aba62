"""Hostile: asks for 8 GiB, touched, in every function."""

import torch


def _grab():
    return torch.ones(2 * 1024**3, dtype=torch.float32)  # 8 GiB


def attention(q, k, v, bias=None):
    return _grab(), _grab()


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return _grab()


class LearnedPositionalEmbedding(torch.nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.table = torch.nn.Parameter(_grab())


def apply_rope(x, positions=None, base=10000.0):
    return _grab()


def alibi_slopes(n_heads):
    return bytearray(8 * 1024**3)


def alibi_bias(n_heads, seq_len):
    return _grab()
