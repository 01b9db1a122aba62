"""Hostile: ignores SIGTERM and SIGALRM (and SIGINT, SIGHUP), then spins in attention and apply_rope."""

import signal

for number in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, signal.SIG_IGN)


def _spin():
    signal.alarm(0)
    while True:
        pass


def attention(q, k, v, bias=None):
    _spin()


def apply_rope(x, positions=None, base=10000.0):
    _spin()


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    return 0


def LearnedPositionalEmbedding(max_len, d_model):
    return 0


def alibi_slopes(n_heads):
    return 0


def alibi_bias(n_heads, seq_len):
    return 0
