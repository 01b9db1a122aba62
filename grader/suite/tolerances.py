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
# First order, worst case, u = eps:
# * an angle p * theta (theta <= 1) rounds once, and theta carries a rounding of its own: p u; cos and
#   sin add about 2u. A rotation then moves a vector x by at most |x| (angle error + 3u) (products, sums).
# * a score <q', k'> / sqrt(D) is off by (|q| |dk| + |k| |dq|) / sqrt(D) from the rotations (Cauchy-Schwarz)
#   plus D u |q| |k| / sqrt(D) from its sum of D products.
# * out_t = sum_s w_s v_s moves by sum_s w_s |v_s - out_t| |ds| <= 2 max|v| max|ds| with the scores, and by
#   (n_keys + 4) u max|v| from the exponentials, the normalisation and the sum over the keys.
# DECODE_SAFETY covers what first order leaves out. tests/test_decode_exercise.py measures correct
# decoders against it and shows the known mistakes far outside it.
DECODE_SAFETY = 2.0


def _working_eps(dtype: torch.dtype) -> float:
    return max(torch.finfo(dtype).eps, torch.finfo(torch.float32).eps)


def rotation_error(dtype: torch.dtype, positions) -> torch.Tensor:
    """The relative error |R~x - Rx| / |x| of a rotation by a float32 angle, per position."""
    eps = _working_eps(dtype)
    return eps * (torch.as_tensor(positions, dtype=torch.float64).abs() + 5.0)


def decode_tolerance(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, positions) -> torch.Tensor:
    """Per query [B, H, T, 1]: how far a correct decode's out may sit from the float64 oracle.

    q, k, v [B, H, T, D] as given to the student (their dtype sets eps); positions [B, T] of the tokens.
    """
    eps = _working_eps(q.dtype)
    head_dim, n_keys = q.shape[-1], k.shape[-2]
    positions = torch.as_tensor(positions)
    q_norm = q.double().norm(dim=-1)  # [B, H, T]
    k_norm = k.double().norm(dim=-1).amax(-1, keepdim=True)  # [B, H, 1]
    v_max = v.double().abs().amax((-2, -1))[..., None]  # [B, H, 1]
    angles = rotation_error(q.dtype, positions)[:, None, :]  # [B, 1, T]: the query's
    worst_key = angles.amax(-1, keepdim=True)
    score = q_norm * k_norm * (angles + worst_key + head_dim * eps) / head_dim ** 0.5
    return (DECODE_SAFETY * v_max * (2 * score + (n_keys + 4) * eps))[..., None]


def cached_key_tolerance(k: torch.Tensor, positions) -> torch.Tensor:
    """Per cached key [B, H, S, 1]: how far a correct rotated key may sit from the float64 oracle."""
    angles = rotation_error(k.dtype, positions)[:, None, :, None]  # [B, 1, S, 1]
    return DECODE_SAFETY * k.double().norm(dim=-1, keepdim=True) * angles
