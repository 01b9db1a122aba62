"""How far a correct float32/float16 output may sit from the float64 oracle.

Measured on correct implementations against the oracles: float64 angles; float32 frequencies from
exp/log (the PyTorch tutorial's recipe); float32 powers; division by base^(2i/d); for RoPE also the
complex (Meta's LLaMA, interleaved pairing) and rotate-half (Hugging Face, half pairing) styles.
The error of a float32 angle p * w grows like p * w * eps32; what we allow is a constant plus a
slope in the position, about four times the worst measured, and far below the smallest effect of a
known bug at the same positions. ``tests/test_suite_tolerances.py`` re-measures them and shows the
known bugs sit far above.
"""

from __future__ import annotations

import torch

SINUSOIDAL_ATOL = 1e-5  # worst measured at positions <= 10: 7.2e-7 (rounding of sin, cos, powers)
SINUSOIDAL_PER_POSITION = 2.5e-7  # worst measured: 6.7e-8 per position (float32 division by base^(2i/d))


def sinusoidal_tolerance(positions) -> torch.Tensor:
    """Per-row tolerance [len(positions), 1] for float32 tables."""
    pos = torch.as_tensor(positions, dtype=torch.float64).abs()
    return (SINUSOIDAL_ATOL + SINUSOIDAL_PER_POSITION * pos)[:, None]


ROPE_ATOL = 2.5e-6  # per unit of max |x|; worst measured at positions <= 10: 1.8e-7
ROPE_PER_POSITION = 1e-7  # per unit of max |x|; worst measured: 2.7e-8 per position (exp/log frequencies)


def rope_tolerance(positions, x_abs_max: float) -> torch.Tensor:
    """Per-row tolerance [T, 1] for float32 RoPE: the angle error times the size of the pair."""
    pos = torch.as_tensor(positions, dtype=torch.float64).abs()
    return ((ROPE_ATOL + ROPE_PER_POSITION * pos) * x_abs_max)[:, None]


# float16: one rounding of the input is shared with the oracle (it sees the float16 values), the
# output is rounded once more (half an ulp: 2^-11 relative) and a float32 rotation adds little.
# Unit: 2^-10 of the largest |x|. Measured worst over correct implementations (positions 1000 to
# 4100, D up to 128): 1.02 units, when cos/sin are rounded to float16 before the products; we allow 4.
FLOAT16_ULPS = 4.0


def float16_tolerance(x_abs_max: float) -> float:
    return FLOAT16_ULPS * 2.0 ** -10 * x_abs_max


# ---- decode: one RoPE attention layer with a KV cache, an error model rather than measured constants.
# The least precise correct decoder computes in float32, angles included (Hugging Face's rotary
# embedding does, even for float64 inputs), so eps is float32's for float32 and float64 inputs alike.
# First order, worst case, eps the machine epsilon:
# * pair i turns by p * theta_i, theta_i = base^(-2i/D). In float32 the product rounds (eps/2 of it),
#   theta_i carries a rounding of its own (eps/2 from a power) or (x/2) eps from exp(-x), x = ln(1/theta_i);
#   cos and sin add about 2 eps: angle error a_i(p) = eps (p theta_i (1 + x/2) + 2). A pair of length r moves
#   by r a_i.
# * a score <q', k'> / sqrt(D) moves by sum_i |q_i| |k_i| (a_i(p_t) + a_i(p_s)) / sqrt(D) over the pairs i,
#   which is at most |q| |k| max_i(...) (Cauchy-Schwarz) and at most 2 max|q| max|k| sum_i(...) (a pair's
#   length is at most sqrt(2) max|entry|): the smaller of the two. Its sum of D products adds D eps |q| |k|.
# * out_t = sum_s w_s v_s moves by sum_s w_s |v_s - out_t| |ds| <= 2 max|v| max|ds| with the scores, and by
#   (n_keys + 4) eps max|v| from the exponentials, the normalisation and the sum over the keys.
# DECODE_SAFETY covers what first order leaves out. tests/test_decode_exercise.py measures correct
# decoders in several styles against it and shows the known mistakes far outside it.
DECODE_SAFETY = 2.0


def _working_eps(dtype: torch.dtype) -> float:
    return max(torch.finfo(dtype).eps, torch.finfo(torch.float32).eps)


def angle_errors(dtype: torch.dtype, positions, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """a_i(p) [..., D/2]: how far a correct implementation's angle of pair i may be off at position p."""
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    per_position = theta * (1 - 0.5 * theta.log())  # theta (1 + x/2), x = ln(1/theta)
    p = torch.as_tensor(positions, dtype=torch.float64).abs()[..., None]
    return _working_eps(dtype) * (p * per_position + 2)


def decode_tolerance(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions,
                     base: float = 10000.0) -> torch.Tensor:
    """Per query [B, H, T, 1]: how far a correct decode's out may sit from the float64 oracle.

    q, k, v [B, H, T, D] as given to the student (their dtype sets eps); positions [B, T] of the tokens.
    """
    eps = _working_eps(q.dtype)
    head_dim, n_keys = q.shape[-1], k.shape[-2]
    q, k, v = q.double(), k.double(), v.double()
    angles = angle_errors(q.dtype, positions, head_dim, base)  # [B, T, D/2]
    both = angles + angles.amax(1, keepdim=True)  # the query's and the worst key's, [B, T, D/2]
    q_norm, k_norm = q.norm(dim=-1), k.norm(dim=-1).amax(-1, keepdim=True)  # [B, H, T], [B, H, 1]
    cauchy_schwarz = q_norm * k_norm * both.amax(-1)[:, None]
    pair_by_pair = 2 * q.abs().amax(-1) * k.abs().amax((-2, -1))[..., None] * both.sum(-1)[:, None]
    score = (torch.minimum(cauchy_schwarz, pair_by_pair) + head_dim * eps * q_norm * k_norm) / head_dim ** 0.5
    v_max = v.abs().amax((-2, -1))[..., None]  # [B, H, 1]
    return (DECODE_SAFETY * v_max * (2 * score + (n_keys + 4) * eps))[..., None]


def cached_key_tolerance(k: torch.Tensor, positions, base: float = 10000.0) -> torch.Tensor:
    """Per cached key [B, H, S, 1]: how far a correct rotated key may sit from the float64 oracle."""
    worst_pair = angle_errors(k.dtype, positions, k.shape[-1], base).amax(-1)[:, None, :, None]  # [B, 1, S, 1]
    return DECODE_SAFETY * k.double().norm(dim=-1, keepdim=True) * worst_pair
