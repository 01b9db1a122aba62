"""Hostile: writes a gradebook giving itself full marks wherever one might be read."""

import glob
import os

FAKE = "id,status,attention,sinusoidal,learned,rope,alibi,total,max\nfake_gradebook,graded,9,9,9,9,9,99,99\n"


def _plant() -> None:
    places = [
        "gradebook.csv",
        "../gradebook.csv",
        "../../gradebook.csv",
        "/tmp/gradebook.csv",
        "out/gradebook.csv",
        "../out/gradebook.csv",
        "/tmp/out/gradebook.csv",
    ]
    places += glob.glob("/tmp/**/gradebook.csv", recursive=True) + glob.glob("/work/**/gradebook.csv", recursive=True)
    for place in places:
        try:
            os.makedirs(os.path.dirname(place) or ".", exist_ok=True)
            with open(place, "w") as handle:
                handle.write(FAKE)
        except OSError:
            pass


_plant()


def attention(q, k, v, bias=None):
    _plant()
    return q, q


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    _plant()
    return None


def LearnedPositionalEmbedding(max_len, d_model):
    _plant()
    raise ValueError("no")


def apply_rope(x, positions=None, base=10000.0):
    return x * 0


def alibi_slopes(n_heads):
    return 0


def alibi_bias(n_heads, seq_len):
    return 0
