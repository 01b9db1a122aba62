"""The error model: how far a correct output may sit from the float64 oracle, derived, not tuned.

Every numeric comparison of the suite takes its tolerance from here. Each bound follows a correct
computation step by step (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 2-3):

* one rounding of a value x to a dtype costs at most ``u |x| + eta`` (``u`` the dtype's unit
  roundoff, 2^-11 float16, 2^-24 float32, 2^-53 float64; ``eta`` half its smallest subnormal);
* a sum of n terms carries at most ``n u sum |terms|``; a dot product of length D at most
  ``(D + 2) u sum |a_d b_d|``; a product adds the relative errors of its factors;
* a function of a perturbed input moves by at most ``|f'| |dx|``: sin and cos by the angle's error,
  exp by its argument's error times its value, softmax weights by twice the largest logit error
  (relative), a rotation by the angle's error times the vector's size;
* libm's sin, cos, exp, log and pow are within about one ulp (one more ``u``);
* the oracle's own float64 error is added to the computation's (``2^-53`` in every ``u``).

Where a spec lets a correct implementation compute in float32 (frequencies and angles, RoPE for any
input dtype as Meta's LLaMA and Hugging Face do), the model uses float32 for that step whatever
the input dtype. The first-order bound is multiplied by ``SAFETY`` = 2. ``grader/README.md`` writes
the model out; ``tests/test_metamorphic.py`` grades a family of correct implementations with it.
"""

from __future__ import annotations

import math

import torch

SAFETY = 2.0
U64 = 2.0**-53


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half the distance from 1 to the next number of ``dtype``, plus the float64 oracle's own."""
    return float(torch.finfo(dtype).eps) / 2 + U64


def underflow(dtype: torch.dtype) -> float:
    """Half the smallest subnormal of ``dtype``: the absolute error of a rounding near 0."""
    info = torch.finfo(dtype)
    return float(info.smallest_normal) * float(info.eps) / 2


U32 = unit_roundoff(torch.float32)


def work_roundoff(dtype: torch.dtype) -> float:
    """The roundoff of the arithmetic a correct implementation may use for inputs of ``dtype``:
    float32 at least, whatever the input (Hugging Face's T5 takes its softmax in float32, Meta's
    LLaMA its RoPE), else the dtype's own."""
    return max(unit_roundoff(dtype), U32)


def _f64(values) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        return values.double()
    return torch.tensor(values, dtype=torch.float64)


# ---- frequencies and angles (sinusoidal, RoPE): w_i = base^(-2i/d) in float32 at worst


def frequency_relative_error(frequencies: torch.Tensor) -> torch.Tensor:
    """Relative error of each float32 w_i = base^(-2i/d), given in order of i: exp(-(2i/d) ln base) rounds
    the exponent three times (ln, the ratio, the product), and exp turns that absolute error into a
    relative one (times |ln w|); exp, the cast and a division add a few roundings (pow and 1/b^(2i/d)
    do better). A running product r^i (llama.cpp's theta *= theta_scale) rounds i products and
    multiplies the ratio's own error by i: 2i more."""
    index = torch.arange(frequencies.shape[-1], dtype=torch.float64)
    return (3 * frequencies.log().abs() + 3 + 2 * index) * U32


def angle_error(positions, frequencies: torch.Tensor) -> torch.Tensor:
    """[..., T, F] for positions [..., T]: error of the angle p * w in float32 (the frequency's error, one rounding of the product)."""
    w = frequencies.double()
    return _f64(positions).abs()[..., None] * w * (frequency_relative_error(w) + U32)


def sinusoid_pair_tolerance(positions, frequencies: torch.Tensor) -> torch.Tensor:
    """[T, F]: sin(p w) or cos(p w) in float32 off by the angle's error plus sin/cos (two roundings,
    |value| <= 1) and the float32 result (one)."""
    return SAFETY * (angle_error(positions, frequencies) + 3 * U32) + underflow(torch.float32)


def sinusoidal_tolerance(positions, d_model: int, base: float, layout: str) -> torch.Tensor:
    """[T, d] for the rows at ``positions`` of a float32 table in ``layout`` (interleaved or concatenated)."""
    frequencies = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pair = sinusoid_pair_tolerance(positions, frequencies)
    return join_pairs(pair, pair, "interleaved" if layout == "interleaved" else "half")


def unit_circle_tolerance(positions, d_model: int, base: float) -> torch.Tensor:
    """[T]: sin^2 + cos^2 summed over the d/2 pairs of a row, when sin and cos may each be off by
    their tolerance (each pair by 2 (|sin| + |cos|) <= 2 sqrt(2) times it, first order). The pair
    tolerance is linear in |p|, so the sum is too: a |p| + b."""
    frequencies = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    slope = float(sinusoid_pair_tolerance([1.0], frequencies).sum() - sinusoid_pair_tolerance([0.0], frequencies).sum())
    offset = float(sinusoid_pair_tolerance([0.0], frequencies).sum())
    return 2 * math.sqrt(2) * (slope * _f64(positions).abs() + offset)


# ---- attention: softmax(q k^T / sqrt(D) + bias) v


def softmax_relative_error(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """[..., Tq, 1]: the relative error of each weight of a row.

    A logit is a dot product of D terms, scaled: off by (D + 2) u sum_d |q_d k_d| / sqrt(D), plus
    u |s + b| for the bias. Softmax turns logit errors into relative weight errors of at most twice
    the row's largest; exp, the row sum of Tk terms and the division add (Tk + 4) u.
    """
    u = work_roundoff(q.dtype)
    d, keys = q.shape[-1], k.shape[-2]
    magnitude = q.double().abs() @ k.double().abs().transpose(-2, -1) / math.sqrt(d)
    logit_error = (d + 2) * u * magnitude
    if bias is not None:
        b = bias.double()
        logit_error = logit_error + u * (magnitude + torch.where(torch.isfinite(b), b.abs(), torch.zeros_like(b)))
    return 2 * logit_error.amax(-1, keepdim=True) + (keys + 4) * u


def attention_tolerances(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None, weights: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(out tolerance [..., Tq, Dv], weights tolerance [..., Tq, Tk]) around the oracle's ``weights``.

    weights: each off by its relative error times its size. out = weights v: the weights' errors
    times |v| (sum_j w_j |v_j|, i.e. weights @ |v|), plus Tk + 2 roundings of that sum.
    """
    u, eta = work_roundoff(q.dtype), underflow(torch.float32)
    relative = softmax_relative_error(q, k, bias)
    spread = weights.double() @ v.double().abs()
    weights_tol = SAFETY * (weights.double() * relative + 4 * eta)
    out_tol = SAFETY * ((relative + (k.shape[-2] + 2) * u) * spread + 4 * eta)
    return out_tol, weights_tol


def row_sum_tolerance(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """[..., Tq]: a row of weights sums to 1 within their relative error and Tk + 2 roundings of the sum."""
    relative = softmax_relative_error(q, k, bias)[..., 0]
    return SAFETY * (relative + (k.shape[-2] + 2) * work_roundoff(q.dtype))


# ---- RoPE: each pair (a, b) rotated by p * theta_i


def rope_tolerance(x: torch.Tensor, positions, base: float, pairing: str) -> torch.Tensor:
    """Per entry of x: the angle's error times the pair's size (|a| + |b|), plus cos and sin rounded
    to float32 or to x's dtype (Hugging Face casts them to x's dtype), four roundings of the
    products and the sum in float32 or x's dtype, and the result in x's dtype."""
    head_dim = x.shape[-1]
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    u_x = unit_roundoff(x.dtype)
    u_work = work_roundoff(x.dtype)
    per_unit = angle_error(positions, theta) + 2 * (u_work + U32) + 4 * u_work + u_x  # [..., T, D/2]
    a, b = pair_halves(x.double().abs(), pairing)
    size = a + b
    tolerance = SAFETY * size * per_unit + underflow(x.dtype)
    return join_pairs(tolerance, tolerance, pairing)


def pair_halves(x: torch.Tensor, pairing: str) -> tuple[torch.Tensor, torch.Tensor]:
    if pairing == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def join_pairs(a: torch.Tensor, b: torch.Tensor, pairing: str) -> torch.Tensor:
    if pairing == "interleaved":
        return torch.stack([a, b], dim=-1).flatten(-2)
    return torch.cat([a, b], dim=-1)


def norm_relative_tolerance(dtype: torch.dtype) -> float:
    """A rotation keeps |x| up to cos and sin's roundings (a wrong angle still rotates), the
    products and sum (float32 or the dtype) and the result's rounding."""
    u_x, u_work = unit_roundoff(dtype), work_roundoff(dtype)
    return SAFETY * (2 * (u_work + U32) + 4 * u_work + u_x)


# ---- sums of products of compared values


def dot_tolerance(a: torch.Tensor, a_tol: torch.Tensor, b: torch.Tensor, b_tol: torch.Tensor) -> torch.Tensor:
    """<a, b> over the last axis when each entry of a and b may be off by a_tol and b_tol (the
    products are taken in float64: their own rounding is negligible)."""
    return (a_tol * b.double().abs() + a.double().abs() * b_tol + a_tol * b_tol).sum(-1)


def gram_tolerance(table: torch.Tensor, table_tol: torch.Tensor) -> torch.Tensor:
    """[T, T]: how far each <row_p, row_q> may be off when every entry may be off by table_tol."""
    magnitude = table.double().abs()
    return table_tol @ magnitude.T + magnitude @ table_tol.T + table_tol @ table_tol.T


# ---- exact additions and scalings (learned, ALiBi)


def sum_tolerance(x: torch.Tensor, y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x + y computed in ``dtype``: one rounding of the sum."""
    return SAFETY * unit_roundoff(dtype) * (x.double().abs() + y.double().abs()) + underflow(dtype)


def alibi_slope_relative_tolerance(n_heads: int) -> torch.Tensor:
    """[n_heads]: 2^(-8(h+1)/n) in float32 rounds its exponent (times ln 2 |exponent| <= 8 ln 2), the
    power and the cast; the geometric sequence start^(h+1) (Press et al.'s code, BLOOM's pow or a
    cumprod) multiplies h + 1 rounded factors."""
    heads = torch.arange(n_heads, dtype=torch.float64)
    return SAFETY * (heads + 1 + 8 * math.log(2) + 3) * U32


def alibi_bias_tolerance(slopes: torch.Tensor, seq_len: int) -> torch.Tensor:
    """[H, T, T]: -m (i - j) in float32, as one product (u m |i - j|) or as m j - m i (each product
    rounded: u m (i + j)); exactly 0 on the diagonal either way. The bias may compute its slopes
    apart from ``alibi_slopes`` (both within the slopes' tolerance of the exact ones): twice that,
    times |i - j|."""
    i = torch.arange(seq_len, dtype=torch.float64)
    reach = (i[:, None] + i[None, :])[None]
    distance = (i[:, None] - i[None, :]).abs()[None]
    m = slopes.double().abs()[:, None, None]
    slope_error = 2 * alibi_slope_relative_tolerance(len(slopes))[:, None, None]
    return SAFETY * U32 * m * reach + slope_error * m * distance


# ---- T5: where a float32 logarithm may round a bucket either way


def t5_edge(distance: torch.Tensor, exact: int, max_distance: int, span: int) -> torch.Tensor:
    """How close to a bucket edge ``E + ln(n / E) / ln(M / E) * (N - E)`` may land for float32 and
    float64 (or ln(n) - ln(E)) to disagree: the log's absolute error, u (|ln n| + |ln E| + 3), scaled
    by (N - E) / ln(M / E), and three roundings of the result."""
    distance = distance.double()
    ratio = math.log(max_distance / exact)
    position = (distance / exact).log() / ratio * span
    log_error = (distance.log().abs() + abs(math.log(exact)) + 3) * U32
    return SAFETY * (log_error * span / abs(ratio) + 3 * U32 * position.abs())


def reweighted_tolerance(q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor, plain: torch.Tensor) -> torch.Tensor:
    """softmax(s + b) built from the computed softmax(s) (``plain``) times exp(b), renormalised by
    S = sum_j plain_j exp(b_j): the plain weights carry their relative error twice (the
    renormalisation), those with the bias once, and each plain weight's underflow (eta, a float32
    weight far below the row's largest is 0 or subnormal) comes back multiplied by exp(b_j) / S."""
    relative = 2 * softmax_relative_error(q, k) + softmax_relative_error(q, k, bias)
    scale = bias.double().exp()
    raw = plain.double() * scale
    total = raw.sum(-1, keepdim=True)
    expected = raw / total
    floor = 4 * underflow(torch.float32) * scale / total
    return SAFETY * (expected * relative + floor)


def matmul_tolerance(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """weights @ v: Tk + 2 roundings of sum_j |w_j| |v_j|."""
    u = work_roundoff(weights.dtype)
    return SAFETY * (weights.shape[-1] + 2) * u * (weights.double().abs() @ v.double().abs()) + underflow(torch.float32)


# ---- decode: one RoPE attention layer with a KV cache, composed from the pieces above


def pair_norms(x: torch.Tensor, pairing: str) -> torch.Tensor:
    """[..., D/2]: the length r of each feature pair, which every rotation keeps."""
    a, b = pair_halves(x.double(), pairing)
    return (a * a + b * b).sqrt()


def decode_tolerance(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    positions: torch.Tensor,
    visible: torch.Tensor,
    base: float,
    pairing: str,
) -> torch.Tensor:
    """[B, H, T, D]: how far a correct decoder's out may sit from the float64 full forward.

    A pair of q_t (length r) turned by a wrong angle moves by r times the angle's error; the product
    of two rotated pairs, r_q r_k cos(angle between them), by r_q r_k times both angles' errors
    (``angle_error`` at p_t and p_s) plus each side's rotation roundings (as ``norm_relative_tolerance``).
    The score of query t and key s adds the dot product's (D + 2) roundings and is divided by sqrt(D);
    then softmax and out as in attention: twice the largest error of a visible score, (T + 4)
    roundings, times |v| (its largest value over the keys, per feature). positions [B, T]; visible
    [B, T, T] (query t, key s).
    """
    u = work_roundoff(q.dtype)
    head_dim, length = q.shape[-1], q.shape[-2]
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = angle_error(positions[:, None], theta)  # [B, 1, T, D/2]
    r_q, r_k = pair_norms(q, pairing), pair_norms(k, pairing)
    rounding = 2 * norm_relative_tolerance(q.dtype) / SAFETY + (head_dim + 2) * u
    score = (
        (r_q * angles) @ r_k.transpose(-2, -1)
        + r_q @ (r_k * angles).transpose(-2, -1)
        + rounding * r_q @ r_k.transpose(-2, -1)
    ) / math.sqrt(head_dim)  # [B, H, T, T]
    worst = torch.where(visible[:, None], score, torch.zeros_like(score)).amax(-1, keepdim=True)
    relative = 2 * worst + (2 * length + 6) * u  # the weights' (T + 4) and out's sum (T + 2)
    return SAFETY * (relative * v.double().abs().amax(-2, keepdim=True) + 4 * underflow(torch.float32))


def cached_key_tolerance(k: torch.Tensor, positions: torch.Tensor, base: float, pairing: str) -> torch.Tensor:
    """[B, H, S, D]: a cached key rotated by its position [B, S], entry by entry, as ``rope_tolerance``."""
    return rope_tolerance(k, positions[:, None], base, pairing)


def length_tolerance(k: torch.Tensor) -> torch.Tensor:
    """[..., 1]: a rotation keeps a key's length up to its roundings (whatever the angle)."""
    return norm_relative_tolerance(k.dtype) * k.double().norm(dim=-1, keepdim=True) + underflow(k.dtype)
