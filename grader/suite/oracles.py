"""Float64 oracles written from the papers' formulas, independently of ``poslab.encodings``.

Because they do not share code with the reference, the suite checks the reference too (it must
score full marks). Shapes follow the spec: (B, H, T, D), or [..., T, D] where any leading axes work.
"""

from __future__ import annotations

import math

import torch

from grader.suite.tolerances import t5_edge

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


def oracle_sinusoidal(
    positions, d_model: int, base: float = 10000.0, layout: str = "interleaved", frequencies: torch.Tensor | None = None
) -> torch.Tensor:
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


def oracle_rope(
    x: torch.Tensor,
    positions,
    base: float = 10000.0,
    pairing: str = "interleaved",
    frequencies: torch.Tensor | None = None,
    clockwise: bool = False,
) -> torch.Tensor:
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
        a, b = x[..., : head_dim // 2], x[..., head_dim // 2 :]
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
    query = torch.arange(seq_len, dtype=torch.float64)[:, None]  # i
    key = torch.arange(seq_len, dtype=torch.float64)[None, :]  # j
    distance = query - key  # i - j
    bias = -m[:, None, None] * distance
    return torch.where(distance >= 0, bias, torch.full_like(bias, MINUS_INF))


def oracle_t5_bucket_bounds(
    relative_position,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    exact: int | None = None,
    clamp: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(lowest, highest) accepted T5 bucket of each ``key - query`` position, int64, same shape.

    Raffel et al. 2020 and Mesh TensorFlow's ``_relative_position_bucket``, in float64:
    bidirectional gives each direction num_buckets / 2 buckets (later keys, r > 0, the upper half);
    causal keeps all of them for earlier keys and sends later ones to 0. Half of a direction's
    buckets are exact; the rest are log-spaced up to ``max_distance`` and then clamped to the last.
    Where the log lands within ``tolerances.t5_edge`` of a bucket edge (float32 and float64 may
    round it either way), both neighbours are accepted. ``exact`` and ``clamp`` exist to describe
    known mistakes (the suite's diagnoses).
    """
    relative = torch.as_tensor(relative_position).long()
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    exact = per_direction // 2 if exact is None else exact
    if bidirectional:
        offset, distance = (relative > 0).long() * per_direction, relative.abs()
    else:
        offset, distance = torch.zeros_like(relative), (-relative).clamp(min=0)
    far = distance.double().clamp(min=max(exact, 1))
    span = per_direction - exact
    position = (far / exact).log() / math.log(max_distance / exact) * span
    edge = t5_edge(far, exact, max_distance, span)
    floor = position.floor()
    low = torch.where((position - floor < edge) & (floor > 0), floor - 1, floor).long() + exact
    high = torch.where(floor + 1 - position < edge, floor + 1, floor).long() + exact
    if clamp:
        low, high = low.clamp(max=per_direction - 1), high.clamp(max=per_direction - 1)
    near = distance < exact
    return offset + torch.where(near, distance, low), offset + torch.where(near, distance, high)


def decode_visibility(real: torch.Tensor, window: int | None = None) -> torch.Tensor:
    """[B, T, T] bool: query t sees key s when s <= t, t - s < window (if any) and key s is real.

    ``real`` [B, T] is False for padding. This is the full causal forward's mask that incremental
    decoding must reproduce at every step (Mistral's sliding window counts the token itself).
    """
    slots = torch.arange(real.shape[-1])
    offset = slots[:, None] - slots[None, :]  # t - s
    seen = offset >= 0
    if window is not None:
        seen = seen & (offset < window)
    return seen[None] & real[:, None, :].bool()


def oracle_decode(
    q, k, v, visible, query_positions, key_positions, pairing: str = "half", base: float = 10000.0
) -> torch.Tensor:
    """The full forward of one RoPE attention layer, float64 [B, H, T, D]:
    out[b, h, t] = sum_s softmax_s(<R(p_t) q_t, R(p_s) k_s> / sqrt(D)) v_s over the visible keys s.

    visible [B, T, T] (query t, key s); query_positions [B, T]; key_positions [B, T], or [B, T, T]
    for the position key s is rotated by when query t reads it (to describe known mistakes). A query
    that sees no key gets 0.
    """
    q, k, v = q.double(), k.double(), v.double()
    batch, heads, length, head_dim = q.shape
    scores = torch.empty(batch, heads, length, length, dtype=torch.float64)
    for b in range(batch):
        rotated_q = oracle_rope(q[b], query_positions[b], base, pairing)  # [H, T, D]
        if key_positions.dim() == 2:
            scores[b] = rotated_q @ oracle_rope(k[b], key_positions[b], base, pairing).transpose(-2, -1)
            continue
        for t in range(length):  # each query reads the keys at positions of its own
            rotated_k = oracle_rope(k[b], key_positions[b, t], base, pairing)
            scores[b, :, t] = torch.einsum("hd,hsd->hs", rotated_q[:, t], rotated_k)
    seen = visible[:, None].expand_as(scores)
    scores = (scores / math.sqrt(head_dim)).masked_fill(~seen, MINUS_INF)
    top = scores.amax(-1, keepdim=True).clamp(min=-1e300)  # a row with no visible key stays finite
    weights = (scores - top).exp()
    total = weights.sum(-1, keepdim=True)
    weights = torch.where(total > 0, weights / total.clamp(min=1e-300), torch.zeros_like(weights))
    return weights @ v
