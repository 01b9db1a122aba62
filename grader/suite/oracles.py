"""Float64 oracles written from the papers' formulas, independently of ``poslab.encodings``.

Because they do not share code with the reference, the suite checks the reference too (it must
score full marks). Shapes follow the spec: (B, H, T, D), or [..., T, D] where any leading axes work.
"""

from __future__ import annotations

import math

import torch

MINUS_INF = float("-inf")


def oracle_attention(q, k, v, bias=None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(D) + bias) v in float64 (Vaswani et al. 2017, eq. 1)."""
    q, k, v = q.double(), k.double(), v.double()
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias.double()
    # Subtracting the row maximum keeps exp finite; masked (-inf) entries become exactly 0.
    top = scores.amax(-1, keepdim=True)
    weights = (scores - top).exp()
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def sinusoid_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """omega_i = base^(-2i/d), i = 0 .. d/2 - 1 (Vaswani et al. 2017, section 3.5)."""
    return torch.tensor([base ** (-2.0 * i / d_model) for i in range(d_model // 2)], dtype=torch.float64)


SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")


def oracle_sinusoidal(positions, d_model: int, base: float = 10000.0, layout: str = "interleaved",
                      frequencies: torch.Tensor | None = None) -> torch.Tensor:
    """Rows of the table at ``positions``, float64.

    ``interleaved``: columns sin w0, cos w0, sin w1, cos w1, ...; ``concatenated``: all sin, then all cos.
    """
    omega = sinusoid_frequencies(d_model, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega[None, :]
    sin, cos = angles.sin(), angles.cos()
    if layout == "interleaved":
        return torch.stack([sin, cos], dim=-1).reshape(len(angles), -1)
    return torch.cat([sin, cos], dim=-1)


def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base^(-2i/D) (Su et al., RoFormer, 2021)."""
    return sinusoid_frequencies(head_dim, base)


ROPE_PAIRINGS = ("interleaved", "half")  # the names poslab.encodings.rope uses


def oracle_rope(x: torch.Tensor, positions, base: float = 10000.0, pairing: str = "interleaved",
                frequencies: torch.Tensor | None = None, clockwise: bool = False) -> torch.Tensor:
    """x [..., T, D] rotated pair by pair, counter-clockwise by positions[t] * theta_i, float64.

    ``interleaved``: (x[2i], x[2i+1]); ``half``: (x[i], x[i + D/2]).
    """
    x = x.double()
    head_dim = x.shape[-1]
    theta = rope_frequencies(head_dim, base) if frequencies is None else frequencies
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * theta[None, :]  # (T, D/2)
    cos, sin = angles.cos(), angles.sin()
    if clockwise:
        sin = -sin
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : head_dim // 2], x[..., head_dim // 2:]
    new_a, new_b = a * cos - b * sin, a * sin + b * cos
    if pairing == "interleaved":
        return torch.stack([new_a, new_b], dim=-1).flatten(-2)
    return torch.cat([new_a, new_b], dim=-1)


def oracle_alibi_slopes(n_heads: int) -> torch.Tensor:
    """Press et al. 2022, section 3 and their reference code, float64.

    n a power of two: the geometric sequence starting at 2^(-8/n) with that ratio.
    Otherwise: the slopes of the closest power of two c below n, then every other slope of 2c.
    """
    def geometric(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (h + 1) for h in range(n)]

    closest = 1 << (n_heads.bit_length() - 1)
    extra = geometric(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(geometric(closest) + extra, dtype=torch.float64)


def oracle_alibi_bias(n_heads: int, seq_len: int, slopes: torch.Tensor | None = None) -> torch.Tensor:
    """[H, T, T] float64: -m_h (i - j) for j <= i, -inf for j > i."""
    m = oracle_alibi_slopes(n_heads) if slopes is None else slopes.double()
    bias = torch.empty(n_heads, seq_len, seq_len, dtype=torch.float64)
    for i in range(seq_len):
        for j in range(seq_len):
            bias[:, i, j] = -m * (i - j) if j <= i else MINUS_INF
    return bias
